import { formatTokens } from "./placeholders.ts"
import { type Reason, reasonName } from "./reasons.ts"

/** One pruned call, as reported to the user; or one fold of an old turn (`folded`). */
export interface PrunedCall {
  readonly id: number
  readonly tool: string
  readonly keyParameter: string
  readonly reason: Reason
  readonly tokens: number
  readonly distillation?: string | undefined
  /**
   * A fold (src/engine/fold.ts): the calls of its turn it stands for, oldest first, each with its share of the fold's
   * tokens (`foldShares`); `id`, `tool` and `keyParameter` are the first one's, `tokens` the whole fold's.
   */
  readonly folded?: ReadonlyArray<FoldedCall> | undefined
}

/** A call of a fold. */
interface FoldedCall {
  readonly id: number
  readonly tool: string
  readonly keyParameter: string
  /** Its share of the fold's tokens. */
  readonly tokens: number
  /** A prune of its own keeps its content out too: it is counted under that prune's reason, not as folded. */
  readonly pruned: boolean
}

export type NotificationMode = "off" | "minimal" | "detailed"

/**
 * The calls prunes and folds take out, each counted once, by reason: a call a prune of its own takes out counts under
 * that prune's reason, a call only its fold takes out as "folded". Their counts add up to the calls counted, and
 * their tokens (a fold's all under "folded") to the tokens.
 */
export const tallyByReason = (calls: ReadonlyArray<PrunedCall>): { calls: number; byReason: Map<Reason, number> } => {
  const byReason = new Map<Reason, number>()
  let count = 0
  const add = (reason: Reason, n: number) => {
    if (n === 0) return
    byReason.set(reason, (byReason.get(reason) ?? 0) + n)
    count += n
  }
  for (const call of calls) {
    if (call.folded === undefined) add(call.reason, 1)
    else add(call.reason, call.folded.filter((member) => !member.pruned).length)
  }
  return { calls: count, byReason }
}

/** IDs as ranges, ascending: `1-4, 7`. */
export const idRanges = (ids: ReadonlyArray<number>): string => {
  const sorted = [...new Set(ids)].sort((a, b) => a - b)
  const ranges: Array<string> = []
  for (let i = 0; i < sorted.length; i++) {
    let j = i
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++
    ranges.push(j === i ? `${sorted[i]}` : j === i + 1 ? `${sorted[i]}, ${sorted[j]}` : `${sorted[i]}-${sorted[j]}`)
    i = j
  }
  return ranges.join(", ")
}

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`

/**
 * The note shown after an agent run (or a command) that pruned something: one line with the tokens saved now and
 * in the session, then, in detailed mode, one line per call with paths relative to the project. A fold counts the
 * calls it alone takes out (`tallyByReason`), names each of them, and says which calls its digest stands for.
 */
export const formatNote = (
  calls: ReadonlyArray<PrunedCall>,
  options: { readonly mode: NotificationMode; readonly sessionTokens: number; readonly showDistillation: boolean }
): string | undefined => {
  if (options.mode === "off" || calls.length === 0) return undefined
  const tokens = calls.reduce((sum, call) => sum + call.tokens, 0)
  const { byReason, calls: count } = tallyByReason(calls)
  const folds = calls.filter((call) => call.folded !== undefined)
  const why = [...byReason].map(([reason, n]) => `${n} ${reasonName(reason)}`).join(", ")
  const head = `Context pruned: ${formatTokens(tokens)} tokens` +
    (count === 0 ? "" : ` from ${plural(count, "call")} (${why})`) +
    (folds.length === 0 ? "" : `, ${plural(folds.length, "old turn")} folded`) +
    `; ${formatTokens(options.sessionTokens)} saved in this session.`
  if (options.mode === "minimal") return head
  const rows = new Map<number, { what: string; reasons: Array<string>; tokens: number; distillation?: string }>()
  for (const call of calls) {
    if (call.folded !== undefined) continue
    const what = call.keyParameter === "" ? call.tool : `${call.tool} ${call.keyParameter}`
    rows.set(call.id, {
      what,
      reasons: [reasonName(call.reason)],
      tokens: call.tokens,
      ...(call.distillation === undefined ? {} : { distillation: call.distillation })
    })
  }
  for (const fold of folds) {
    for (const member of fold.folded!) {
      const known = rows.get(member.id)
      if (known !== undefined) {
        known.reasons.push(reasonName("fold"))
      } else if (!member.pruned) {
        const what = member.keyParameter === "" ? member.tool : `${member.tool} ${member.keyParameter}`
        rows.set(member.id, { what, reasons: [reasonName("fold")], tokens: member.tokens })
      }
    }
  }
  const lines = [head]
  const id = idColumn([...rows.keys()])
  for (const [callId, row] of [...rows].sort((a, b) => a[0] - b[0])) {
    lines.push(`  ${id(callId)}  ${row.what}  ${row.reasons.join(", ")}, ${formatTokens(row.tokens)}`)
    if (options.showDistillation && row.distillation !== undefined) {
      lines.push(`${" ".repeat(id(callId).length + 5)}↳ ${row.distillation}`)
    }
  }
  for (const fold of folds) {
    lines.push(
      `  old turn folded: ${idRanges(fold.folded!.map((member) => member.id))} sent as one digest, ${
        formatTokens(fold.tokens)
      } of the tokens`
    )
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
