import { Predicate } from "effect"
import type { PluginConfig } from "../config/schema.ts"
import { firstAtOrAfter } from "../data/sorted.ts"
import type { FoldRecord, PruneRecord } from "../state/schema.ts"
import { applyRendered, applyTag, type Rendered, render, tagFor } from "./apply.ts"
import { addToRules, candidatesFrom, emptyRules, openFrom, type Rules } from "./automatic.ts"
import { idOf, type ToolCall, type UserTurn } from "./calls.ts"
import { type AppliedFold, foldsIn } from "./fold.ts"
import { contextTokens } from "./context.ts"
import { taggable } from "./listing.ts"
import { type RecallHint, targetOf } from "./placeholders.ts"
import type { Protection } from "./protection.ts"
import type { Reason } from "./reasons.ts"
import type { Candidate } from "./strategies/candidate.ts"
import type { Copy } from "./strategies/repeats.ts"

/**
 * A view is the tool calls a request sends, as the ToolCache indexes them. Its state is what the request path derives
 * from it, kept between requests and extended with the calls each request adds, so that a request costs in
 * proportion to what changed rather than to the whole history: the automatic rules' state, the calls' token total and
 * the pruned part of it, the prunes to apply, and the calls that carry their stable ID. It is rebuilt from the whole
 * view whenever the view did more than add calls (compaction, revert, a status change), or prunes, restores or the
 * nudge baseline changed outside the request path (the session's `revision` moved).
 */
export interface ViewState {
  /** The ToolCache pass this state reflects. */
  pass: number
  /** The session revision it reflects. */
  revision: number
  readonly config: PluginConfig
  readonly recallHint: RecallHint
  /** Calls taken into account: positions `0 .. count - 1` of the view. */
  count: number
  /** Stable ID -> position, for the calls taken into account: where a repeat's placeholder finds the copy it names. */
  readonly positions: Map<number, number>
  readonly rules: Rules
  /** Tokens of every call: its inputs, output and framing. */
  tokens: number
  /** Tokens the applied prunes take out of them. */
  prunedTokens: number
  /** The folds in the view (src/engine/fold.ts), and the tokens they take out besides. */
  readonly folds: Array<AppliedFold>
  foldedTokens: number
  /** Pruned calls in the view, with their replacement texts. */
  readonly applied: Array<ToolCall>
  readonly appliedTexts: Array<Rendered | undefined>
  /**
   * Positions of the calls that carry their stable ID at the head of their output (ascending), with the tokens a
   * discard would free: decided by rules that never change for a call, so a call sent with its tag keeps it.
   */
  readonly tagged: Array<number>
  readonly taggedTokens: Array<number>
  /** Completed calls newer than the nudge baseline. */
  resultsSince: number
  /** Repeats among the calls sent for the first time in the latest pass, for the request path to prune. */
  copies: Array<{ readonly call: ToolCall; readonly copy: Copy }>
  /**
   * Tokens of the reads in the view that read again a file whose every copy the plugin had pruned: the model reading
   * what masking took from it. Without pruning it would not have needed them.
   */
  reReadTokens: number
  /** Such reads among the calls sent for the first time in the latest pass, for the ledger to record and charge. */
  reReads: Array<ToolCall>
  /** What `applyView` writes, kept from one request to the next (see `Writes`). */
  writes: Writes | undefined
}

/**
 * The prunes and tags `applyView` writes: those of `applied` and `tagged` whose calls are not folded (a folded call's
 * part leaves what is sent). A long session's folded calls are most of its calls, so this follows the view as it
 * grows rather than looking every call up on every request; derived again when folds changed.
 */
interface Writes {
  /** The view's folds and the session's folded calls it was derived with. */
  readonly folds: number
  readonly folded: number
  /** How much of `applied` and `tagged` it took in. */
  applied: number
  tagged: number
  /** Indexes into `applied`, and positions from `tagged`. */
  readonly prunes: Array<number>
  readonly tags: Array<number>
}

export interface ViewInput {
  readonly calls: ReadonlyArray<ToolCall>
  readonly pass: number
  /** The ToolCache pass before `pass`, and whether `pass` only added calls to it. */
  readonly previousPass: number | undefined
  readonly appendOnly: boolean
  readonly pruned: ReadonlyMap<string, PruneRecord>
  /** The reads of masked files found before (`ViewState.reReads`), by callID: their tokens. */
  readonly reReads: ReadonlyMap<string, number>
  readonly revision: number
  readonly nudgeAfter: number
  readonly config: PluginConfig
  readonly protection: Protection
  readonly recallHint: RecallHint
  /** The request being built (before anything is changed in it): where a call's output is read. */
  readonly messages: ReadonlyArray<unknown>
  /** The session's folds, and the view's user turns and calls by ID, to find them in it. */
  readonly folds: ReadonlyMap<string, FoldRecord>
  readonly userTurns: ReadonlyArray<UserTurn>
  readonly byCallId: ReadonlyMap<string, ToolCall>
}

/** Whether the model has tools to prune with, and so whether outputs carry their IDs. */
const offersPruning = (config: PluginConfig): boolean => config.tools.discard.enabled || config.tools.extract.enabled

/** The view state for this request: `previous` extended with the new calls when that is sound, else built afresh. */
export const trackView = (previous: ViewState | undefined, input: ViewInput): ViewState => {
  const reusable = previous !== undefined && input.appendOnly && previous.pass === input.previousPass &&
    previous.revision === input.revision && previous.config === input.config &&
    previous.recallHint === input.recallHint &&
    previous.count <= input.calls.length
  const viewState = reusable ? previous : emptyViewState(input)
  viewState.copies = []
  viewState.reReads = []
  const copied = new Set<number>()
  const sent = (position: number) => !copied.has(position) && !input.pruned.has(input.calls[position]!.callID)
  const outputOf = (call: ToolCall) => outputAt(input.messages, call)
  for (let position = viewState.count; position < input.calls.length; position++)
    add(viewState, input, position, copied, sent, outputOf)
  // Folds are of old turns, which a view that only grows does not change: found when the state is built afresh.
  if (!reusable) {
    const folds = foldsIn(input.folds, input)
    noteFolds(viewState, folds, input.revision)
  }
  viewState.count = input.calls.length
  viewState.pass = input.pass
  return viewState
}

const emptyViewState = (input: ViewInput): ViewState => ({
  pass: input.pass,
  revision: input.revision,
  config: input.config,
  recallHint: input.recallHint,
  count: 0,
  positions: new Map(),
  rules: emptyRules(input.config.strategies, input.protection),
  tokens: 0,
  prunedTokens: 0,
  folds: [],
  foldedTokens: 0,
  applied: [],
  appliedTexts: [],
  tagged: [],
  taggedTokens: [],
  resultsSince: 0,
  copies: [],
  reReadTokens: 0,
  reReads: [],
  writes: undefined
})

const add = (
  viewState: ViewState,
  input: ViewInput,
  position: number,
  copied: Set<number>,
  sent: (position: number) => boolean,
  outputOf: (call: ToolCall) => string | undefined
) => {
  const call = input.calls[position]!
  viewState.positions.set(idOf(call), position)
  // A call's output is sent for the first time in the pass that first saw it finished, unless that pass is the first
  // one this process made for the session: then it may well have been sent before (OpenCode restarted).
  const firstSend = input.previousPass !== undefined && call.finalPass === input.pass
  const copy = addToRules(viewState.rules, input.calls, position, {
    firstSend,
    repeated: input.pruned.get(call.callID)?.reason === "repeat",
    sent,
    outputOf
  })
  if (copy !== undefined) {
    copied.add(position)
    viewState.copies.push({ call, copy })
  }
  viewState.tokens += call.totalTokens + call.frameTokens
  const reRead = input.reReads.get(call.callID)
  if (reRead !== undefined) viewState.reReadTokens += reRead
  else if (firstSend && readsMaskedFile(input, position)) {
    viewState.reReadTokens += call.totalTokens
    viewState.reReads.push(call)
  }
  const record = input.pruned.get(call.callID)
  if (record !== undefined) applied(viewState, call, record, idOf(call))
  if (call.status === "completed" && idOf(call) > input.nudgeAfter) viewState.resultsSince++
  if (!offersPruning(input.config)) return
  const tokens = taggable(call, input.protection, input.config.tools.settings.protectedTools)
  if (tokens === undefined) return
  viewState.tagged.push(position)
  viewState.taggedTokens.push(tokens)
}

/**
 * A read of a file every earlier copy of which (a read, a write's content, a patch that added it) reached the model
 * pruned by the plugin. A copy OpenCode's compaction cleared, or a prune still waiting for its first request, leaves
 * the model with the content it would have had without the plugin.
 */
const readsMaskedFile = (input: ViewInput, position: number): boolean => {
  const call = input.calls[position]!
  const file = call.tool === "read" && call.status === "completed" ? call.copiedFiles[0] : undefined
  if (file === undefined) return false
  let copies = 0
  for (let earlier = position - 1; earlier >= 0; earlier--) {
    const copy = input.calls[earlier]!
    if (!copy.copiedFiles.includes(file)) continue
    const record = input.pruned.get(copy.callID)
    if (copy.compacted || record === undefined || record.pending === true) return false
    copies++
  }
  return copies > 0
}

const applied = (viewState: ViewState, call: ToolCall, record: PruneRecord, id: number) => {
  viewState.prunedTokens += record.tokens
  viewState.applied.push(call)
  viewState.appliedTexts.push(render(call, record, id, viewState.recallHint))
}

/** Records prunes the request path or a tool just made, keeping the view state current. */
export const notePrunes = (
  viewState: ViewState,
  calls: ReadonlyArray<ToolCall>,
  pruned: ReadonlyMap<string, PruneRecord>,
  revision: number
): void => {
  for (const call of calls) {
    const record = pruned.get(call.callID)
    if (record !== undefined) applied(viewState, call, record, idOf(call))
  }
  viewState.revision = revision
}

/** Records folds the request path just made (or found), keeping the view state current. */
export const noteFolds = (viewState: ViewState, folds: ReadonlyArray<AppliedFold>, revision: number): void => {
  for (const fold of folds) {
    viewState.folds.push(fold)
    viewState.foldedTokens += fold.tokens
  }
  viewState.revision = revision
}

/** The automatic rules' candidates in this request. */
export const viewCandidates = (
  viewState: ViewState,
  input: Omit<Parameters<typeof candidatesFrom>[1], "strategies">
): Array<Candidate> => candidatesFrom(viewState.rules, { ...input, strategies: viewState.config.strategies })

/** The position of the oldest call an automatic rule may still prune something in (see `openFrom`). */
export const viewOpenFrom = (
  viewState: ViewState,
  calls: ReadonlyArray<ToolCall>,
  gone: (callID: string) => boolean,
  worth: (call: ToolCall, reason: Candidate["reason"]) => boolean
): number => openFrom(viewState.rules, calls, gone, worth)

/** The size of this request, estimated from the counts its view state holds, less applied prunes. */
export const viewContext = (viewState: ViewState, textChars: number, systemTokens: number): number =>
  contextTokens(systemTokens, textChars, viewState.tokens - viewState.prunedTokens - viewState.foldedTokens)

/**
 * Writes into `messages` what the view state says is sent: every applied prune's placeholder, and every tagged call's
 * ID at the head of its output, unless a prune replaced that output (a prune of inputs, such as a failed call's,
 * leaves the output and its tag as they were sent). Folds are written last, by `writeFolds`.
 */
export const applyView = (
  viewState: ViewState,
  messages: ReadonlyArray<unknown>,
  calls: ReadonlyArray<ToolCall>,
  pruned: ReadonlyMap<string, { readonly reason: string }>,
  folded: ReadonlyMap<string, unknown> = new Map(),
  unfolded: ReadonlyArray<ToolCall> = []
): void => {
  const writes = writesOf(viewState, calls, folded)
  const write = (i: number) => {
    const texts = viewState.appliedTexts[i]
    if (texts === undefined) return
    const call = viewState.applied[i]!
    applyRendered(
      messages,
      call,
      pointsAtNothing(viewState, texts, calls, pruned, folded)
        ? render(call, { reason: texts.reason }, texts.id, texts.recallHint) ?? texts
        : texts
    )
  }
  for (const i of writes.prunes) write(i)
  for (const position of writes.tags) tag(messages, calls[position]!, pruned)
  if (unfolded.length > 0) writeUnfolded(viewState, messages, pruned, unfolded, write)
}

/** A tagged call's ID at the head of its output, unless a prune replaced that output. */
const tag = (
  messages: ReadonlyArray<unknown>,
  call: ToolCall,
  pruned: ReadonlyMap<string, { readonly reason: string }>
): void => {
  const record = pruned.get(call.callID)
  if (record === undefined || targetOf(call, record.reason as Reason)?.kind !== "output") {
    applyTag(messages, call, tagFor(idOf(call)))
  }
}

/**
 * Folded calls whose fold this request cannot send (src/engine/fold.ts, `foldsToWrite`): they go out as unfolded calls
 * do, with their placeholders and tags. Rare (a history changed in its middle), so looked up one by one.
 */
const writeUnfolded = (
  viewState: ViewState,
  messages: ReadonlyArray<unknown>,
  pruned: ReadonlyMap<string, { readonly reason: string }>,
  calls: ReadonlyArray<ToolCall>,
  write: (applied: number) => void
): void => {
  const applied = new Map(viewState.applied.map((call, i) => [call, i] as const))
  for (const call of calls) {
    const i = applied.get(call)
    if (i !== undefined) write(i)
    const { tagged } = viewState
    if (tagged[firstAtOrAfter(tagged, call.position)] === call.position) tag(messages, call, pruned)
  }
}

/**
 * Whether a repeat's placeholder would name a copy the request does not send in full: pruned (by any rule, the model
 * or the user), folded, cleared by OpenCode, or gone from the view with a compaction. The repeat then goes out as a
 * prune of its own, recallable by its own ID. That happens in the request that takes the copy out, or in none (a copy
 * gone before the repeat's first send is no copy to point to): the copy comes before the repeat, so the request
 * changes what the provider cached from the copy on anyway, and the repeat's text changes with it at no cost.
 */
const pointsAtNothing = (
  viewState: ViewState,
  texts: Rendered,
  calls: ReadonlyArray<ToolCall>,
  pruned: ReadonlyMap<string, unknown>,
  folded: ReadonlyMap<string, unknown>
): boolean => {
  const of = texts.of
  // A todo list's read-back points at its own call's input, which is protected: always sent.
  if (of === undefined || of.kind === "input") return false
  const position = viewState.positions.get(of.id)
  const copy = position === undefined ? undefined : calls[position]
  return copy === undefined || copy.id !== of.id || copy.compacted || pruned.has(copy.callID) ||
    folded.has(copy.callID)
}

/** The view's `Writes`, brought up to date. */
const writesOf = (
  viewState: ViewState,
  calls: ReadonlyArray<ToolCall>,
  folded: ReadonlyMap<string, unknown>
): Writes => {
  let writes = viewState.writes
  if (writes === undefined || writes.folds !== viewState.folds.length || writes.folded !== folded.size) {
    writes = { folds: viewState.folds.length, folded: folded.size, applied: 0, tagged: 0, prunes: [], tags: [] }
    viewState.writes = writes
  }
  for (; writes.applied < viewState.applied.length; writes.applied++) {
    if (!folded.has(viewState.applied[writes.applied]!.callID)) writes.prunes.push(writes.applied)
  }
  for (; writes.tagged < viewState.tagged.length; writes.tagged++) {
    const position = viewState.tagged[writes.tagged]!
    if (!folded.has(calls[position]!.callID)) writes.tags.push(position)
  }
  return writes
}

/** A call's output as the request being built sends it (before the transform changes anything). */
const outputAt = (messages: ReadonlyArray<unknown>, call: ToolCall): string | undefined => {
  const message = messages[call.messageIndex]
  const part = Predicate.isObject(message) && Array.isArray(message.parts) ? message.parts[call.partIndex] : undefined
  const state = Predicate.isObject(part) && Predicate.isObject(part.state) ? part.state : undefined
  return typeof state?.output === "string" ? state.output : undefined
}
