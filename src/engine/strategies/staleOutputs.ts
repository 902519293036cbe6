import type { ToolCall } from "../calls.ts"
import type { Protection } from "../protection.ts"
import type { Candidate } from "./candidate.ts"
import { changesFile, contentTokens } from "./supersedeWrites.ts"

/**
 * Stale outputs (observation masking): once the context passes the trigger, completed outputs older than the most
 * recent `keepRecent` calls are masked, oldest first, but only as a batch worth at least `clearAtLeast` tokens, so the
 * prompt cache is rebuilt for a real saving, not for every call that ages out of the window.
 *
 * A file change (write, edit, apply_patch) is masked with them: its output is a one-line confirmation, but what it
 * sent (a whole file, the replaced and replacing text, a patch) is often the largest thing left in a long session
 * once old outputs are masked, and the file on disk, or a later read, holds what matters of it now. Its content
 * inputs are masked, its path and result stay. Listing `write`, `edit` or `apply_patch` in `protectedTools` keeps
 * them.
 *
 * The files the model is working on keep their newest copy (a read's output, a write's content, a patch that added
 * the file) however old it is: the model edits them next, and an edit made with the file masked costs the chat a
 * re-read, a `recall` or an edit that fails on a stale `oldString`, which no cost figure shows. The `keepFiles` files
 * most recently read, written or edited are the working files; a newer call to another file is what ends a file's
 * protection, not age.
 */

interface StaleOptions {
  /** Context tokens from which masking starts. */
  readonly trigger: number
  /** The most recent tool outputs that are never masked. */
  readonly keepRecent: number
  /** Masking happens in batches of at least this many tokens. */
  readonly clearAtLeast: number
  /** The files most recently read, written or edited whose newest copy of their content is never masked. */
  readonly keepFiles: number
  readonly protectedTools: ReadonlyArray<string>
}

export type StaleQuery = StaleOptions & {
  readonly contextTokens: number
  /** Calls already pruned, restored by the user, or claimed by another rule. */
  readonly taken: (callID: string) => boolean
}

/** Tokens masking takes out of a call: a file change's content inputs and errors, another call's output. */
const maskedTokens = (call: ToolCall): number =>
  changesFile(call.tool) ? contentTokens(call) + call.diagnosticsTokens : call.outputTokens

/**
 * Whether a completed call has something masking could replace (an output, a file change's content), and fixed
 * protection (tools, files) leaves it to the rule.
 */
export const isMaskable = (call: ToolCall, prunable: (call: ToolCall) => boolean): boolean =>
  call.status === "completed" && maskedTokens(call) > 0 && (changesFile(call.tool) || call.hasTextOutput) &&
  !call.compacted && prunable(call)

/**
 * Never masked, however old: a skill's output is instructions the model follows for the rest of the task, which
 * OpenCode's own pruning (`compaction.prune`) never clears either. The model may still discard one it is done with.
 */
const neverMasked: ReadonlySet<string> = new Set(["skill"])

/** File changes are always-protected tools everywhere else; here only the rule's own `protectedTools` keeps them. */
export const stalePrunable = (protection: Protection, protectedTools: ReadonlyArray<string>) => (call: ToolCall) =>
  (changesFile(call.tool)
    ? !protectedTools.includes(call.tool)
    : !protection.tool(call.tool, protectedTools) && !neverMasked.has(call.tool)) &&
  !protection.file(call)

/**
 * The stale outputs among `maskable` (positions of maskable calls, ascending) for this request, or none when the
 * context is below the trigger or the batch would be smaller than `clearAtLeast`.
 */
export const staleAmong = (
  calls: ReadonlyArray<ToolCall>,
  maskable: ReadonlyArray<number>,
  protection: Protection,
  options: StaleQuery
): Array<Candidate> => {
  if (options.contextTokens < options.trigger) return []
  const end = calls.length - options.keepRecent
  const kept = workingCopies(calls, maskable, options.keepFiles)
  const found: Array<Candidate> = []
  let tokens = 0
  for (const position of maskable) {
    if (position >= end) break
    const call = calls[position]!
    if (options.taken(call.callID) || protection.recent(call) || kept.has(position)) continue
    found.push({ callID: call.callID, reason: "staleOutputs" })
    tokens += maskedTokens(call)
  }
  return tokens >= options.clearAtLeast ? found : []
}

/**
 * The lines of its file a copy shows, `[from, to)` in the read's own numbering, or undefined for the whole file: a
 * write's content, a patch that adds the file, a read without an offset or a limit (OpenCode reads up to 2,000 lines
 * then: as much of the file as any read shows).
 */
const regionOf = (call: ToolCall): readonly [number, number] | undefined => {
  if (call.tool !== "read") return undefined
  const { limit, offset } = call.input
  const from = typeof offset === "number" && Number.isFinite(offset) ? offset : 0
  const count = typeof limit === "number" && Number.isFinite(limit) && limit > 0 ? limit : undefined
  if (from <= 1 && (count === undefined || count >= wholeRead)) return undefined
  return [from, count === undefined ? Infinity : from + count]
}

const wholeRead = 2000

/** Whether `region` shows a line none of `seen` shows. */
const addsLines = (region: readonly [number, number], seen: ReadonlyArray<readonly [number, number]>): boolean => {
  let from = region[0]
  for (const [start, end] of [...seen].sort((a, b) => a[0] - b[0])) {
    if (start > from) break
    if (end > from) from = end
  }
  return from < region[1]
}

/**
 * How recent an older read of another part of a working file must be to be kept beside its newest copy, in calls:
 * the model edits a file from any part of it it read lately (an edit whose `oldString` spans two partial reads), and
 * masking the older part cost such edits their lines. Within 10 calls too few are kept to matter, beyond 20 the parts
 * of a file the model moved on from cost more than the misses they spare (docs/decisions/fidelity.md).
 */
const partsWithin = 15

/**
 * The positions, among `maskable`, of the copies (a read, a write, a patch that added the file) of each of the
 * `files` files most recently read, written or edited (by any call, failed ones too: the model was working on the
 * file) the model edits next: the newest, and the partial reads of other parts of the file made within the last
 * `partsWithin` calls. An older whole copy is not kept beside a newer partial one: it holds much the model has moved on
 * from, and keeping it shrinks the stale batch, which then waits and keeps everything else too (astropy-14598: 0.835x
 * -> 0.952x for nothing retained). `maskable` holds no pruned call, so a re-read sent as a pointer leaves the copy it
 * points to as the newest.
 */
export const workingCopies = (
  calls: ReadonlyArray<ToolCall>,
  maskable: ReadonlyArray<number>,
  files: number
): ReadonlySet<number> => {
  const kept = new Set<number>()
  const working = new Set<string>()
  for (let i = calls.length - 1; i >= 0 && working.size < files; i--) {
    const call = calls[i]!
    if (call.tool === "read" || changesFile(call.tool)) {
      for (const file of call.contentFiles) if (working.size < files) working.add(file)
    }
  }
  /** The parts of each working file its kept copies show; a file is done once a whole copy is kept, or none is due. */
  const shown = new Map<string, Array<readonly [number, number]>>()
  const done = new Set<string>()
  const recent = calls.length - partsWithin
  for (let i = maskable.length - 1; i >= 0 && done.size < working.size; i--) {
    const position = maskable[i]!
    const call = calls[position]!
    const region = regionOf(call)
    let keeps = false
    for (const path of call.copiedFiles) {
      if (!working.has(path) || done.has(path)) continue
      const parts = shown.get(path)
      if (parts === undefined || (position >= recent && region !== undefined && addsLines(region, parts))) {
        keeps = true
        if (region === undefined) done.add(path)
        else shown.set(path, [...(parts ?? []), region])
      }
      // Older than the window, a part no longer counts, and nothing older does either.
      if (parts !== undefined && position < recent) done.add(path)
    }
    if (keeps) kept.add(position)
  }
  return kept
}
