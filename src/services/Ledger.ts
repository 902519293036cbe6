import { Clock, Context, Effect, Layer } from "effect"
import { writeBehind } from "../data/writeBehind.ts"
import type { ToolCall } from "../engine/calls.ts"
import type { PrunedCall } from "../engine/notes.ts"
import {
  type Handle,
  inputPlaceholder,
  outputPlaceholder,
  type Target,
  targetOf,
  targetTokens
} from "../engine/placeholders.ts"
import type { Reason } from "../engine/strategies/candidate.ts"
import type { LifetimeDelta, LifetimeFile, Tally } from "../state/schema.ts"
import { changed, type SessionState } from "../state/session.ts"
import { Persistence, type PersistenceError } from "./Persistence.ts"
import { Tokenizer } from "./Tokenizer.ts"

export interface RecordOptions {
  readonly minSaving?: number
  /** The prompt cache these prunes make the provider rebuild: none when it had expired anyway. */
  readonly rebuild?: { readonly cold: boolean; readonly tokens: number }
}

export interface Prune {
  readonly call: ToolCall
  readonly reason: Reason
  readonly id: number
  readonly distillation?: string | undefined
}

/**
 * The books: which calls are pruned in a session, the tokens each prune takes out of every request (what was
 * removed minus the placeholder left in its place, counted once, from the cached counts), per reason and per
 * tool, and the same totals across all sessions on this machine.
 */
export class Ledger extends Context.Service<Ledger, {
  /**
   * Records prunes in the session's state. Calls already pruned, with nothing to replace, or saving fewer than
   * `minSaving` tokens (automatic rules never make a request bigger) are skipped.
   */
  readonly record: (
    state: SessionState,
    prunes: ReadonlyArray<Prune>,
    handle: Handle,
    options?: RecordOptions
  ) => Effect.Effect<ReadonlyArray<PrunedCall>>
  /** Tokens a prune would take out of every request, net of its placeholder (estimated, like every count on the request path). */
  readonly saving: (call: ToolCall, reason: Reason, id: number, handle: Handle) => number
  /** Lifetime totals, including what is not yet written. */
  readonly lifetime: Effect.Effect<LifetimeFile, PersistenceError>
  readonly flush: Effect.Effect<void>
}>()("opencode-context-pruner/Ledger") {
  static readonly layer = Layer.effect(
    Ledger,
    Effect.gen(function*() {
      const tokenizer = yield* Tokenizer
      const persistence = yield* Persistence
      let unsaved: LifetimeDelta | undefined

      const writer = yield* writeBehind(Effect.suspend(() => {
        const delta = unsaved
        unsaved = undefined
        if (delta === undefined) return Effect.void
        return persistence.addToLifetime(delta).pipe(
          Effect.asVoid,
          Effect.catch((error) =>
            Effect.sync(() => {
              unsaved = merge(unsaved, delta)
            }).pipe(Effect.andThen(Effect.logWarning("could not update lifetime statistics", error)))
          )
        )
      }))

      const placeholderTokens = (call: ToolCall, reason: Reason, target: Target, id: number, handle: Handle): number => {
        if (target.kind === "output") return tokenizer.estimate(outputPlaceholder(call, reason, id, handle))
        let tokens = 0
        for (const key of target.keys) tokens += tokenizer.estimate(inputPlaceholder(call, reason, key, id, handle))
        return tokens
      }

      // A waiting prune is weighed on every request until it is applied; its saving never changes, so it is
      // computed once per call.
      const savings = new WeakMap<ToolCall, { reason: Reason; id: number; handle: Handle; tokens: number }>()
      const saving = (call: ToolCall, reason: Reason, id: number, handle: Handle): number => {
        const known = savings.get(call)
        if (known !== undefined && known.reason === reason && known.id === id && known.handle === handle) {
          return known.tokens
        }
        const target = targetOf(call, reason)
        if (target === undefined) return 0
        const tokens = Math.max(0, targetTokens(call, target) - placeholderTokens(call, reason, target, id, handle))
        savings.set(call, { reason, id, handle, tokens })
        return tokens
      }

      const record = Effect.fnUntraced(function*(
        state: SessionState,
        prunes: ReadonlyArray<Prune>,
        handle: Handle,
        options?: RecordOptions
      ) {
        const minSaving = options?.minSaving ?? 0
        const at = yield* Clock.currentTimeMillis
        const recorded: Array<PrunedCall> = []
        const firstInSession = state.stats.calls === 0 ? 1 : 0
        const byReason: Record<string, Tally> = {}
        for (const prune of prunes) {
          if (state.pruned.has(prune.call.callID) || targetOf(prune.call, prune.reason) === undefined) continue
          const tokens = saving(prune.call, prune.reason, prune.id, handle)
          if (tokens < minSaving) continue
          state.pruned.set(prune.call.callID, { reason: prune.reason, tokens, at })
          byReason[prune.reason] = add(byReason[prune.reason], 1, tokens)
          recorded.push({
            id: prune.id,
            tool: prune.call.tool,
            keyParameter: prune.call.keyParameter,
            reason: prune.reason,
            tokens,
            distillation: prune.distillation
          })
        }
        if (recorded.length === 0) return recorded
        const calls = recorded.length
        const tokens = recorded.reduce((sum, entry) => sum + entry.tokens, 0)
        const stats = state.stats
        const byTool = { ...stats.byTool }
        for (const entry of recorded) byTool[entry.tool] = add(byTool[entry.tool], 1, entry.tokens)
        const sessionByReason = { ...stats.byReason }
        for (const [reason, tally] of Object.entries(byReason)) {
          sessionByReason[reason] = add(sessionByReason[reason], tally.calls, tally.tokens)
        }
        const reason = recorded[0]!.reason
        const rebuild = options?.rebuild
        state.stats = {
          calls: stats.calls + calls,
          tokens: stats.tokens + tokens,
          applications: {
            count: stats.applications.count + 1,
            cold: stats.applications.cold + (rebuild?.cold === true ? 1 : 0),
            rebuiltTokens: stats.applications.rebuiltTokens + (rebuild === undefined || rebuild.cold ? 0 : rebuild.tokens)
          },
          byReason: sessionByReason,
          byTool,
          lastPrune: { at, reason, calls, tokens }
        }
        changed(state)
        unsaved = merge(unsaved, { sessions: firstInSession, calls, tokens, byReason })
        yield* writer.request
        return recorded
      })

      // Draining first: a delta being written is in neither memory nor the file until the write completes.
      const lifetime = Effect.map(Effect.andThen(writer.drain, persistence.lifetime), (stored) => {
        const delta = unsaved
        if (delta === undefined) return stored
        const byReason = { ...stored.byReason }
        for (const [reason, tally] of Object.entries(delta.byReason)) {
          byReason[reason] = add(byReason[reason], tally.calls, tally.tokens)
        }
        return {
          ...stored,
          sessions: stored.sessions + delta.sessions,
          calls: stored.calls + delta.calls,
          tokens: stored.tokens + delta.tokens,
          byReason
        }
      })

      return Ledger.of({ record, saving, lifetime, flush: writer.drain })
    })
  )
}

const add = (tally: Tally | undefined, calls: number, tokens: number): Tally => ({
  calls: (tally?.calls ?? 0) + calls,
  tokens: (tally?.tokens ?? 0) + tokens
})

const merge = (a: LifetimeDelta | undefined, b: LifetimeDelta): LifetimeDelta => {
  if (a === undefined) return b
  const byReason: Record<string, Tally> = { ...a.byReason }
  for (const [reason, tally] of Object.entries(b.byReason)) byReason[reason] = add(byReason[reason], tally.calls, tally.tokens)
  return {
    sessions: a.sessions + b.sessions,
    calls: a.calls + b.calls,
    tokens: a.tokens + b.tokens,
    byReason
  }
}
