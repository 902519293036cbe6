import type { ToolCall } from "./calls.ts"
import type { CopyOf } from "../state/schema.ts"
import type { Reason } from "./reasons.ts"
import { minInputTokens } from "./strategies/purgeErrors.ts"
import { contentInputs, prunesContent } from "./strategies/supersedeWrites.ts"
import { safeJson } from "../data/boundedJson.ts"

/**
 * What a prune replaces in a call: its output, or some of its inputs (a file change's content inputs, and then also
 * the language server's errors in its output, `diagnostics`, which are as old as the content).
 */
export type Target =
  | { readonly kind: "output" }
  | { readonly kind: "inputs"; readonly keys: ReadonlyArray<string>; readonly diagnostics?: true }

/**
 * The part of a call a prune for `reason` replaces, or undefined when there is nothing worth replacing. The call's
 * existence, tool, ID and remaining fields always stay, so the model still sees that the call happened.
 */
export const targetOf = (call: ToolCall, reason: Reason): Target | undefined => {
  if (prunesContent(call.tool, reason)) {
    const keys = (contentInputs[call.tool] ?? []).filter((key) => key in call.input)
    if (call.diagnosticsTokens > 0) return { kind: "inputs", keys, diagnostics: true }
    return keys.length > 0 ? { kind: "inputs", keys } : undefined
  }
  if (call.status === "error") {
    const keys = Object.keys(call.inputTokens).filter((key) => (call.inputTokens[key] ?? 0) >= minInputTokens)
    return keys.length > 0 ? { kind: "inputs", keys } : undefined
  }
  if (call.status !== "completed") return undefined
  if (call.tool === "question") return "questions" in call.input ? { kind: "inputs", keys: ["questions"] } : undefined
  return call.hasTextOutput && !call.compacted ? { kind: "output" } : undefined
}

/** Tokens the target holds in the original call: what a prune takes out of the request. */
export const targetTokens = (call: ToolCall, target: Target): number =>
  target.kind === "output"
    ? call.outputTokens
    : target.keys.reduce(
      (sum, key) => sum + (call.inputTokens[key] ?? approximateTokens(call.input[key])),
      target.diagnostics === true ? call.diagnosticsTokens : 0
    )

const approximateTokens = (value: unknown): number => value === undefined ? 0 : Math.ceil(safeJson(value).length / 4)

/** `~850`, `~4.2k`, `~12k`, `~1.3M`. */
export const formatTokens = (tokens: number): string => {
  if (tokens < 1000) return `~${tokens}`
  if (tokens < 10_000) return `~${(tokens / 1000).toFixed(1).replace(/\.0$/, "")}k`
  // Below 999.5k, so rounding never shows "~1000k".
  if (tokens < 999_500) return `~${Math.round(tokens / 1000)}k`
  return `~${(tokens / 1_000_000).toFixed(1).replace(/\.0$/, "")}M`
}

/** How a placeholder tells the model to get the content back: the recall tool when enabled, else just the ID. */
export type RecallHint = (id: number) => string
export const recallToolHint: RecallHint = (id) => `recall ${id}`
export const idOnlyHint: RecallHint = (id) => `id ${id}`
/** For OpenCode's compaction summariser: the calls it summarises leave the view, and their IDs with them. */
export const noHint: RecallHint = () => ""

/**
 * A numbered listing's line, as OpenCode's read tool (`12: text`), `cat -n` (`    12\ttext`) and Claude Code's Read
 * (`    12→text`) print it.
 */
const numberedLine = /^(?: *(\d+)[\t→]|(\d+): )/

/**
 * The first and last line numbers of the first run of consecutively numbered lines in a read's output: the lines of
 * the file it held. Undefined when it shows none (a directory listing, an image, an empty file).
 */
export const linesShown = (output: string): readonly [number, number] | undefined => {
  let first: number | undefined
  let last = 0
  let start = 0
  while (start <= output.length) {
    const end = output.indexOf("\n", start)
    const match = numberedLine.exec(output.slice(start, end === -1 ? output.length : end))
    const n = match === null ? undefined : Number(match[1] ?? match[2])
    if (first !== undefined && n !== last + 1) break
    if (n !== undefined) {
      first ??= n
      last = n
    }
    if (end === -1) break
    start = end + 1
  }
  return first === undefined ? undefined : [first, last]
}

/** What a pruned output held, where the call beside it does not say: a read's file and lines (`src/a.ts 1-240`). */
const heldBy = (call: ToolCall): string | undefined => {
  if (call.lines === undefined) return undefined
  const [first, last] = call.lines
  const lines = first === last ? `line ${first}` : `lines ${first}-${last}`
  return call.keyParameter === "" ? lines : `${call.keyParameter} ${lines}`
}

/**
 * The call itself still shows its tool and arguments, so a placeholder says what became of the content, what it held
 * where the arguments do not say (a read's lines), and how to get it back (its recall hint). Placeholders are built
 * only from facts that never change for a call (stable ID, reason, the copy a repeat points to, the input key, the
 * lines a read's output held), so the same prune produces the same bytes on every request and the prompt cache keeps
 * matching. They carry no size: a long session sends hundreds of them on every request, and the size was a third of
 * what they cost (BENCHMARKS.md, "Placeholders"); the note to the user gives each prune's.
 */
export const outputPlaceholder = (
  call: ToolCall,
  reason: Reason,
  id: number,
  recallHint: RecallHint,
  of?: CopyOf
): string => {
  const hint = recallHint(id)
  if (reason === "repeat" && of !== undefined) {
    if (of.kind === "written") return `[the same content as the earlier write of this file; ${hint}]`
    if (of.kind === "contained") return `[these lines are unchanged in the output of id ${of.id}; ${hint}]`
    if (of.kind === "input") return `[the same list as this call's input; ${hint}]`
    return `[same output as id ${of.id}; ${hint}]`
  }
  const what = reason === "deduplication"
    ? "pruned duplicate"
    : reason === "extract"
    ? "pruned after extract"
    : "pruned"
  const held = heldBy(call)
  return `[${held === undefined ? what : `${what}: ${held}`}; ${hint}]`
}

export const inputPlaceholder = (
  call: ToolCall,
  reason: Reason,
  key: string,
  id: number,
  recallHint: RecallHint
): string => contentPlaceholder(call, reason, key, recallHint(id))

/** A file change's language server errors, pruned with its content (`Target.diagnostics`). */
export const diagnosticsPlaceholder = (call: ToolCall, reason: Reason, id: number, recallHint: RecallHint): string =>
  contentPlaceholder(call, reason, "LSP errors", recallHint(id))

const contentPlaceholder = (call: ToolCall, reason: Reason, what: string, hint: string): string => {
  const said = reason === "supersedeWrites"
    ? [
      `pruned ${what}`,
      call.contentFiles.length > 1 ? "the files were read again later" : "the file was read again later"
    ]
    : reason === "staleOutputs"
    ? [`pruned ${what} of an old change`]
    : call.status === "error"
    ? [`pruned ${what} of a failed call`]
    : [`pruned ${what}`]
  return `[${(hint === "" ? said : [...said, hint]).join("; ")}]`
}
