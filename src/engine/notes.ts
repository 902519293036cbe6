import { formatTokens } from "./placeholders.ts"
import { type Reason, reasonName } from "./reasons.ts"

/** One pruned call, as reported to the user. */
export interface PrunedCall {
  readonly id: number
  readonly tool: string
  readonly keyParameter: string
  readonly reason: Reason
  readonly tokens: number
  readonly distillation?: string | undefined
  /** A fold (src/engine/fold.ts): the calls of its turn it stands for; `id` is the first one's. */
  readonly folded?: number | undefined
}

export type NotificationMode = "off" | "minimal" | "detailed"

/**
 * The note shown after an agent run (or a command) that pruned something: one line with the tokens saved now and
 * in the session, then, in detailed mode, one line per call with paths relative to the project.
 */
export const formatNote = (
  calls: ReadonlyArray<PrunedCall>,
  options: { readonly mode: NotificationMode; readonly sessionTokens: number; readonly showDistillation: boolean }
): string | undefined => {
  if (options.mode === "off" || calls.length === 0) return undefined
  const tokens = calls.reduce((sum, call) => sum + call.tokens, 0)
  const reasons = new Map<Reason, number>()
  for (const call of calls) reasons.set(call.reason, (reasons.get(call.reason) ?? 0) + 1)
  const why = [...reasons].map(([reason, count]) => `${count} ${reasonName(reason)}`).join(", ")
  const plural = calls.length === 1 ? "call" : "calls"
  const head = `Context pruned: ${formatTokens(tokens)} tokens from ${calls.length} ${plural} (${why}); ` +
    `${formatTokens(options.sessionTokens)} saved in this session.`
  if (options.mode === "minimal") return head
  const lines = [head]
  const id = idColumn(calls.map((call) => call.id))
  for (const call of calls) {
    const what = call.keyParameter === "" ? call.tool : `${call.tool} ${call.keyParameter}`
    lines.push(`  ${id(call.id)}  ${what}  ${reasonName(call.reason)}, ${formatTokens(call.tokens)}`)
    if (options.showDistillation && call.distillation !== undefined) {
      lines.push(`${" ".repeat(id(call.id).length + 5)}↳ ${call.distillation}`)
    }
  }
  return lines.join("\n")
}

/** IDs right-aligned to the widest of `ids`, so that what follows them starts in one column (`  9` over ` 10`). */
export const idColumn = (ids: ReadonlyArray<number>): (id: number) => string => {
  const width = Math.max(0, ...ids.map((id) => String(id).length))
  return (id) => String(id).padStart(width)
}

/** Starts every note, so a note cannot be taken for a message the user typed (the terminal UI shows both alike). */
const notePrefix = "DCP · "

/**
 * Columns a note line may take. OpenCode's terminal UI shows a note as a user message, as plain text (no Markdown),
 * and wraps a longer line at the message's edge with its indentation lost. Measured with OpenCode 1.18.33: the text
 * of a message is 73 columns wide in an 80-column terminal, 113 in a 120-column one, and 72 at 121 columns, where
 * the sidebar opens.
 */
const noteWidth = 72

/** A word no line can hold (a long path) starts on the line before when at least this much of it fits there. */
const minimumPiece = 12

/**
 * Where a wrapped line's continuation starts: under the value of an indented `label: value` or of a column layout
 * (`label  value`), else two columns in from the line's own indentation; prose at the left edge stays there.
 * Indentation beyond `maxIndent` is not kept: half a line is always left for the text.
 */
const hangingIndent = (line: string, maxIndent: number): number => {
  const indent = line.length - line.trimStart().length
  const column = /^\s*\S(?:.*?\S)?\s{2,}(?=\S)/.exec(line)?.[0].length
  const label = /^\s+[^\s:][^:]{0,24}:\s+(?=\S)/.exec(line)?.[0].length
  const hang = column !== undefined && column <= maxIndent ? column : label ?? (indent === 0 ? 0 : indent + 2)
  return Math.min(hang, maxIndent)
}

/** Word-wraps one line to `width` columns; a word longer than a whole line (a path) is cut where the line ends. */
const wrapLine = (line: string, width: number): Array<string> => {
  if ([...line].length <= width) return [line]
  const maxIndent = Math.floor(width / 2)
  const hang = " ".repeat(hangingIndent(line, maxIndent))
  const body = line.trimStart()
  // Words with the spaces before each, so that column gaps inside a line survive.
  const words = [...body.matchAll(/(\s*)(\S+)/g)].map((match) => ({ gap: match[1]!, word: [...match[2]!] }))
  const out: Array<string> = []
  let current = line.slice(0, Math.min(line.length - body.length, maxIndent))
  const room = () => width - [...current].length
  for (const [i, { gap, word }] of words.entries()) {
    let rest = word
    if (i > 0) {
      const here = gap.length + rest.length <= room() ||
        (rest.length > width - hang.length && room() - gap.length >= minimumPiece)
      if (here) {
        current += gap
      } else {
        out.push(current)
        current = hang
      }
    }
    while (rest.length > room()) {
      const fits = room()
      current += rest.slice(0, fits).join("")
      rest = rest.slice(fits)
      out.push(current)
      current = hang
    }
    current += rest.join("")
  }
  out.push(current)
  return out
}

/**
 * Every line of `text` kept within `width` columns, a wrapped line continuing under its value or column (see
 * `hangingIndent`): for notes, and for the terminal UI's panel and dialog, whose own wrapping loses indentation.
 */
export const wrapText = (text: string, width: number): string =>
  text.split("\n").flatMap((line) => wrapLine(line, width)).join("\n")

/** Every line of `text` kept within `noteWidth` columns. */
const wrapNote = (text: string): string => wrapText(text, noteWidth)

/** A note as it is sent: the plugin's prefix, then every line kept within `noteWidth` columns. */
export const layoutNote = (text: string): string => wrapNote(`${notePrefix}${text}`)
