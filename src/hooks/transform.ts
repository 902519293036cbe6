import { Effect } from "effect"
import type { PluginConfig } from "../config/schema.ts"
import type { ToolCall } from "../engine/calls.ts"
import { estimateContext, rebuildEstimate, rebuildFrom } from "../engine/context.ts"
import { appendTail } from "../engine/inject.ts"
import { type Handle, idHandle, recallHandle } from "../engine/placeholders.ts"
import { makeProtection, type Protection } from "../engine/protection.ts"
import { prunableBlock } from "../engine/prunable.ts"
import {
  applyView,
  listsPrunable,
  notePrunes,
  prunableTail,
  trackView,
  type View,
  viewCandidates,
  viewContext
} from "../engine/view.ts"
import { findSessionId, latestRequestAt } from "../host/messages.ts"
import { Config } from "../services/Config.ts"
import { Ledger, type Prune } from "../services/Ledger.ts"
import { Logger } from "../services/Logger.ts"
import { Notifier } from "../services/Notifier.ts"
import { Paths } from "../services/Paths.ts"
import { Scheduler } from "../services/Scheduler.ts"
import { SessionStore } from "../services/SessionStore.ts"
import { type ToolIndex, ToolCache } from "../services/ToolCache.ts"
import { changed, type SessionState, stableId } from "../state/session.ts"

/** How placeholders point back to the original content: the recall tool when the model has it. */
export const handleFor = (config: PluginConfig): Handle => (config.tools.recall.enabled ? recallHandle : idHandle)

/** The protection rules for the session's current view. */
export const protectionFor = (config: PluginConfig, worktree: string, index: ToolIndex): Protection =>
  makeProtection({
    patterns: config.protectedFilePatterns,
    worktree,
    turnProtection: config.turnProtection,
    currentTurn: index.turns
  })

/** The size of the session's latest request, estimated from the counts its index holds, less applied prunes. */
export const contextOf = (state: SessionState, index: ToolIndex): number =>
  estimateContext({
    calls: index.calls,
    textChars: index.textChars,
    systemTokens: state.systemTokens ?? 0,
    pruned: state.pruned
  })

/**
 * The prompt cache the provider rebuilds when the given calls are pruned before the next request: from the earliest
 * of them to the end, unless the cache has expired anyway. Prunes the model or the user asks for skip the scheduler,
 * but cost a rebuild all the same, so the ledger counts it for them too.
 */
export const rebuildFor = (
  state: SessionState,
  index: ToolIndex,
  callIDs: Iterable<string>,
  cold: boolean
): { readonly cold: boolean; readonly tokens: number } => ({
  cold,
  tokens: cold ? 0 : rebuildEstimate({ calls: index.calls, changed: new Set(callIDs), contextTokens: contextOf(state, index) })
})

/**
 * `experimental.chat.messages.transform`: runs before every model request on a fresh copy of the history, which
 * is mutated in place (OpenCode ignores a replaced array). Sub-agent sessions and OpenCode's compaction
 * summariser are left exactly as they came. Everything is decided first; the messages are only touched at the
 * end, so a failure on the way leaves the request as it was.
 */
export const transform = Effect.fn("hooks.transform")(function*(messages: Array<unknown>) {
  const sessionID = findSessionId(messages)
  if (sessionID === undefined) return
  const store = yield* SessionStore
  yield* store.use(sessionID, (state) => transformSession(state, sessionID, messages))
})

/**
 * The transform of one session's request, under its lock. A generator function defined once: one created per
 * request (`Effect.gen(function*() {...})` in the callback above) gets its own hidden class in V8, which points back
 * at it from the old generation, so everything it references (the request's copy of the history, megabytes in a
 * long session) would survive young-generation collections and be promoted, until a full collection.
 */
const transformSession = Effect.fnUntraced(function*(state: SessionState, sessionID: string, messages: Array<unknown>) {
  if (state.isSubAgent) return
  if (state.compacting) {
    state.compacting = false
    return
  }
  const cache = yield* ToolCache
  const ledger = yield* Ledger
  const notifier = yield* Notifier
  const logger = yield* Logger
  const scheduler = yield* Scheduler
  const { current: config } = yield* Config
  const { worktree } = yield* Paths
  const handle = handleFor(config)
  const index = yield* cache.sync(sessionID, messages)
  followCompaction(state, index)
  const idOf = (call: ToolCall) => (call.id ??= stableId(state, call.callID))
  for (const call of index.changed) idOf(call)
  const protection = protectionFor(config, worktree, index)
  const calls = index.calls
  const view = trackView(state.view, {
    calls,
    pass: index.pass,
    previousPass: index.previousPass,
    appendOnly: index.appendOnly,
    pruned: state.pruned,
    revision: state.revision,
    nudgeAfter: state.nudgeAfter,
    config,
    protection,
    handle,
    idOf
  })
  state.view = view

  const contextTokens = viewContext(view, index.textChars, state.systemTokens ?? 0)
  const candidates = viewCandidates(view, {
    calls,
    pruned: state.pruned,
    restored: state.restored,
    protection,
    currentTurn: index.turns,
    contextTokens
  })
  const pending: Array<Prune> = []
  let pendingTokens = 0
  let first = calls.length
  for (const { callID, reason } of candidates) {
    const call = index.byCallId.get(callID)!
    const id = idOf(call)
    const saving = ledger.saving(call, reason, id, handle)
    if (saving < 1) continue
    pending.push({ call, reason, id })
    pendingTokens += saving
    if (call.position < first) first = call.position
  }
  const trigger = yield* scheduler.decide(state, {
    pendingTokens,
    contextTokens,
    historyRequestAt: state.lastRequestAt === undefined ? latestRequestAt(messages) : undefined
  })
  if (trigger !== undefined) {
    const recorded = yield* ledger.record(state, pending, handle, {
      minSaving: 1,
      rebuild: { cold: trigger === "cold", tokens: pending.length === 0 ? 0 : rebuildFrom(first, calls.length, contextTokens) }
    })
    notePrunes(view, pending.map((prune) => prune.call), state.pruned, state.revision, idOf)
    yield* notifier.record(sessionID, recorded, { origin: state.origin, sessionTokens: state.stats.tokens })
  }

  const tail = tailText(state, index, view, config, protection, idOf, messages.length - 1)
  applyView(view, messages)
  if (tail !== undefined) appendTail(messages, tail)
  if (logger.debug) yield* logger.snapshot(sessionID, messages)
})

/** The `<prunable-tools>` block for this request, or undefined when the model has no pruning tool. */
const tailText = (
  state: SessionState,
  index: ToolIndex,
  view: View,
  config: PluginConfig,
  protection: Protection,
  idOf: (call: ToolCall) => number,
  lastMessage: number
): string | undefined => {
  if (!listsPrunable(config)) return undefined
  if (state.cooldownAfter !== undefined) {
    const after = state.cooldownAfter
    const moved = index.calls.some((call) => idOf(call) > after && call.tool !== "discard" && call.tool !== "extract")
    if (!moved) return prunableBlock({ listed: [], nudge: false, cooldown: true })
    state.cooldownAfter = undefined
  }
  return prunableTail(view, {
    calls: index.calls,
    pruned: state.pruned,
    protection,
    idOf,
    nudgeAfter: state.nudgeAfter,
    lastMessage
  })
}

/**
 * After a compaction OpenCode sends only the summary and what followed it (plus a tail of recent turns), so the
 * calls that vanished are forgotten. Numbering is not restarted: an ID, once given, is never given again.
 */
const followCompaction = (state: SessionState, index: ToolIndex) => {
  if (index.summaryId === undefined || index.summaryId === state.summaryId) return
  state.summaryId = index.summaryId
  for (const callID of state.ids.keys()) {
    if (!index.byCallId.has(callID)) {
      state.ids.delete(callID)
      state.pruned.delete(callID)
    }
  }
  changed(state)
}
