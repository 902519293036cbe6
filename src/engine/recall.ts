import { Predicate } from "effect"
import { partsOf } from "../host/messages.ts"
import { diagnosticsOf } from "./diagnostics.ts"
import { contentInputs, prunesContent } from "./strategies/supersedeWrites.ts"

/** The tool parts of a stored session, by callID: where recall finds what was sent before pruning. */
export const storedToolParts = (messages: ReadonlyArray<unknown>): Map<string, Record<string, unknown>> => {
  const parts = new Map<string, Record<string, unknown>>()
  for (const message of messages) {
    for (const part of partsOf(message)) {
      if (Predicate.isObject(part) && part.type === "tool" && typeof part.callID === "string")
        parts.set(part.callID, part)
    }
  }
  return parts
}

/**
 * The original content a prune removed from a stored tool part: the written content of a superseded write or an old
 * change (with the language server's errors its output reported), the string inputs of a failed call, the output
 * otherwise.
 */
export const originalContent = (part: Record<string, unknown>, reason: string): string => {
  const state = Predicate.isObject(part.state) ? part.state : {}
  const input = Predicate.isObject(state.input) ? state.input : {}
  const tool = typeof part.tool === "string" ? part.tool : ""
  const keys = prunesContent(tool, reason)
    ? (contentInputs[tool] ?? [])
    : state.status === "error"
    ? Object.keys(input).filter((key) => typeof input[key] === "string")
    : tool === "question"
    ? ["questions"]
    : []
  if (keys.length === 0) return typeof state.output === "string" ? state.output : JSON.stringify(state.output ?? "")
  const errors = prunesContent(tool, reason) && typeof state.output === "string"
    ? diagnosticsOf(state.output)
    : undefined
  return [
    ...keys
      .filter((key) => key in input)
      .map((key) => `${key}:\n${typeof input[key] === "string" ? input[key] : JSON.stringify(input[key], null, 2)}`),
    ...(errors === undefined ? [] : [errors])
  ].join("\n\n")
}

export const formatRecall = (
  entries: ReadonlyArray<{ readonly id: number; readonly label: string; readonly content: string | undefined }>
): string =>
  entries.map(({ content, id, label }) =>
    content === undefined
      ? `id ${id} (${label}): the original is no longer in the stored session (compacted or deleted).`
      : `Original content of id ${id} (${label}), as stored:\n${content}`
  ).join("\n\n")

/** A pruned or folded call's original content, for `recall({ query })` to search. */
export interface Searched {
  readonly id: number
  readonly label: string
  readonly content: string
}

/** The most lines a search returns, and the most characters of one: the model reads (and pays for) every one. */
const maxFoundLines = 20
const maxFoundLength = 200

/** The words of a query, lower-cased, each once. */
const wordsOf = (query: string): Array<string> => [...new Set(query.toLowerCase().split(/\s+/).filter(Boolean))]

interface Found {
  readonly id: number
  readonly label: string
  readonly line: string
  readonly index: number
  /** The line holds the query as written (its words in that order, spaced alike), not only each word somewhere. */
  readonly exact: boolean
}

/**
 * `recall({ query })`: the lines of pruned and folded outputs that hold every word of the query (case-insensitive),
 * each under the ID that recalls its whole output. Lines holding the query as written come first, then newer
 * outputs before older ones; a line several outputs hold is shown once, under the newest. At most `maxFoundLines`,
 * each cut to `maxFoundLength` characters; the reply says how many more matched, or, when none did, which words are
 * in no searched output at all.
 */
export const searchPruned = (query: string, searched: ReadonlyArray<Searched>): string => {
  const words = wordsOf(query)
  const phrase = query.trim().toLowerCase()
  const newestFirst = [...searched].sort((a, b) => b.id - a.id)
  const found: Array<Found> = []
  const seen = new Set<string>()
  const wordsSeen = new Set<string>()
  for (const { content, id, label } of newestFirst) {
    const lines = content.split("\n")
    for (let index = 0; index < lines.length; index++) {
      const line = lines[index]!.trimEnd()
      const lower = line.toLowerCase()
      let all = true
      for (const word of words) {
        if (lower.includes(word)) wordsSeen.add(word)
        else all = false
      }
      if (!all || seen.has(line.trim())) continue
      seen.add(line.trim())
      found.push({ id, label, line, index, exact: words.length > 1 && lower.includes(phrase) })
    }
  }
  const outputs = `${searched.length} pruned or folded output${searched.length === 1 ? "" : "s"}`
  if (found.length === 0) {
    const missing = words.filter((word) => !wordsSeen.has(word))
    const absent = missing.length === 0
      ? "each word is in one of them, but no line holds them all: try fewer words."
      : `${missing.map((word) => JSON.stringify(word)).join(", ")} ${
        missing.length === 1 ? "is" : "are"
      } in none of them.`
    return `No line of the ${outputs} matches ${
      JSON.stringify(query.trim())
    }: ${absent} What the conversation shows in full is not searched.`
  }
  // Stable: within each rank, newest output first and in line order, as found.
  const ranked = [...found].sort((a, b) => Number(b.exact) - Number(a.exact))
  const shown = ranked.slice(0, maxFoundLines)
  const groups = new Map<number, Array<Found>>()
  for (const match of shown) groups.set(match.id, [...(groups.get(match.id) ?? []), match])
  const left = found.length - shown.length
  const leftOutputs = new Set(ranked.slice(maxFoundLines).map((match) => match.id)).size
  const head = `${found.length} line${found.length === 1 ? "" : "s"} of the ${outputs} match ${
    JSON.stringify(query.trim())
  }${left > 0 ? `; the first ${shown.length} shown` : ""}. recall({ ids }) returns an output whole.`
  const body = [...groups.values()].map((matches) =>
    [
      `id ${matches[0]!.id} (${matches[0]!.label}):`,
      ...matches.sort((a, b) => a.index - b.index).map(({ line }) =>
        `  ${line.length > maxFoundLength ? `${line.slice(0, maxFoundLength - 1)}…` : line}`
      )
    ].join("\n")
  )
  const tail = left > 0
    ? [
      `…and ${left} more matching line${left === 1 ? "" : "s"} in ${leftOutputs} output${
        leftOutputs === 1 ? "" : "s"
      } not shown: add words to the query to narrow it.`
    ]
    : []
  return [head, ...body, ...tail].join("\n")
}
