import type { PluginConfig } from "../config/schema.ts"
import { agentSwitch, latestTurn, messageIdOf, modelSwitched } from "../host/messages.ts"
import {
  type AnchorModel,
  anchorsFor,
  isBefore,
  type Located,
  locateAnchor,
  markAnchor,
  nextAnchor,
  type Place,
  rewritesAll
} from "./anchor.ts"
import { idOf, type ToolCall, type ToolIndex } from "./calls.ts"
import {
  alwaysKept,
  type AppliedFold,
  type FoldPlan,
  type FoldLayout,
  foldsToWrite,
  planFolds,
  writeFolds
} from "./fold.ts"
import { appendTail } from "./inject.ts"
import { nudge, prunableNow } from "./listing.ts"
import { idOnlyHint, type RecallHint, recallToolHint } from "./placeholders.ts"
import { makeProtection, type Protection } from "./protection.ts"
import type { Reason } from "./reasons.ts"
import { unfounded } from "./revert.ts"
import { type Estimate, savingOf } from "./savings.ts"
import { blocksFrom, type ChangeAt, type Decision, paysBackAfter, rebuildTokens } from "./schedule.ts"
import { changed, type SessionState, setFold, stableId, unfoldCalls, type WaitingPrune } from "./session.ts"
import type { Candidate } from "./strategies/candidate.ts"
import type { CopyOf } from "../state/schema.ts"
import { applyView, trackView, type ViewState, viewCandidates, viewContext, viewOpenFrom } from "./view.ts"
import type { PricingProfile } from "../pricing/profiles.ts"

/**
 * The request path (`experimental.chat.messages.transform`), as steps over one record: the session's state, the
 * request's tool index and messages, the settings and the protection rules in force, and what the view derives from
 * them. The hook (src/hooks/transform.ts) runs the steps in order and calls the services between them; nothing here
 * calls back into it.
 */
export interface Request {
  readonly state: SessionState
  readonly index: ToolIndex
  /** The request being built, mutated in place by `render` only. */
  readonly messages: Array<unknown>
  readonly config: PluginConfig
  readonly protection: Protection
  readonly recallHint: RecallHint
  readonly estimate: Estimate
  /** What the request path derived from the view (src/engine/view.ts); rebuilt by `track` when prunes changed. */
  view: ViewState
  /** The view's folds as this request sends them (`layOutFolds`): those it can send. */
  folds: ReadonlyArray<FoldLayout>
}

/** A prune to make: the call, why, its stable ID, and what the placeholder says. */
export interface Prune {
  readonly call: ToolCall
  readonly reason: Reason
  readonly id: number
  readonly distillation?: string | undefined
  /** A repeat: the earlier copy its placeholder names. */
  readonly of?: CopyOf | undefined
  /** The model's discard or extract: the assistant message holding that call (see `PruneRecord.message`). */
  readonly message?: string | undefined
}

/** How placeholders point back to the original content: the recall tool when the model has it. */
export const recallHintFor = (config: PluginConfig): RecallHint =>
  config.tools.recall.enabled ? recallToolHint : idOnlyHint

/** The protection rules for a view. */
export const protectionFor = (
  config: PluginConfig,
  paths: { readonly worktree: string; readonly projectDir: string },
  index: ToolIndex
): Protection =>
  makeProtection({
    patterns: config.protectedFilePatterns,
    roots: [paths.worktree, paths.projectDir],
    turnProtection: config.turnProtection,
    currentTurn: index.turns
  })

/** What the history did since the session's previous request, as far as the request path follows it. */
export interface Followed {
  /** OpenCode's undo took the newest messages out. */
  readonly reverted: boolean
  /** This process's first request for the session: an undo may have happened while it was not running. */
  readonly resumed: boolean
  /** The first request after a compaction. */
  readonly compacted: boolean
}

/**
 * Opens the request: follows a compaction (the calls that vanished with it are forgotten), gives every call its
 * stable ID, and derives the view.
 */
export const beginRequest = (
  state: SessionState,
  index: ToolIndex,
  messages: Array<unknown>,
  settings: {
    readonly config: PluginConfig
    readonly paths: { readonly worktree: string; readonly projectDir: string }
    readonly estimate: Estimate
  }
): { readonly request: Request; readonly followed: Followed } => {
  const reverted = index.shrank && !compactedSince(state, index)
  const resumed = index.previousPass === undefined
  const compacted = followCompaction(state, index)
  if (index.replaced.length > 0) forgetReplaced(state, index.replaced)
  for (const call of index.changed) call.id ??= stableId(state, call.callID)
  const partial = {
    state,
    index,
    messages,
    config: settings.config,
    protection: protectionFor(settings.config, settings.paths, index),
    recallHint: recallHintFor(settings.config),
    estimate: settings.estimate
  }
  const request: Request = { ...partial, view: undefined as unknown as ViewState, folds: [] }
  track(request)
  return { request, followed: { reverted, resumed, compacted } }
}

/** Derives the view again (prunes changed since it was derived), and keeps it as the session's. */
export const track = (request: Request): void => {
  const { index, state } = request
  request.view = trackView(state.viewState, {
    calls: index.calls,
    pass: index.pass,
    previousPass: index.previousPass,
    appendOnly: index.appendOnly,
    pruned: state.pruned,
    reReads: state.reReads,
    revision: state.revision,
    nudgeAfter: state.nudgeAfter,
    config: request.config,
    protection: request.protection,
    recallHint: request.recallHint,
    messages: request.messages,
    folds: state.folds,
    userTurns: index.userTurns,
    byCallId: index.byCallId
  })
  state.viewState = request.view
}

/**
 * After OpenCode's undo (`reverted`), the prunes that no longer stand (src/engine/revert.ts); at this process's first
 * request for the session, when an undo may have happened while it was not running, only the model's are checked.
 * Forgets the calls that are gone. The request path withdraws what this returns (`Pruner.withdraw`) and tracks the
 * view again.
 */
export const undone = (request: Request, followed: Followed): ReadonlyArray<string> => {
  const { index, state } = request
  if (!followed.reverted && !followed.resumed) return []
  const withdrawn = unfounded({
    calls: index.calls,
    rules: followed.reverted ? request.view.rules : undefined,
    pruned: state.pruned,
    protection: request.protection,
    strategies: request.config.strategies,
    currentTurn: index.turns,
    present: presentIn(request.messages)
  })
  if (index.vanished.length > 0) forget(state, index.vanished)
  // The undo may have taken a compaction out with them.
  if (followed.reverted) state.summaryId = index.summaryId
  unfoldRecent(request)
  return withdrawn
}

/**
 * Unfolds the turns an undo made recent again: a fold is of a turn older than the `keepTurns` most recent, none of
 * whose calls turn protection keeps, and the undo took out the turns that made it so.
 */
const unfoldRecent = (request: Request): void => {
  const { state } = request
  if (state.folds.size === 0) return
  const { byCallId, userTurns } = request.index
  const keep = request.config.strategies.fold.keepTurns
  for (let t = 0; t < userTurns.length; t++) {
    const key = userTurns[t]!.key
    const record = state.folds.get(key)
    if (record === undefined) continue
    const young = t >= userTurns.length - keep || record.calls.some((callID) => {
      const call = byCallId.get(callID)
      return call !== undefined && request.protection.recent(call)
    })
    if (young) setFold(state, key, undefined)
  }
}

/** The repeats sent for the first time in this request: pruned at once, which costs no cache rebuild. */
export const repeatsOf = (request: Request): Array<Prune> => {
  const { calls } = request.index
  return request.view.copies.map(({ call, copy }) => ({
    call,
    reason: "repeat",
    id: idOf(call),
    of: { id: idOf(calls[copy.source]!), kind: copy.kind }
  }))
}

/** The request's size, estimated from the counts its view holds, less applied prunes. */
export const contextOf = (request: Request): number =>
  viewContext(request.view, request.index.textChars, request.state.systemTokens ?? 0)

/** Tokens a prune of `call` for `reason` takes out of every request. */
const saving = (request: Request, call: ToolCall, reason: Reason): number =>
  savingOf(call, reason, idOf(call), request.recallHint, request.estimate)

/** A planned prune or fold, with the tokens it saves and the position of the earliest call it changes. */
export type Planned =
  | { readonly kind: "prune"; readonly prune: Prune; readonly tokens: number; readonly position: number }
  | { readonly kind: "fold"; readonly fold: FoldPlan; readonly tokens: number; readonly position: number }

/**
 * What the automatic rules would prune in this request, each with the tokens it would save (at least one), then the
 * old turns that would fold (src/engine/fold.ts), those prunes applied: a fold applies with them or after them.
 */
export const planAutomatic = (request: Request): ReadonlyArray<Planned> => {
  const { index, state } = request
  const candidates = viewCandidates(request.view, {
    calls: index.calls,
    pruned: state.pruned,
    restored: state.restored,
    protection: request.protection,
    currentTurn: index.turns,
    contextTokens: contextOf(request)
  })
  const planned: Array<Planned> = []
  const plannedTokens = new Map<string, number>()
  for (const { callID, reason } of candidates) {
    const call = index.byCallId.get(callID)!
    const tokens = saving(request, call, reason)
    if (tokens < 1) continue
    planned.push({ kind: "prune", prune: { call, reason, id: idOf(call) }, tokens, position: call.position })
    plannedTokens.set(callID, tokens)
  }
  for (const fold of foldsDue(request, plannedTokens)) {
    planned.push({ kind: "fold", fold, tokens: fold.tokens, position: fold.position })
  }
  return planned
}

/** The old turns that fold once `planned` prunes (callID -> tokens) apply. */
const foldsDue = (request: Request, planned: ReadonlyMap<string, number>): Array<FoldPlan> => {
  const { config, index, state } = request
  const settings = config.strategies.fold
  if (!settings.enabled) return []
  return planFolds({
    calls: index.calls,
    messages: request.messages,
    pass: index.pass,
    userTurns: index.userTurns,
    keepTurns: settings.keepTurns,
    rules: request.view.rules,
    protection: request.protection,
    protectedTools: config.tools.settings.protectedTools,
    keepRecent: config.strategies.staleOutputs.keepRecent,
    keepFiles: config.strategies.staleOutputs.keepFiles,
    restored: state.restored,
    folds: state.folds,
    prunedTokens: (call) => state.pruned.get(call.callID)?.tokens ?? planned.get(call.callID),
    recallHint: request.recallHint,
    estimate: request.estimate
  })
}

/**
 * Planned prunes and folds of calls at a position or later: the prunes, the folds, the tokens they save, the earliest
 * one's position.
 */
export interface Batch {
  readonly prunes: ReadonlyArray<Prune>
  readonly folds: ReadonlyArray<FoldPlan>
  readonly tokens: number
  readonly first: number
}

const batchFrom = (planned: ReadonlyArray<Planned>, from: number): Batch => {
  const prunes: Array<Prune> = []
  const folds: Array<FoldPlan> = []
  let tokens = 0
  let first = Infinity
  for (const item of planned) {
    if (item.position < from) continue
    if (item.kind === "prune") prunes.push(item.prune)
    else folds.push(item.fold)
    tokens += item.tokens
    first = Math.min(first, item.position)
  }
  return { prunes, folds, tokens, first }
}

/**
 * How many content blocks before a breakpoint Anthropic still finds an entry, less a margin (for the request's own
 * newest blocks, and for "about 20").
 */
const nearBlocks = 16

/** The plugin's own cache breakpoint in this request (src/engine/anchor.ts), when it keeps one. */
export interface Breakpoint {
  readonly model: AnchorModel
  /** Where the breakpoint of the previous request is in this one, while its part can still carry it. */
  readonly anchored: Place | undefined
  /** The position of the first call after it. */
  readonly cut: number | undefined
}

/** The plugin's breakpoint for a request priced by `profile`, if it keeps one (`cache.breakpoint`, `anchorsFor`). */
export const breakpointOf = (request: Request, profile: PricingProfile): Breakpoint | undefined => {
  const { state } = request
  if (!request.config.cache.breakpoint || profile.kind !== "anthropic") return undefined
  if (!anchorsFor(state.model, state.systemParts?.length)) return undefined
  const model = state.model!
  const anchored = state.anchor === undefined ? undefined : locateAnchor(request.messages, state.anchor, model)
  return { model, anchored, cut: anchored === undefined ? undefined : firstCallAfter(request.index.calls, anchored) }
}

/**
 * Where a change at the call at `position` sits (see `ChangeAt`); past the last call: nowhere. After the plugin's own
 * breakpoint, the cache is written again from there, as from the end of a request.
 */
const changeAt = (request: Request, breakpoint: Breakpoint | undefined, position: number): ChangeAt => {
  const { calls } = request.index
  if (position >= calls.length) return { tokensAfter: 0, nearEnd: true }
  const call = calls[position]!
  const anchor = breakpoint?.anchored
  const from = blocksFrom(request.messages, call.messageIndex, nearBlocks) <= nearBlocks
    ? position
    : anchor !== undefined && !isBefore(placeOf(call), anchor)
    ? firstCallAfter(calls, anchor)
    : undefined
  if (from === undefined) {
    return { tokensAfter: Math.round(contextOf(request) * (calls.length - position) / calls.length), nearEnd: false }
  }
  return { tokensAfter: unprunedTokens(request.state, calls, from, calls.length), nearEnd: true }
}

/** What the scheduler weighs: the pending prunes, where they sit, and what changed around the request. */
export interface Pending {
  /** Every planned prune. */
  readonly all: Batch
  /** Those after the plugin's breakpoint, when others precede it. */
  readonly near: Batch | undefined
}

export const pendingOf = (planned: ReadonlyArray<Planned>, breakpoint: Breakpoint | undefined): Pending => ({
  all: batchFrom(planned, 0),
  near: breakpoint?.cut === undefined ? undefined : batchFrom(planned, breakpoint.cut)
})

/** The facts about the request the scheduler decides on (`Scheduler.decide`), apart from the instruction files. */
export const decisionFacts = (request: Request, pending: Pending, breakpoint: Breakpoint | undefined) => {
  const { all, near } = pending
  const turn = latestTurn(request.messages)
  return {
    pendingTokens: all.tokens,
    contextTokens: contextOf(request),
    change: changeAt(request, breakpoint, all.first),
    afterBreakpoint: near === undefined || sizeOf(near) === sizeOf(all)
      ? undefined
      : { pendingTokens: near.tokens, change: changeAt(request, breakpoint, near.first) },
    modelSwitched: modelSwitched(turn),
    agentSwitch: agentSwitch(turn)
  }
}

const sizeOf = (batch: Batch): number => batch.prunes.length + batch.folds.length

/** The prunes the scheduler's decision applies now, and those it holds back before the plugin's breakpoint. */
interface Chosen {
  readonly applied: Batch | undefined
  /** Pending prunes before the breakpoint, held back while those after it apply. */
  readonly heldBack: ReadonlySet<string>
}

/** Applies the decision to the pending prunes, and records in the session what keeps waiting, and why. */
export const choose = (request: Request, pending: Pending, decision: Decision, breakpoint: Breakpoint | undefined) => {
  const { all, near } = pending
  const cut = breakpoint?.cut
  const holdsBack = decision.trigger !== undefined && decision.scope === "afterBreakpoint" && near !== undefined &&
    cut !== undefined
  const applied = decision.trigger === undefined ? undefined : holdsBack ? near : all
  const heldBack = new Set(
    holdsBack
      ? [
        ...all.prunes.flatMap(({ call }) => call.position < cut ? [call.callID] : []),
        ...all.folds.flatMap((fold) => fold.position < cut ? fold.calls.map((call) => call.callID) : [])
      ]
      : []
  )
  request.state.waiting = decision.waiting === undefined ? undefined : {
    prunes: stillWaiting(request, all, applied),
    why: decision.waiting
  }
  return { applied, heldBack } satisfies Chosen
}

/** The prunes and folds of `all` that `applied` leaves waiting, with what each would save. */
const stillWaiting = (request: Request, all: Batch, applied: Batch | undefined): Array<WaitingPrune> => {
  const prunes = new Set(applied?.prunes)
  const folds = new Set(applied?.folds)
  return [
    ...all.prunes.flatMap((prune) =>
      prunes.has(prune)
        ? []
        : [{
          callID: prune.call.callID,
          tokens: savingOf(prune.call, prune.reason, prune.id, request.recallHint, request.estimate)
        }]
    ),
    ...all.folds.flatMap((fold) =>
      folds.has(fold) ? [] : [{ callID: fold.calls[0]!.callID, tokens: fold.tokens, fold: fold.key }]
    )
  ]
}

/** The request that carries prunes to the model, as far as delivering them goes (`Pruner.deliver`). */
export interface Delivery {
  readonly profile: PricingProfile
  /**
   * `profile` is the provider's (`Scheduler.priced`); when it is not (the model not known yet), the request's costs
   * are not priced at all rather than under a guess.
   */
  readonly priced?: boolean | undefined
  readonly cold: boolean
  /** The calls of the request, and its estimated size and system prompt size. */
  readonly calls: ReadonlyArray<ToolCall>
  readonly contextTokens: number
  readonly systemTokens: number
  /** Tokens the applied prunes and folds take out of the request. */
  readonly prunedTokens: number
  /** The folds the request sends. */
  readonly folds: ReadonlyArray<AppliedFold>
  /** The model's reads of files whose every copy was pruned, in the request, and those it sends for the first time. */
  readonly reReads: ReRead
  /**
   * Where the earliest call sits whose content the prunes delivered now change from what earlier requests sent (a
   * repeat changes nothing sent before): what the rebuild they cause costs.
   */
  readonly change: ChangeAt
}

/** The model's reads of files whose every copy the plugin had pruned, in one request. */
export interface ReRead {
  /** Tokens of all such reads the request sends. */
  readonly tokens: number
  /** Those it sends for the first time: the model asked for them in answer to the request before. */
  readonly first: ReadonlyArray<ToolCall>
}

/** The request as it carries the prunes recorded so far to the model. */
export const deliveryOf = (
  request: Request,
  breakpoint: Breakpoint | undefined,
  decision: { readonly profile: PricingProfile; readonly cold: boolean }
): Delivery => {
  const { state, view } = request
  const { calls } = request.index
  let first = calls.length
  for (const callID of state.undelivered) {
    const call = request.index.byCallId.get(callID)
    if (call === undefined || call.position >= first) continue
    const reason = state.pruned.get(callID)?.reason
    if (reason !== undefined && reason !== "repeat") first = call.position
  }
  const folds = request.folds.map((layout) => layout.fold)
  if (state.undeliveredFolds.size > 0) {
    for (const fold of folds) {
      if (state.undeliveredFolds.has(fold.key)) first = Math.min(first, fold.calls[0]!.position)
    }
  }
  return {
    profile: decision.profile,
    cold: decision.cold,
    calls,
    contextTokens: contextOf(request),
    systemTokens: state.systemTokens ?? 0,
    prunedTokens: view.prunedTokens + view.foldedTokens,
    folds,
    reReads: { tokens: view.reReadTokens, first: view.reReads },
    change: changeAt(request, breakpoint, first)
  }
}

/**
 * Where the plugin's cache breakpoint goes in this request (src/engine/anchor.ts), recorded in the session's state.
 * Ski rental again for its lag: it jumps to the frontier (a rewrite of everything before it) once lagging behind has
 * cost as much in rewrites. `change`: the position of the earliest call this request changes, if any.
 */
export const placeBreakpoint = (
  request: Request,
  breakpoint: Breakpoint,
  input: {
    readonly change: number | undefined
    readonly cold: boolean
    readonly contextTokens: number
    readonly heldBack: ReadonlySet<string>
  }
): Located | undefined => {
  const { messages, state } = request
  const { calls } = request.index
  const move = {
    current: breakpoint.anchored,
    change: input.change === undefined ? undefined : placeOf(calls[input.change]!),
    cold: input.cold
  }
  if (rewritesAll(move)) state.anchorLag = 0
  // Prunes held back before the breakpoint wait for a request that writes everything again anyway, so the
  // breakpoint need not stay before them.
  const worth = (call: ToolCall, reason: Candidate["reason"]) =>
    !input.heldBack.has(call.callID) && saving(request, call, reason) >= 1
  const anchor = nextAnchor(messages, {
    ...move,
    frontier: () => {
      const gone = (callID: string) => state.pruned.has(callID) || state.restored.has(callID)
      const open = Math.min(viewOpenFrom(request.view, calls, gone, worth), foldFrontier(request, input.heldBack))
      return open < calls.length ? placeOf(calls[open]!) : [messages.length, 0]
    },
    lookback: nearBlocks,
    jump: (from, to) => {
      const lag = unprunedTokens(state, calls, firstCallAfter(calls, from), firstCallAfter(calls, to))
      const prefix = input.contextTokens - (state.systemTokens ?? 0) -
        unprunedTokens(state, calls, firstCallAfter(calls, from), calls.length)
      const jumps = state.anchorLag + lag >= prefix
      state.anchorLag = jumps ? 0 : state.anchorLag + lag
      return jumps
    }
  }, breakpoint.model)
  state.anchor = anchor?.anchor
  return anchor
}

/**
 * The position of the oldest call a fold may still change: the first call of the oldest old turn not folded yet that
 * has calls a fold may take (not those kept in place whatever happens). A turn that is not old yet is not counted: the
 * breakpoint would never get past the turn in progress, and a turn becomes old with the user's next message, often
 * after a pause that lets the cache expire, when its fold is free. A fold held back before the breakpoint waits for a
 * request that writes everything anyway.
 */
const foldFrontier = (request: Request, heldBack: ReadonlySet<string>): number => {
  const { index, state } = request
  if (!request.config.strategies.fold.enabled) return index.calls.length
  const { userTurns, calls } = index
  const { protectedTools } = request.config.tools.settings
  for (let t = 0; t < userTurns.length - request.config.strategies.fold.keepTurns; t++) {
    const turn = userTurns[t]!
    if (state.folds.has(turn.key)) continue
    const end = t + 1 < userTurns.length ? userTurns[t + 1]!.firstCall : calls.length
    for (let position = turn.firstCall; position < end; position++) {
      const call = calls[position]!
      if (heldBack.has(call.callID) || state.restored.has(call.callID)) continue
      if (!alwaysKept(call, { protection: request.protection, protectedTools })) return position
    }
  }
  return calls.length
}

/**
 * The nudge for this request, when one is due (see `nudge`): worth it when discarding what the model may prune pays
 * for the rebuild within `horizon` requests.
 */
export const nudgeFor = (
  request: Request,
  breakpoint: Breakpoint | undefined,
  input: { readonly profile: PricingProfile; readonly horizon: number; readonly contextTokens: number }
): string | undefined => {
  const { index, state, view } = request
  if (view.tagged.length === 0) return undefined
  const settings = view.config.tools.settings
  let arrived = 0
  for (let i = firstCallOfMessage(index.calls, request.messages.length - 1); i < index.calls.length; i++) {
    const call = index.calls[i]!
    if (call.status === "completed" && idOf(call) > state.nudgeAfter) arrived++
  }
  return nudge({
    enabled: settings.nudgeEnabled,
    frequency: settings.nudgeFrequency,
    minTokens: settings.nudgeMinTokens,
    resultsSince: view.resultsSince,
    arrived,
    prunable: () =>
      view.tagged.flatMap((position, i) => {
        const call = index.calls[position]!
        return prunableNow(call, { pruned: state.pruned, protection: request.protection })
          ? [{ id: idOf(call), tokens: view.taggedTokens[i]! }]
          : []
      }),
    worth: (tokens) =>
      paysBackAfter(
        input.profile,
        tokens,
        rebuildTokens(input.profile, {
          contextTokens: input.contextTokens,
          systemTokens: state.systemTokens ?? 0,
          change: changeAt(request, breakpoint, 0)
        })
      ) <= input.horizon
  })
}

/**
 * Writes what the request sends into its messages: every applied prune's placeholder and every tagged call's ID, the
 * plugin's breakpoint, and the trailing note. The last step: a failure before it leaves the request as it came.
 */
export const render = (request: Request, anchor: Located | undefined, note: string | undefined): void => {
  const { messages, state } = request
  applyView(request.view, messages, request.index.calls, state.pruned, state.folded, unwrittenCalls(request))
  if (anchor !== undefined) markAnchor(messages, anchor.place)
  writeFolds(messages, request.folds, request.index.reasoningMessages)
  if (note !== undefined) appendTail(messages, note)
}

/**
 * Lays the view's folds out in the request in hand (src/engine/fold.ts, `foldsToWrite`), once the folds this request
 * makes are recorded: a fold that cannot be written in it waits, and only those written are delivered.
 */
export const layOutFolds = (request: Request): void => {
  request.folds = foldsToWrite(request.messages, request.index, request.view.folds)
}

/** The calls of the session's folds that the request holds but does not send folded: they go out unfolded. */
const unwrittenCalls = (request: Request): ReadonlyArray<ToolCall> => {
  const { state, index } = request
  const written = request.folds
  if (written.length === state.folds.size) return []
  const keys = new Set(written.map((layout) => layout.fold.key))
  const calls: Array<ToolCall> = []
  for (const [key, record] of state.folds) {
    if (keys.has(key)) continue
    for (const callID of record.calls) {
      const call = index.byCallId.get(callID)
      if (call !== undefined) calls.push(call)
    }
  }
  return calls
}

const placeOf = (call: ToolCall): Place => [call.messageIndex, call.partIndex]

/** Tokens the calls at positions `start` to `end` (excluded) send, as pruned so far. */
const unprunedTokens = (state: SessionState, calls: ReadonlyArray<ToolCall>, start: number, end: number): number => {
  let tokens = 0
  for (let i = start; i < end; i++) {
    const call = calls[i]!
    tokens += call.totalTokens + call.frameTokens - (state.pruned.get(call.callID)?.tokens ?? 0)
  }
  return tokens
}

/** Position of the first call after `place`; the call count if there is none. */
const firstCallAfter = (calls: ReadonlyArray<ToolCall>, place: Place): number => {
  let low = 0
  let high = calls.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (isBefore(place, placeOf(calls[middle]!))) high = middle
    else low = middle + 1
  }
  return low
}

/** Position of the first call in the message at `index` (the newest message); the call count if it has none. */
const firstCallOfMessage = (calls: ReadonlyArray<ToolCall>, index: number): number => {
  let k = calls.length
  while (k > 0 && calls[k - 1]!.messageIndex >= index) k--
  return k
}

/**
 * After a compaction OpenCode sends only the summary and what followed it (plus a tail of recent turns), so the
 * calls that vanished are forgotten. Returns whether this request is the first after a compaction.
 */
const followCompaction = (state: SessionState, index: ToolIndex): boolean => {
  if (!compactedSince(state, index)) return false
  const first = state.summaryId !== undefined || state.pace !== undefined
  state.summaryId = index.summaryId
  forget(state, [...state.ids.keys()].filter((callID) => !index.byCallId.has(callID)))
  return first
}

/**
 * Whether the view's newest compaction summary is newer than the one the session saw last: an undo can take the
 * newest compaction out, and leave an older one newest. OpenCode's message IDs sort in the order they were made.
 */
const compactedSince = (state: SessionState, index: ToolIndex): boolean =>
  index.summaryId !== undefined && (state.summaryId === undefined || index.summaryId > state.summaryId)

/**
 * Forgets calls that left the view for good (compaction, undo): their IDs and prunes. Numbering is not restarted: an
 * ID, once given, is never given again.
 */
const forget = (state: SessionState, callIDs: ReadonlyArray<string>): void => {
  unfoldCalls(state, callIDs)
  for (const callID of callIDs) {
    state.ids.delete(callID)
    state.pruned.delete(callID)
    state.undelivered.delete(callID)
  }
  changed(state)
}

/**
 * Forgets what was recorded for calls whose ID came back with another tool or input (`ToolIndex.replaced`): the call
 * under that ID now is another one, which gets a stable ID of its own and inherits no prune, fold or restore.
 */
const forgetReplaced = (state: SessionState, callIDs: ReadonlyArray<string>): void => {
  forget(state, callIDs)
  for (const callID of callIDs) {
    state.restored.delete(callID)
    state.reReads.delete(callID)
  }
}

/** Whether a message is in the request, by its ID; the IDs are gathered on the first question. */
const presentIn = (messages: ReadonlyArray<unknown>) => {
  let ids: Set<string | undefined> | undefined
  return (messageID: string): boolean => (ids ??= new Set(messages.map(messageIdOf))).has(messageID)
}
