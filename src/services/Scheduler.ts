import { Clock, Context, Effect, Layer } from "effect"
import { billedPerRequest, cacheExpired, scheduleTrigger, type Trigger } from "../engine/schedule.ts"
import type { SessionState } from "../state/session.ts"
import { Config } from "./Config.ts"

/**
 * Decides, request by request, whether the automatic prunes found so far reach what is sent now, following
 * `cache.*` (see src/engine/schedule.ts for why they wait). Prunes the model or the user asks for never wait.
 */
export class Scheduler extends Context.Service<Scheduler, {
  /**
   * Records the request (its time) and returns why pending prunes apply to it, or undefined to keep them.
   * `historyRequestAt`: when the history's latest request was sent, for a session this process has no request of.
   */
  readonly decide: (
    state: SessionState,
    request: { readonly pendingTokens: number; readonly contextTokens: number; readonly historyRequestAt?: number }
  ) => Effect.Effect<Trigger | undefined>
  /** Whether the provider's cache has expired by now, for prunes the user asks for between requests. */
  readonly expired: (state: SessionState) => Effect.Effect<boolean>
}>()("opencode-context-pruner/Scheduler") {
  static readonly layer = Layer.effect(
    Scheduler,
    Effect.gen(function*() {
      const { current } = yield* Config
      const cache = current.cache
      // A history stamped ahead of this clock (another machine, a skewed clock) counts as just sent.
      const idleSeconds = (now: number, last: number | undefined) =>
        last === undefined ? undefined : Math.max(0, now - last) / 1000
      return Scheduler.of({
        expired: (state) =>
          Effect.map(Clock.currentTimeMillis, (now) =>
            cacheExpired(idleSeconds(now, state.lastRequestAt), cache.ttlSeconds)),
        decide: (state, request) =>
          Effect.map(Clock.currentTimeMillis, (now) => {
            const idle = idleSeconds(now, state.lastRequestAt ?? request.historyRequestAt)
            state.lastRequestAt = now
            return scheduleTrigger({
              mode: cache.mode,
              pendingTokens: request.pendingTokens,
              minPruneTokens: cache.minPruneTokens,
              contextTokens: request.contextTokens,
              contextLimit: state.model?.contextLimit,
              pressure: cache.pressure,
              idleSeconds: idle,
              ttlSeconds: cache.ttlSeconds,
              billedPerRequest: state.model !== undefined && billedPerRequest.has(state.model.providerID)
            })
          })
      })
    })
  )
}
