import { Effect } from "effect"
import type { PluginConfig } from "../config/schema.ts"
import { type AppliedPrune, applyPrunes } from "../engine/apply.ts"
import { automaticCandidates } from "../engine/automatic.ts"
import type { ToolCall } from "../engine/calls.ts"
import { estimateContext, rebuildEstimate } from "../engine/context.ts"
import { appendTail } from "../engine/inject.ts"
import { listPrunable, nudgeDue } from "../engine/listing.ts"
import { type Handle, idHandle, recallHandle } from "../engine/placeholders.ts"
import { makeProtection, type Protection } from "../engine/protection.ts"
import { prunableBlock } from "../engine/prunable.ts"
import type { Reason } from "../engine/strategies/candidate.ts"
import { findSessionId } from "../host/messages.ts"
import { Config } from "../services/Config.ts"
import { Ledger, type Prune } from "../services/Ledger.ts"
import { Logger } from "../services/Logger.ts"
import { Notifier } from "../services/Notifier.ts"
import { Paths } from "../services/Paths.ts"
import { Scheduler } from "../services/Scheduler.ts"
import { SessionStore } from "../services/SessionStore.ts"
import { type ToolIndex, ToolCache } from "../services/ToolCache.ts"
import { type SessionState, stableId } from "../state/session.ts"

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
  const cache = yield* ToolCache
  const ledger = yield* Ledger
  const notifier = yield* Notifier
  const logger = yield* Logger
  const scheduler = yield* Scheduler
  const { current: config } = yield* Config
  const { worktree } = yield* Paths
  const handle = handleFor(config)
  yield* store.use(sessionID, (state) =>
    Effect.gen(function*() {
      if (state.isSubAgent) return
      if (state.compacting) {
        state.compacting = false
        return
      }
      const index = yield* cache.sync(sessionID, messages)
      followCompaction(state, index)
      const idOf = (call: ToolCall) => (call.id ??= stableId(state, call.callID))
      for (const call of index.changed) idOf(call)
      const protection = protectionFor(config, worktree, index)

      const contextTokens = contextOf(state, index)
      const candidates = automaticCandidates({
        calls: index.calls,
        pruned: state.pruned,
        restored: state.restored,
        protection,
        strategies: config.strategies,
        currentTurn: index.turns,
        contextTokens
      })
      const pending: Array<Prune> = []
      let pendingTokens = 0
      for (const { callID, reason } of candidates) {
        const call = index.byCallId.get(callID)!
        const prune = { call, reason, id: idOf(call) }
        const saving = yield* ledger.saving(call, reason, prune.id, handle)
        if (saving < 1) continue
        pending.push(prune)
        pendingTokens += saving
      }
      const trigger = yield* scheduler.decide(state, { pendingTokens, contextTokens })
      if (trigger !== undefined) {
        const rebuilt = rebuildEstimate({ calls: index.calls, changed: new Set(pending.map((p) => p.call.callID)), contextTokens })
        const recorded = yield* ledger.record(state, pending, handle, {
          minSaving: 1,
          rebuild: { cold: trigger === "cold", tokens: rebuilt }
        })
        yield* notifier.record(sessionID, recorded, { origin: state.origin, sessionTokens: state.stats.tokens })
      }

      const applied: Array<AppliedPrune> = []
      for (const call of index.calls) {
        const record = state.pruned.get(call.callID)
        if (record !== undefined) applied.push({ call, reason: record.reason as Reason, id: idOf(call) })
      }
      const tail = tailText(state, index, config, protection, idOf, messages.length - 1)
      applyPrunes(messages, applied, handle)
      if (tail !== undefined) appendTail(messages, tail)
      yield* logger.snapshot(sessionID, messages)
    }))
})

/** The `<prunable-tools>` block for this request, or undefined when the model has no pruning tool. */
const tailText = (
  state: SessionState,
  index: ToolIndex,
  config: PluginConfig,
  protection: Protection,
  idOf: (call: ToolCall) => number,
  lastMessage: number
): string | undefined => {
  if (!config.tools.discard.enabled && !config.tools.extract.enabled) return undefined
  const ids = index.calls.map(idOf)
  if (state.cooldownAfter !== undefined) {
    const after = state.cooldownAfter
    const moved = index.calls.some((call, i) => ids[i]! > after && call.tool !== "discard" && call.tool !== "extract")
    if (!moved) return prunableBlock({ listed: [], nudge: false, cooldown: true })
    state.cooldownAfter = undefined
  }
  const listed = listPrunable(index.calls, idOf, {
    pruned: state.pruned,
    protection,
    protectedTools: config.tools.settings.protectedTools
  })
  // The nudge is decided from this request alone (plus the last prune): it is due on the request whose newest
  // results (those in the last message) take the count since the last prune past a multiple of the frequency. So a
  // request sent again unchanged gets the same bytes, and the nudge still comes at most once per interval.
  const results = index.calls.filter((call, i) => ids[i]! > state.nudgeAfter && call.status === "completed")
  const arrived = results.filter((call) => call.messageIndex === lastMessage).length
  const frequency = config.tools.settings.nudgeFrequency
  const crossed = Math.floor(results.length / frequency) > Math.floor((results.length - arrived) / frequency)
  const nudge = crossed && nudgeDue({
    enabled: config.tools.settings.nudgeEnabled,
    frequency,
    minTokens: config.tools.settings.nudgeMinTokens,
    resultsSince: results.length,
    listed
  })
  return prunableBlock({ listed, nudge, cooldown: false })
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
  state.dirty = true
}
