import { Effect, Option, Predicate } from "effect"
import type { PluginConfig } from "../config/schema.ts"
import type { ToolCall } from "../engine/calls.ts"
import type { Candidate } from "../engine/strategies/candidate.ts"
import {
  type AnchorModel,
  type AnchorMove,
  anchorsFor,
  isBefore,
  type Located,
  locateAnchor,
  markAnchor,
  nextAnchor,
  type Place,
  rewritesAll
} from "../engine/anchor.ts"
import { applyForSummary } from "../engine/apply.ts"
import { appendTail } from "../engine/inject.ts"
import { nudge, prunableNow } from "../engine/listing.ts"
import { type RecallHint, idOnlyHint, recallToolHint } from "../engine/placeholders.ts"
import { makeProtection, type Protection } from "../engine/protection.ts"
import { unfounded } from "../engine/revert.ts"
import { blocksFrom, type ChangeAt, paysBackAfter, rebuildTokens } from "../engine/schedule.ts"
import { applyView, trackView, type ViewState, viewCandidates, viewContext, viewOpenFrom } from "../engine/view.ts"
import { agentSwitch, findSessionId, latestTurn, messageIdOf, modelSwitched, requestTimes } from "../host/messages.ts"
import { Config } from "../services/Config.ts"
import { Instructions } from "../services/Instructions.ts"
import { Ledger } from "../services/Ledger.ts"
import { Logger } from "../services/Logger.ts"
import { Paths } from "../services/Paths.ts"
import { type Prune, Pruner } from "../services/Pruner.ts"
import { Scheduler } from "../services/Scheduler.ts"
import { SessionStore } from "../services/SessionStore.ts"
import type { ToolIndex } from "../engine/calls.ts"
import { ToolCache } from "../services/ToolCache.ts"
import { changed, type SessionState, stableId } from "../engine/session.ts"
import { publishStatus } from "./status.ts"

/** How placeholders point back to the original content: the recall tool when the model has it. */
export const recallHintFor = (
  config: PluginConfig
): RecallHint => (config.tools.recall.enabled ? recallToolHint : idOnlyHint)

/** The protection rules for the session's current view. */
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

/**
 * `experimental.chat.messages.transform`: runs before every model request on a fresh copy of the history, which
 * is mutated in place (OpenCode ignores a replaced array). Sub-agent sessions and OpenCode's compaction
 * summariser are left exactly as they came. Everything is decided first; the messages are only touched at the
 * end, so a failure on the way leaves the request as it was.
 */
export const transform = Effect.fn("hooks.transform")(function*(messages: Array<unknown>) {
  const sessionID = findSessionId(messages)
  if (sessionID === undefined) {
    if (messages.length > 0) {
      yield* Effect.logWarning(
        "messages.transform: no message says which session it is in; the request goes out as it came"
      )
    }
    return
  }
  const store = yield* SessionStore
  yield* store.use(sessionID, (state) => transformSession(state, sessionID, messages))
})

/**
 * The transform of one session's request, under its lock: index -> plan -> decide -> apply -> render. Every message
 * is sent byte-identical to how the previous request sent it, except where a prune this request applies changes it;
 * what changes per request goes into one trailing note. A generator function defined once: one created per request
 * (`Effect.gen(function*() {...})` in the callback above) gets its own hidden class in V8, which points back at it
 * from the old generation, so everything it references (the request's copy of the history, megabytes in a long
 * session) would survive young-generation collections and be promoted, until a full collection.
 */
const transformSession = Effect.fnUntraced(function*(state: SessionState, sessionID: string, messages: Array<unknown>) {
  if (state.isSubAgent) return
  if (state.compacting) {
    state.compacting = false
    return yield* forSummariser(state, sessionID, messages)
  }
  const cache = yield* ToolCache
  const pruner = yield* Pruner
  const logger = yield* Logger
  const scheduler = yield* Scheduler
  const instructions = yield* Instructions
  const { current: config } = yield* Config
  const paths = yield* Paths
  const recallHint = recallHintFor(config)

  // index
  const index = yield* cache.sync(sessionID, messages)
  // Messages gone with no new compaction to explain it: OpenCode's undo took the newest out.
  const reverted = index.shrank && !compactedSince(state, index)
  // This process's first request for the session: an undo may have happened while it was not running.
  const resumed = index.previousPass === undefined
  const compacted = followCompaction(state, index)
  const idOf = (call: ToolCall) => (call.id ??= stableId(state, call.callID))
  for (const call of index.changed) idOf(call)
  const protection = protectionFor(config, paths, index)
  const calls = index.calls
  const track = () =>
    trackView(state.viewState, {
      calls,
      pass: index.pass,
      previousPass: index.previousPass,
      appendOnly: index.appendOnly,
      pruned: state.pruned,
      reReads: state.reReads,
      revision: state.revision,
      nudgeAfter: state.nudgeAfter,
      config,
      protection,
      recallHint,
      idOf,
      outputOf: (call) => outputAt(messages, call)
    })
  let viewState = track()
  state.viewState = viewState
  if (
    (reverted || resumed) && followUndo(state, pruner, { index, viewState, reverted, protection, config, messages })
  ) {
    viewState = track()
    state.viewState = viewState
  }

  // plan: a repeat is pruned at its first send, which costs no cache rebuild; automatic rules' prunes wait for the
  // scheduler
  if (viewState.copies.length > 0) {
    yield* pruner.apply(
      state,
      viewState.copies.map(({ call, copy }): Prune => ({
        call,
        reason: "repeat",
        id: idOf(call),
        of: { id: idOf(calls[copy.source]!), kind: copy.kind }
      })),
      recallHint,
      { minSaving: 1 }
    )
  }
  const ledger = yield* Ledger
  const planned = planAutomatic(
    state,
    viewState,
    index,
    protection,
    idOf,
    (call, reason, id) => ledger.saving(call, reason, id, recallHint)
  )
  const pending = batchFrom(planned, 0)

  // decide
  const anchorModel = config.cache.breakpoint && scheduler.profile(state).kind === "anthropic" &&
      anchorsFor(state.model, state.systemParts?.length)
    ? state.model
    : undefined
  const anchored = anchorModel === undefined || state.anchor === undefined
    ? undefined
    : locateAnchor(messages, state.anchor, anchorModel)
  const changeAt = (position: number) => changeOf(state, viewState, index, messages, position, anchored)
  const cut = anchored === undefined ? undefined : firstCallAfter(calls, anchored)
  const near = cut === undefined ? undefined : batchFrom(planned, cut)
  const turn = latestTurn(messages)
  const decision = yield* scheduler.decide(state, {
    pendingTokens: pending.tokens,
    contextTokens: viewContext(viewState, index.textChars, state.systemTokens ?? 0),
    change: changeAt(pending.first),
    afterBreakpoint: near === undefined || near.prunes.length === pending.prunes.length
      ? undefined
      : { pendingTokens: near.tokens, change: changeAt(near.first) },
    compacted,
    modelSwitched: modelSwitched(turn),
    agentSwitch: agentSwitch(turn),
    instructionsChanged: yield* instructions.changed(state),
    history: () => requestTimes(messages)
  })
  const holdsBack = decision.trigger !== undefined && decision.scope === "afterBreakpoint" && near !== undefined &&
    cut !== undefined
  const applied = decision.trigger === undefined ? undefined : holdsBack ? near : pending
  const heldBack = new Set(
    holdsBack ? pending.prunes.flatMap(({ call }) => call.position < cut ? [call.callID] : []) : []
  )
  state.waiting = decision.waiting === undefined ? undefined : {
    calls: pending.prunes.length - (applied?.prunes.length ?? 0),
    tokens: pending.tokens - (applied?.tokens ?? 0),
    why: decision.waiting
  }

  // apply
  if (applied !== undefined) yield* pruner.apply(state, applied.prunes, recallHint, { minSaving: 1 })
  const contextTokens = viewContext(viewState, index.textChars, state.systemTokens ?? 0)
  const change = yield* pruner.deliver(state, {
    recallHint,
    profile: decision.profile,
    cold: decision.cold,
    calls,
    contextTokens,
    systemTokens: state.systemTokens ?? 0,
    prunedTokens: viewState.prunedTokens,
    reReads: { tokens: viewState.reReadTokens, first: viewState.reReads },
    changeAt
  })

  const anchor = anchorModel === undefined ? undefined : moveAnchor(state, viewState, messages, calls, {
    model: anchorModel,
    current: anchored,
    change: change === undefined ? undefined : placeOf(calls[change]!),
    cold: decision.cold,
    contextTokens,
    // Prunes held back before the breakpoint wait for a request that writes everything again anyway, so the
    // breakpoint need not stay before them.
    worth: (call, reason) => !heldBack.has(call.callID) && ledger.saving(call, reason, idOf(call), recallHint) >= 1
  })

  // render
  const note = nudgeFor(state, viewState, index, protection, idOf, {
    arrivedFrom: firstCallOfMessage(calls, messages.length - 1),
    worth: (tokens) =>
      paysBackAfter(
        decision.profile,
        tokens,
        rebuildTokens(decision.profile, {
          contextTokens,
          systemTokens: state.systemTokens ?? 0,
          change: changeAt(0)
        })
      ) <= scheduler.horizon(state)
  })
  applyView(viewState, messages, calls, state.pruned, idOf)
  if (anchor !== undefined) markAnchor(messages, anchor.place)
  if (note !== undefined) appendTail(messages, note)
  state.sentRevision = state.revision
  state.lastContext = contextTokens
  yield* publishStatus(state)
  if (logger.debug) yield* logger.snapshot(sessionID, messages)
})

/**
 * OpenCode's compaction summariser's request (the transform right after `experimental.session.compacting`): the
 * history before the kept tail, which OpenCode sends as one text that has to fit the model's window. It gets the
 * plugin's prunes, so that what it summarises is what the model sees (src/engine/apply.ts, `applyForSummary`); nothing
 * else of the request path runs, and the session's index stays that of its latest request.
 */
const forSummariser = Effect.fnUntraced(function*(state: SessionState, sessionID: string, messages: Array<unknown>) {
  if (state.pruned.size === 0) return
  const cache = yield* ToolCache
  const latest = yield* cache.latest(sessionID)
  // A process whose first request for the session is the summariser's knows no calls yet.
  const index = Option.isSome(latest) ? latest.value : yield* cache.sync(sessionID, messages)
  applyForSummary(
    messages,
    [...state.pruned].flatMap(([callID, record]) => {
      const call = index.byCallId.get(callID)
      return call === undefined ? [] : [{ call, reason: record.reason }]
    })
  )
})

/** The automatic rules' prunes in this request, each with the tokens it would save. */
const planAutomatic = (
  state: SessionState,
  viewState: ViewState,
  index: ToolIndex,
  protection: Protection,
  idOf: (call: ToolCall) => number,
  saving: (call: ToolCall, reason: Prune["reason"], id: number) => number
): ReadonlyArray<readonly [Prune, number]> => {
  const candidates = viewCandidates(viewState, {
    calls: index.calls,
    pruned: state.pruned,
    restored: state.restored,
    protection,
    currentTurn: index.turns,
    contextTokens: viewContext(viewState, index.textChars, state.systemTokens ?? 0)
  })
  const planned: Array<readonly [Prune, number]> = []
  for (const { callID, reason } of candidates) {
    const call = index.byCallId.get(callID)!
    const id = idOf(call)
    const tokensSaved = saving(call, reason, id)
    if (tokensSaved >= 1) planned.push([{ call, reason, id }, tokensSaved])
  }
  return planned
}

/** Planned prunes of calls at `from` or later: the prunes, the tokens they save, the earliest one's position. */
const batchFrom = (planned: ReadonlyArray<readonly [Prune, number]>, from: number) => {
  const prunes: Array<Prune> = []
  let tokens = 0
  let first = Infinity
  for (const [prune, saved] of planned) {
    if (prune.call.position < from) continue
    prunes.push(prune)
    tokens += saved
    first = Math.min(first, prune.call.position)
  }
  return { prunes, tokens, first }
}

/** The nudge for this request, when one is due (see `nudge`). */
const nudgeFor = (
  state: SessionState,
  viewState: ViewState,
  index: ToolIndex,
  protection: Protection,
  idOf: (call: ToolCall) => number,
  options: { readonly arrivedFrom: number; readonly worth: (tokens: number) => boolean }
): string | undefined => {
  if (viewState.tagged.length === 0) return undefined
  const settings = viewState.config.tools.settings
  let arrived = 0
  for (let i = options.arrivedFrom; i < index.calls.length; i++) {
    const call = index.calls[i]!
    if (call.status === "completed" && idOf(call) > state.nudgeAfter) arrived++
  }
  return nudge({
    enabled: settings.nudgeEnabled,
    frequency: settings.nudgeFrequency,
    minTokens: settings.nudgeMinTokens,
    resultsSince: viewState.resultsSince,
    arrived,
    prunable: () =>
      viewState.tagged.flatMap((position, i) => {
        const call = index.calls[position]!
        return prunableNow(call, { pruned: state.pruned, protection })
          ? [{ id: idOf(call), tokens: viewState.taggedTokens[i]! }]
          : []
      }),
    worth: options.worth
  })
}

/**
 * How many content blocks before a breakpoint Anthropic still finds an entry, less a margin (for the request's own
 * newest blocks, and for "about 20").
 */
const nearBlocks = 16

/**
 * Where the plugin's cache breakpoint goes in this request (src/engine/anchor.ts), recorded in the session's state.
 * Ski rental again for its lag: it jumps to the frontier (a rewrite of everything before it) once lagging behind has
 * cost as much in rewrites.
 */
const moveAnchor = (
  state: SessionState,
  viewState: ViewState,
  messages: ReadonlyArray<unknown>,
  calls: ReadonlyArray<ToolCall>,
  request: Pick<AnchorMove, "current" | "change" | "cold"> & {
    readonly model: AnchorModel
    readonly contextTokens: number
    readonly worth: (call: ToolCall, reason: Candidate["reason"]) => boolean
  }
): Located | undefined => {
  if (rewritesAll(request)) state.anchorLag = 0
  const anchor = nextAnchor(messages, {
    ...request,
    frontier: () => {
      const gone = (callID: string) => state.pruned.has(callID) || state.restored.has(callID)
      const open = viewOpenFrom(viewState, calls, gone, request.worth)
      return open < calls.length ? placeOf(calls[open]!) : [messages.length, 0]
    },
    lookback: nearBlocks,
    jump: (from, to) => {
      const lag = unprunedTokens(state, calls, firstCallAfter(calls, from), firstCallAfter(calls, to))
      const prefix = request.contextTokens - (state.systemTokens ?? 0) -
        unprunedTokens(state, calls, firstCallAfter(calls, from), calls.length)
      const jumps = state.anchorLag + lag >= prefix
      state.anchorLag = jumps ? 0 : state.anchorLag + lag
      return jumps
    }
  }, request.model)
  state.anchor = anchor?.anchor
  return anchor
}

const placeOf = (call: ToolCall): Place => [call.messageIndex, call.partIndex]

/**
 * Where a change at the call at `position` sits (see `ChangeAt`); past the last call: nowhere. After the plugin's own
 * breakpoint (`anchor`), the cache is written again from there, as from the end of a request.
 */
const changeOf = (
  state: SessionState,
  viewState: ViewState,
  index: ToolIndex,
  messages: ReadonlyArray<unknown>,
  position: number,
  anchor: Place | undefined
): ChangeAt => {
  const calls = index.calls
  if (position >= calls.length) return { tokensAfter: 0, nearEnd: true }
  const call = calls[position]!
  const from = blocksFrom(messages, call.messageIndex, nearBlocks) <= nearBlocks
    ? position
    : anchor !== undefined && !isBefore(placeOf(call), anchor)
    ? firstCallAfter(calls, anchor)
    : undefined
  if (from === undefined) {
    const context = viewContext(viewState, index.textChars, state.systemTokens ?? 0)
    return { tokensAfter: Math.round(context * (calls.length - position) / calls.length), nearEnd: false }
  }
  return { tokensAfter: unprunedTokens(state, calls, from, calls.length), nearEnd: true }
}

/** Tokens the calls at positions `start` to `end` (excluded) send, as pruned so far. */
const unprunedTokens = (state: SessionState, calls: ReadonlyArray<ToolCall>, start: number, end: number): number => {
  let tokens = 0
  for (let i = start; i < end; i++) {
    const call = calls[i]!
    tokens += call.totalTokens - (state.pruned.get(call.callID)?.tokens ?? 0)
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

/** A call's output as this request sends it (before the transform changes anything). */
const outputAt = (messages: ReadonlyArray<unknown>, call: ToolCall): string | undefined => {
  const message = messages[call.messageIndex]
  const part = Predicate.isObject(message) && Array.isArray(message.parts) ? message.parts[call.partIndex] : undefined
  const state = Predicate.isObject(part) && Predicate.isObject(part.state) ? part.state : undefined
  return typeof state?.output === "string" ? state.output : undefined
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
 * After OpenCode's undo (`reverted`), withdraws the prunes that no longer stand (src/engine/revert.ts) and forgets the
 * calls that are gone; at this process's first request for the session, when an undo may have happened while it was
 * not running, only the model's prunes are checked. Returns whether any prune was withdrawn.
 */
const followUndo = (
  state: SessionState,
  pruner: Pruner["Service"],
  input: {
    readonly index: ToolIndex
    /** Built afresh for a view that lost messages: the rules' lists still hold the pruned calls. */
    readonly viewState: ViewState
    readonly reverted: boolean
    readonly protection: Protection
    readonly config: PluginConfig
    readonly messages: ReadonlyArray<unknown>
  }
): boolean => {
  const { index, reverted } = input
  const withdrawn = unfounded({
    calls: index.calls,
    rules: reverted ? input.viewState.rules : undefined,
    pruned: state.pruned,
    protection: input.protection,
    strategies: input.config.strategies,
    currentTurn: index.turns,
    present: presentIn(input.messages)
  })
  if (index.vanished.length > 0) forget(state, index.vanished)
  // The undo may have taken a compaction out with them.
  if (reverted) state.summaryId = index.summaryId
  if (withdrawn.length > 0) pruner.withdraw(state, withdrawn)
  return withdrawn.length > 0
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
  for (const callID of callIDs) {
    state.ids.delete(callID)
    state.pruned.delete(callID)
    state.undelivered.delete(callID)
  }
  changed(state)
}

/** Whether a message is in the request, by its ID; the IDs are gathered on the first question. */
const presentIn = (messages: ReadonlyArray<unknown>) => {
  let ids: Set<string | undefined> | undefined
  return (messageID: string): boolean => (ids ??= new Set(messages.map(messageIdOf))).has(messageID)
}
