import { Effect, Option } from "effect"
import { applyForSummary } from "../engine/apply.ts"
import { foldForSummary } from "../engine/fold.ts"
import {
  beginRequest,
  breakpointOf,
  choose,
  contextOf,
  decisionFacts,
  deliveryOf,
  layOutFolds,
  nudgeFor,
  pendingOf,
  placeBreakpoint,
  planAutomatic,
  render,
  repeatsOf,
  track,
  undone
} from "../engine/request.ts"
import { latestTurn, requestTimes } from "../host/messages.ts"
import type { SessionId } from "../host/sessionId.ts"
import { Config } from "../services/Config.ts"
import { Instructions } from "../services/Instructions.ts"
import { Logger } from "../services/Logger.ts"
import { Paths } from "../services/Paths.ts"
import { Pruner } from "../services/Pruner.ts"
import { Scheduler } from "../services/Scheduler.ts"
import { SessionStore } from "../services/SessionStore.ts"
import { Tokenizer } from "../services/Tokenizer.ts"
import { ToolCache } from "../services/ToolCache.ts"
import type { SessionState } from "../engine/session.ts"
import { publishStatus } from "./status.ts"

/**
 * `experimental.chat.messages.transform`: runs before every model request on a fresh copy of the history, which
 * is mutated in place (OpenCode ignores a replaced array). Sub-agent sessions and OpenCode's compaction
 * summariser are left exactly as they came. Everything is decided first; the messages are only touched at the
 * end, so a failure on the way leaves the request as it was.
 */
export const transform = Effect.fn("hooks.transform")(function*(sessionID: SessionId, messages: Array<unknown>) {
  const store = yield* SessionStore
  yield* store.use(sessionID, (state) => transformSession(state, sessionID, messages))
})

/**
 * The transform of one session's request, under its lock: index -> plan -> decide -> apply -> render (the steps are in
 * src/engine/request.ts). Every message is sent byte-identical to how the previous request sent it, except where a
 * prune this request applies changes it; what changes per request goes into one trailing note. A generator function
 * defined once: one created per request (`Effect.gen(function*() {...})` in the callback above) gets its own hidden
 * class in V8, which points back at it from the old generation, so everything it references (the request's copy of
 * the history, megabytes in a long session) would survive young-generation collections and be promoted, until a full
 * collection.
 */
const transformSession = Effect.fnUntraced(function*(
  state: SessionState,
  sessionID: SessionId,
  messages: Array<unknown>
) {
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
  const tokenizer = yield* Tokenizer
  const { current: config } = yield* Config
  const paths = yield* Paths

  // index
  const index = yield* cache.sync(sessionID, messages)
  const { followed, request } = beginRequest(state, index, messages, { config, paths, estimate: tokenizer.estimate })
  const withdrawn = undone(request, followed)
  if (withdrawn.length > 0) pruner.withdraw(state, withdrawn)
  if (state.revision !== request.view.revision) track(request)

  // A session OpenCode has not described the model of in this process (the first request after a restart, of a session
  // whose file keeps none): its user's newest message names it, which is what its provider's pricing follows.
  if (state.model === undefined) state.model = modelOfRequest(messages)

  // plan
  const repeats = repeatsOf(request)
  if (repeats.length > 0) yield* pruner.apply(state, repeats, request.recallHint, { minSaving: 1 })
  const planned = planAutomatic(request)
  const profile = scheduler.profile(state)
  const breakpoint = breakpointOf(request, profile)
  const pending = pendingOf(planned, breakpoint)

  // decide
  const decision = yield* scheduler.decide(state, {
    ...decisionFacts(request, pending, breakpoint),
    compacted: followed.compacted,
    instructionsChanged: yield* instructions.changed(state),
    history: () => requestTimes(messages)
  })
  const { applied, heldBack } = choose(request, pending, decision, breakpoint)

  // apply
  if (applied !== undefined) {
    yield* pruner.apply(state, applied.prunes, request.recallHint, { minSaving: 1 })
    yield* pruner.fold(state, applied.folds)
  }
  layOutFolds(request)
  const contextTokens = contextOf(request)
  const change = yield* pruner.deliver(state, {
    ...deliveryOf(request, breakpoint, decision),
    priced: scheduler.priced(state)
  })
  const anchor = breakpoint === undefined
    ? undefined
    : placeBreakpoint(request, breakpoint, { change, cold: decision.cold, contextTokens, heldBack })

  // render
  const note = nudgeFor(request, breakpoint, {
    profile: decision.profile,
    horizon: scheduler.horizon(state),
    contextTokens
  })
  render(request, anchor, note)
  state.sentRevision = state.revision
  state.lastContext = contextTokens
  const left = request.view.prunedTokens + request.view.foldedTokens
  if (state.sentLeft !== left) {
    state.sentLeft = left
    // Kept with the session (`SessionState.sentLeft`): it changes only when what is pruned or folded did.
    state.dirty = true
  }
  yield* publishStatus(state)
  if (logger.debug) yield* logger.snapshot(sessionID, messages)
})

/** The model the request's newest user message names, without what only OpenCode's description of it says. */
const modelOfRequest = (messages: ReadonlyArray<unknown>): SessionState["model"] => {
  const model = latestTurn(messages).asked?.model
  return model === undefined
    ? undefined
    : {
      providerID: model.providerID,
      modelID: model.modelID,
      npm: undefined,
      contextLimit: undefined,
      outputLimit: undefined
    }
}

/**
 * OpenCode's compaction summariser's request (the transform right after `experimental.session.compacting`): the
 * history before the kept tail, which OpenCode sends as one text that has to fit the model's window. It gets the
 * plugin's prunes and folds, so that what it summarises is what the model sees (src/engine/apply.ts, `applyForSummary`;
 * src/engine/fold.ts, `foldForSummary`); nothing else of the request path runs, and the session's index stays that of
 * its latest request.
 */
const forSummariser = Effect.fnUntraced(function*(state: SessionState, sessionID: string, messages: Array<unknown>) {
  if (state.pruned.size === 0 && state.folds.size === 0) return
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
  foldForSummary(
    messages,
    [...state.folds.values()].map((record) =>
      record.calls.flatMap((callID) => {
        const call = index.byCallId.get(callID)
        return call === undefined ? [] : [call]
      })
    )
  )
})
