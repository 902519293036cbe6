import { Clock, Context, Effect, Layer } from "effect"
import { writeBehind } from "../data/writeBehind.ts"
import type { ToolCall } from "../engine/calls.ts"
import { type PrunedCall, tallyByReason } from "../engine/notes.ts"
import type { RecallHint } from "../engine/placeholders.ts"
import type { ReRead } from "../engine/request.ts"
import { savingOf } from "../engine/savings.ts"
import type { Reason } from "../engine/reasons.ts"
import type { PricingProfile } from "../pricing/profiles.ts"
import { recordSessions, sessionTotals, totalsOf } from "../state/lifetime.ts"
import type { CopyOf, LifetimeTotals, SessionTotals, Tally } from "../state/schema.ts"
import type { SessionState } from "../engine/session.ts"
import { Persistence, type PersistenceError } from "./Persistence.ts"
import { Tokenizer } from "./Tokenizer.ts"

/** Prunes reaching the model together in one request, and what that request's cache rebuild cost. */
export interface Application {
  /** The cache had expired anyway: nothing rebuilt. */
  readonly cold: boolean
  /** Tokens the provider had to write again (estimated). */
  readonly rebuiltTokens: number
  /** What that rebuild cost on top of reading them, in uncached-input-token units. */
  readonly cost: number
}

/** One request, for the cost ledger: the tokens pruning took out of it, and what it made the model read again. */
export interface Charge {
  readonly profile: PricingProfile
  readonly cold: boolean
  /** Tokens the applied prunes take out of this request. */
  readonly pruned: number
  /** Of those, in content this request sends for the first time (repeats): it would have been written, not read. */
  readonly fresh: number
  /** The request's estimated size. */
  readonly contextTokens: number
  readonly reReads: ReRead
}

/**
 * The books: the tokens each prune takes out of every request (what was removed minus the placeholder left in its
 * place, counted once, from the cached counts), per reason and per tool, counted when the prune first reaches the
 * model; the same totals across all sessions on this machine; and the cost effect under the provider's pricing.
 */
export class Ledger extends Context.Service<Ledger, {
  /** Tokens a prune would take out of every request, net of its placeholder (estimated, like every count on the request path). */
  readonly saving: (call: ToolCall, reason: Reason, id: number, recallHint: RecallHint, of?: CopyOf) => number
  /**
   * Counts prunes that reach the model in the request being sent; `application` when they change content the
   * provider had cached (not for repeats alone, pruned in content sent for the first time).
   */
  readonly deliver: (
    state: SessionState,
    calls: ReadonlyArray<PrunedCall>,
    application: Application | undefined
  ) => Effect.Effect<void>
  /** Counts what pruning saved on one request, and what the model's reads of masked files cost (recording those). */
  readonly charge: (state: SessionState, request: Charge) => void
  /** Lifetime totals, including what is not yet written. */
  readonly lifetime: Effect.Effect<LifetimeTotals, PersistenceError>
  readonly flush: Effect.Effect<void>
}>()("opencode-context-pruner/Ledger") {
  static readonly layer = Layer.effect(
    Ledger,
    Effect.gen(function*() {
      const tokenizer = yield* Tokenizer
      const persistence = yield* Persistence
      // Each session's totals since they were last written: the lifetime file keeps every session's own totals, so a
      // process that prunes what another one pruned in the same session does not count it again.
      const unsaved = new Map<string, SessionTotals>()

      const writer = yield* writeBehind(Effect.suspend(() => {
        if (unsaved.size === 0) return Effect.void
        const batch = new Map(unsaved)
        unsaved.clear()
        return persistence.recordLifetime(batch).pipe(
          Effect.asVoid,
          Effect.catch((error) =>
            Effect.sync(() => {
              for (const [sessionID, totals] of batch) if (!unsaved.has(sessionID)) unsaved.set(sessionID, totals)
            }).pipe(Effect.andThen(Effect.logWarning("could not update lifetime statistics", error)))
          )
        )
      }))

      const saving = (call: ToolCall, reason: Reason, id: number, recallHint: RecallHint, of?: CopyOf): number =>
        savingOf(call, reason, id, recallHint, tokenizer.estimate, of)

      const deliver = Effect.fnUntraced(function*(
        state: SessionState,
        calls: ReadonlyArray<PrunedCall>,
        application: Application | undefined
      ) {
        if (calls.length === 0) return
        const at = yield* Clock.currentTimeMillis
        // Each call counts once: under its own prune's reason, or, when only its turn's fold takes it out, as folded
        // (`tallyByReason`). A fold's tokens go to its reason whole, and by tool to its calls in their shares.
        const count = tallyByReason(calls).calls
        const tokens = calls.reduce((sum, entry) => sum + entry.tokens, 0)
        const byReason: Record<string, Tally> = {}
        for (const entry of calls) {
          const n = entry.folded === undefined ? 1 : entry.folded.filter((member) => !member.pruned).length
          byReason[entry.reason] = add(byReason[entry.reason], n, entry.tokens)
        }
        const stats = state.stats
        const byTool = { ...stats.byTool }
        for (const entry of calls) {
          if (entry.folded === undefined) {
            byTool[entry.tool] = add(byTool[entry.tool], 1, entry.tokens)
            continue
          }
          for (const member of entry.folded) {
            byTool[member.tool] = add(byTool[member.tool], member.pruned ? 0 : 1, member.tokens)
          }
        }
        const sessionByReason = { ...stats.byReason }
        for (const [reason, tally] of Object.entries(byReason)) {
          sessionByReason[reason] = add(sessionByReason[reason], tally.calls, tally.tokens)
        }
        state.stats = {
          ...stats,
          calls: stats.calls + count,
          tokens: stats.tokens + tokens,
          applications: application === undefined ? stats.applications : {
            count: stats.applications.count + 1,
            cold: stats.applications.cold + (application.cold ? 1 : 0),
            rebuiltTokens: stats.applications.rebuiltTokens + (application.cold ? 0 : application.rebuiltTokens)
          },
          cost: application === undefined || application.cold
            ? stats.cost
            : { ...stats.cost, rebuilt: stats.cost.rebuilt + application.cost },
          byReason: sessionByReason,
          byTool,
          lastPrune: { at, reason: calls[0]!.reason, calls: count, tokens }
        }
        // Figures only: what the request path derived from the prunes (the view, the status's list) still holds.
        state.dirty = true
        unsaved.set(state.sessionID, sessionTotals(state.stats))
        yield* writer.request
      })

      const charge = (state: SessionState, request: Charge) => {
        const { profile } = request
        const price = (tokens: number, fresh: boolean) => {
          if (profile.kind === "per-request") return 0
          if (profile.kind === "none") return tokens
          return tokens * (fresh || request.cold ? profile.write : profile.read)
        }
        const cost = state.stats.cost
        const { first, tokens: reRead } = request.reReads
        let firstTokens = 0
        for (const call of first) {
          state.reReads.set(call.callID, call.totalTokens)
          firstTokens += call.totalTokens
        }
        // Without pruning the model would have had the file already: each read costs what it sends on every request
        // (it takes the place the pruned copy had; once pruned in its turn, the saving counted for it is none), and
        // the request it was asked for in, read from the cache.
        const reReadCost = price(reRead - firstTokens, false) + price(firstTokens, true) +
          (first.length > 0 ? price(Math.max(0, request.contextTokens - firstTokens), false) : 0)
        state.stats = {
          ...state.stats,
          cost: {
            profile: profile.name,
            requests: cost.requests + 1,
            saved: cost.saved + price(request.pruned - request.fresh, false) + price(request.fresh, true),
            rebuilt: cost.rebuilt,
            reReads: cost.reReads + first.length,
            reRead: cost.reRead + reReadCost
          }
        }
        state.dirty = true
      }

      // Draining first: totals being written are in neither memory nor the file until the write completes.
      const lifetime = Effect.map(
        Effect.andThen(writer.drain, persistence.lifetime),
        (stored) => totalsOf(recordSessions(stored, unsaved, stored.updatedAt))
      )

      return Ledger.of({ saving, deliver, charge, lifetime, flush: writer.drain })
    })
  )
}

const add = (tally: Tally | undefined, calls: number, tokens: number): Tally => ({
  calls: (tally?.calls ?? 0) + calls,
  tokens: (tally?.tokens ?? 0) + tokens
})
