import { Clock, Context, Effect, Layer } from "effect"
import type { ToolCall } from "../engine/calls.ts"
import type { PrunedCall } from "../engine/notes.ts"
import type { RecallHint } from "../engine/placeholders.ts"
import { targetOf } from "../engine/placeholders.ts"
import { rebuildTokens } from "../engine/schedule.ts"
import { foldShares, sendsBeforeFold } from "../engine/figures.ts"
import type { FoldPlan } from "../engine/fold.ts"
import type { Delivery, Prune } from "../engine/request.ts"
import type { Reason } from "../engine/reasons.ts"
import { noteFolds, notePrunes } from "../engine/view.ts"
import { changed, type SessionState, setFold, unfoldCalls } from "../engine/session.ts"
import { Ledger } from "./Ledger.ts"
import { Notifier } from "./Notifier.ts"

/**
 * The one way a prune happens. `apply` decides it: the session's state records it (pending until a request carries
 * it), the request path's view state renders it from then on. `deliver`, on every request, counts what reaches the
 * model: the statistics, the lifetime totals, the note to the user, and what the rebuild of the provider's cache cost.
 * `restore` undoes a prune for the user; `withdraw` one whose ground OpenCode's undo took away.
 */
export class Pruner extends Context.Service<Pruner, {
  /**
   * Records prunes. Calls already pruned, with nothing to replace, or saving fewer than `minSaving` tokens
   * (automatic rules never make a request bigger) are skipped. Returns what was recorded.
   */
  readonly apply: (
    state: SessionState,
    prunes: ReadonlyArray<Prune>,
    recallHint: RecallHint,
    options?: { readonly minSaving?: number }
  ) => Effect.Effect<ReadonlyArray<PrunedCall>>
  /**
   * Records folds of old turns (src/engine/fold.ts), pending until a request carries them. A turn already folded is
   * skipped. Returns how many were recorded.
   */
  readonly fold: (state: SessionState, folds: ReadonlyArray<FoldPlan>) => Effect.Effect<number>
  /**
   * The request being built carries every recorded prune of its calls: counts those sent for the first time. Returns
   * the position of the earliest call whose content now differs from what earlier requests sent, if any.
   */
  readonly deliver: (state: SessionState, delivery: Delivery) => Effect.Effect<number | undefined>
  /**
   * Undoes the prunes of these calls for the user, who restored them, and unfolds their turns: automatic rules leave
   * the calls alone from then on. Returns the tokens they took out of every request.
   */
  readonly restore: (state: SessionState, callIDs: ReadonlyArray<string>) => number
  /**
   * Undoes the prunes of these calls as if they had never been made, with the findings an extract of them handed on:
   * OpenCode's undo took out of the session what they stood on (see src/engine/revert.ts). Automatic rules may prune
   * the calls again; their turns are unfolded. What they already saved stays in the statistics, as a restore's does.
   */
  readonly withdraw: (state: SessionState, callIDs: ReadonlyArray<string>) => void
}>()("opencode-context-pruner/Pruner") {
  static readonly layer = Layer.effect(
    Pruner,
    Effect.gen(function*() {
      const ledger = yield* Ledger
      const notifier = yield* Notifier
      // What each pending prune needs to be reported when it is delivered.
      const details = new Map<string, PrunedCall>()

      const apply = Effect.fnUntraced(function*(
        state: SessionState,
        prunes: ReadonlyArray<Prune>,
        recallHint: RecallHint,
        options?: { readonly minSaving?: number }
      ) {
        const minSaving = options?.minSaving ?? 0
        const at = yield* Clock.currentTimeMillis
        const recorded: Array<PrunedCall> = []
        const calls: Array<ToolCall> = []
        for (const prune of prunes) {
          const { call, reason } = prune
          call.id ??= prune.id
          if (state.pruned.has(call.callID) || targetOf(call, reason) === undefined) continue
          const tokens = ledger.saving(call, reason, prune.id, recallHint, prune.of)
          if (tokens < minSaving) continue
          state.pruned.set(call.callID, {
            reason,
            tokens,
            at,
            pending: true,
            ...(prune.of === undefined ? {} : { of: prune.of }),
            ...(prune.message === undefined ? {} : { message: prune.message })
          })
          state.undelivered.add(call.callID)
          const entry: PrunedCall = {
            id: prune.id,
            tool: call.tool,
            keyParameter: call.keyParameter,
            reason,
            tokens,
            distillation: prune.distillation
          }
          details.set(call.callID, entry)
          recorded.push(entry)
          calls.push(call)
        }
        if (recorded.length === 0) return recorded
        changed(state)
        if (state.viewState !== undefined) notePrunes(state.viewState, calls, state.pruned, state.revision)
        return recorded
      })

      const fold = Effect.fnUntraced(function*(state: SessionState, folds: ReadonlyArray<FoldPlan>) {
        const at = yield* Clock.currentTimeMillis
        const made = folds.filter((plan) => !state.folds.has(plan.key))
        for (const plan of made) {
          setFold(state, plan.key, {
            calls: plan.calls.map((call) => call.callID),
            tokens: plan.tokens,
            at,
            pending: true
          })
        }
        if (made.length > 0 && state.viewState !== undefined) noteFolds(state.viewState, made, state.revision)
        return made.length
      })

      const deliver = Effect.fnUntraced(function*(state: SessionState, delivery: Delivery) {
        const { calls, contextTokens, systemTokens } = delivery
        const delivered: Array<PrunedCall> = []
        const notify: Array<PrunedCall> = []
        let first = Infinity
        let fresh = 0
        if (state.undelivered.size > 0) {
          for (const call of calls) {
            if (!state.undelivered.has(call.callID)) continue
            const record = state.pruned.get(call.callID)
            state.undelivered.delete(call.callID)
            if (record === undefined) continue
            const { pending: _, ...sent } = record
            state.pruned.set(call.callID, sent)
            const entry = details.get(call.callID) ?? {
              id: state.ids.get(call.callID) ?? 0,
              tool: call.tool,
              keyParameter: call.keyParameter,
              reason: record.reason as Reason,
              tokens: record.tokens
            }
            details.delete(call.callID)
            delivered.push(entry)
            if (record.reason !== "sweep") notify.push(entry)
            // A repeat is pruned in content sent for the first time: no cached prefix changes.
            if (record.reason === "repeat") fresh += record.tokens
            else if (call.position < first) first = call.position
          }
        }
        if (state.undeliveredFolds.size > 0) {
          for (const applied of delivery.folds) {
            if (!state.undeliveredFolds.has(applied.key)) continue
            const record = state.folds.get(applied.key)
            if (record === undefined) continue
            const { pending: _, ...sent } = record
            // Sent now: no longer pending, and nothing else about the fold changes (the view need not be derived again).
            state.folds.set(applied.key, sent)
            state.undeliveredFolds.delete(applied.key)
            const head = applied.calls[0]!
            const sends = new Map(
              applied.calls.map((
                call
              ) => [call.callID, sendsBeforeFold(call, state.pruned.get(call.callID)?.tokens ?? 0)])
            )
            const shares = foldShares([...sends.keys()], record.tokens, (callID) => sends.get(callID) ?? 0)
            const entry: PrunedCall = {
              id: head.id ?? 0,
              tool: head.tool,
              keyParameter: head.keyParameter,
              reason: "fold",
              tokens: record.tokens,
              folded: applied.calls.map((call) => ({
                id: call.id ?? state.ids.get(call.callID) ?? 0,
                tool: call.tool,
                keyParameter: call.keyParameter,
                tokens: shares.get(call.callID) ?? 0,
                pruned: state.pruned.has(call.callID)
              }))
            }
            delivered.push(entry)
            notify.push(entry)
            if (head.position < first) first = head.position
          }
        }
        // Nothing is priced under a profile that is not the provider's (the model not known yet).
        const priced = delivery.priced !== false
        if (priced) {
          ledger.charge(state, {
            profile: delivery.profile,
            cold: delivery.cold,
            pruned: delivery.prunedTokens,
            fresh,
            contextTokens,
            reReads: delivery.reReads
          })
        }
        if (delivered.length === 0) return undefined
        // Repeats alone change nothing the provider cached: no application of prunes to count.
        const changedCached = first !== Infinity
        const rebuilt = !changedCached || delivery.cold
          ? 0
          : rebuildTokens(delivery.profile, {
            contextTokens,
            systemTokens,
            change: delivery.change
          })
        const { profile } = delivery
        const extra = priced && (profile.kind === "anthropic" || profile.kind === "openai")
          ? rebuilt * (profile.write - profile.read)
          : 0
        yield* ledger.deliver(
          state,
          delivered,
          changedCached ? { cold: delivery.cold, rebuiltTokens: rebuilt, cost: extra } : undefined
        )
        yield* notifier.record(state.sessionID, notify, { origin: state.origin, sessionTokens: state.stats.tokens })
        return changedCached ? first : undefined
      })

      const forget = (state: SessionState, callID: string): number => {
        unfoldCalls(state, [callID])
        const record = state.pruned.get(callID)
        if (record === undefined) return 0
        state.pruned.delete(callID)
        details.delete(callID)
        // One never sent is not counted anywhere.
        state.undelivered.delete(callID)
        return record.tokens
      }

      const restore = (state: SessionState, callIDs: ReadonlyArray<string>) => {
        let tokens = 0
        for (const callID of callIDs) {
          const key = state.folded.get(callID)
          if (key === undefined) continue
          tokens += state.folds.get(key)?.tokens ?? 0
          // A folded call is in what is sent again, whether or not a prune of its own took its content.
          state.restored.add(callID)
          unfoldCalls(state, [callID])
        }
        for (const callID of callIDs) {
          if (!state.pruned.has(callID)) continue
          tokens += forget(state, callID)
          state.restored.add(callID)
        }
        if (callIDs.length > 0) changed(state)
        return tokens
      }

      const withdraw = (state: SessionState, callIDs: ReadonlyArray<string>) => {
        if (callIDs.length === 0) return
        const extracted = new Set<number>()
        for (const callID of callIDs) {
          if (state.pruned.get(callID)?.reason === "extract") extracted.add(state.ids.get(callID) ?? 0)
          forget(state, callID)
        }
        if (extracted.size > 0) state.findings = state.findings.filter((finding) => !extracted.has(finding.id))
        changed(state)
      }

      return Pruner.of({ apply, fold, deliver, restore, withdraw })
    })
  )
}
