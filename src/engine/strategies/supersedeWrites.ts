import type { ToolCall } from "../calls.ts"
import type { Protection } from "../protection.ts"
import { insertSorted } from "../../data/sorted.ts"
import { safeJson } from "../../data/boundedJson.ts"

/**
 * Supersede-writes: a write or edit whose file is read again later. The read shows the file as it is now, so the
 * content the model sent (often the largest thing in a coding session) is replaced; the call itself, its path and its
 * result stay. An `apply_patch` is superseded once every file it added or updated has been read again. Only a
 * whole-file read supersedes: a read from an offset, or limited to fewer lines than OpenCode reads by default, may not
 * cover what was written. Paths are compared resolved against the project directory (`ToolCall.contentFiles`), so a
 * relative and an absolute path to one file match.
 */

/** Tools that change a file, and the inputs that carry the file's content. */
export const contentInputs: Readonly<Record<string, ReadonlyArray<string>>> = {
  write: ["content"],
  edit: ["oldString", "newString"],
  multiedit: ["edits"],
  apply_patch: ["patchText"]
}

/**
 * Whether a prune for `reason` replaces the content inputs of a file change rather than its output (a file change's
 * output is a one-line confirmation): a superseded write, and an old change masked with the stale outputs.
 */
export const prunesContent = (tool: string, reason: string): boolean =>
  changesFile(tool) && (reason === "supersedeWrites" || reason === "staleOutputs")

/** A tool that changes a file, with content inputs. */
export const changesFile = (tool: string): boolean => Object.hasOwn(contentInputs, tool)

/** Tokens in the content inputs of a file change (a multiedit's list of edits, estimated from its JSON). */
export const contentTokens = (call: ToolCall): number => {
  let tokens = 0
  for (const key of contentInputs[call.tool] ?? []) {
    const value = call.input[key]
    tokens += call.inputTokens[key] ?? (Array.isArray(value) ? Math.ceil(safeJson(value).length / 4) : 0)
  }
  return tokens
}

/** What supersede-writes knows about a view, built call by call in view order. */
export interface Superseding {
  /** Absolute path -> positions of the writes and edits to it that no whole read followed yet. */
  readonly unread: Map<string, Array<number>>
  /** Position of a change to several files -> how many of them no whole read followed yet. */
  readonly filesLeft: Map<number, number>
  /** Positions of writes and edits a later whole read supersedes, not file-protected, ascending. */
  readonly superseded: Array<number>
}

export const superseding = (): Superseding => ({ unread: new Map(), filesLeft: new Map(), superseded: [] })

/**
 * Adds the call at `position` (positions come in ascending order): a whole-file read supersedes the writes and
 * edits of its file before it, and a patch once each of the patch's files has been read. `prunable` says whether
 * fixed protection (files) leaves a call to the rule.
 */
export const supersede = (
  state: Superseding,
  calls: ReadonlyArray<ToolCall>,
  position: number,
  prunable: (call: ToolCall) => boolean
): void => {
  const call = calls[position]!
  if (call.tool === "read") {
    const file = call.absolutePath
    if (file === undefined || call.status !== "completed" || !isWholeFile(call.input)) return
    const waiting = state.unread.get(file)
    if (waiting === undefined) return
    for (const change of waiting) {
      const left = (state.filesLeft.get(change) ?? 1) - 1
      if (left > 0) state.filesLeft.set(change, left)
      else insertSorted(state.superseded, change)
    }
    state.unread.delete(file)
    return
  }
  const inputs = contentInputs[call.tool]
  if (inputs === undefined || call.contentFiles.length === 0) return
  if (!inputs.some((key) => (call.inputTokens[key] ?? 0) > 0 || Array.isArray(call.input[key]))) return
  if (!prunable(call)) return
  if (call.contentFiles.length > 1) state.filesLeft.set(position, call.contentFiles.length)
  for (const file of call.contentFiles) {
    const waiting = state.unread.get(file)
    if (waiting === undefined) state.unread.set(file, [position])
    else waiting.push(position)
  }
}

/** The fixed protection supersede-writes honours: protected files (the tools it shortens are protected from the rest). */
export const supersedePrunable = (protection: Protection) => (call: ToolCall) => !protection.file(call)

/** OpenCode's read tool returns this many lines when no limit is given. */
const defaultReadLines = 2000

const isWholeFile = (input: Readonly<Record<string, unknown>>): boolean => {
  const { limit, offset } = input
  const fromStart = offset === undefined || offset === null || (typeof offset === "number" && offset <= 1)
  const unlimited = limit === undefined || limit === null || (typeof limit === "number" && limit >= defaultReadLines)
  return fromStart && unlimited
}
