import { Clock, Context, Effect, Layer, Ref } from "effect"
import {
  cacheExpired,
  type ChangeAt,
  dateChanged,
  type Decision,
  horizon,
  paceAfter,
  paceOf,
  rebuildTokens,
  schedule
} from "../engine/schedule.ts"
import { type PricingProfile, profileFor, profiles } from "../pricing/profiles.ts"
import type { SessionState } from "../engine/session.ts"
import { Config } from "./Config.ts"

/** One request, as far as the decision goes. */
export interface Request {
  /** Tokens the pending automatic prunes would take out of every request. */
  readonly pendingTokens: number
  readonly contextTokens: number
  /** Where the earliest pending prune sits. */
  readonly change: ChangeAt
  /** The pending prunes after the plugin's cache breakpoint, when others precede it. */
  readonly afterBreakpoint?: { readonly pendingTokens: number; readonly change: ChangeAt }
  /** OpenCode compacted the session since the previous request. */
  readonly compacted: boolean
  /** The request goes to another model (or variant) than the previous one: the provider holds no cache of its messages. */
  readonly modelSwitched: boolean
  /** An instruction file changed on disk since the previous request: OpenCode's system prompt is not the same. */
  readonly instructionsChanged: boolean
  /** The request goes to another agent than the previous one (`agentSwitch`). */
  readonly agentSwitch: { readonly from: string; readonly to: string } | undefined
  /** When the history's requests were sent (ms, oldest first), for a session this process has seen no request of. */
  readonly history: () => ReadonlyArray<number>
}

export interface Scheduled extends Decision {
  readonly cold: boolean
  readonly profile: PricingProfile
}

/**
 * Decides, request by request, whether the automatic prunes found so far reach what is sent now, under the pricing
 * profile of the session's provider (see src/engine/schedule.ts for why they wait). Prunes the model or the user asks
 * for never wait.
 */
export class Scheduler extends Context.Service<Scheduler, {
  /** Records the request (its time, the session's pace) and returns whether pending prunes apply to it, and why not. */
  readonly decide: (state: SessionState, request: Request) => Effect.Effect<Scheduled>
  /**
   * How the session's provider bills input: the configured profile, else the one its model calls for; Anthropic's, the
   * dearest to rebuild, while the model is not known (`priced`).
   */
  readonly profile: (state: SessionState) => PricingProfile
  /** Whether `profile` is the provider's (configured, or its model known): only then are costs priced under it. */
  readonly priced: (state: SessionState) => boolean
  /** Requests the prompt cache is expected to serve from now on. */
  readonly horizon: (state: SessionState) => number
  /**
   * The tools OpenCode offers changed (an MCP server's list, or a server gone). Tool definitions head every request,
   * before the system prompt, so each session's next request is written whole again, with prunes or without.
   * OpenCode 1.18.33 announces a change once it holds the new list, and takes a request's tools before it calls
   * `messages.transform`: the request taken as cold is the first that sends the new list (test/e2e/mcp.e2e.test.ts).
   */
  readonly toolsChanged: Effect.Effect<void>
  /**
   * The system prompts of the agents OpenCode's config defines (`agentPrompts`): a request to another agent than the
   * previous one's is cold when their prompts differ.
   */
  readonly agentsConfigured: (prompts: ReadonlyMap<string, string>) => Effect.Effect<void>
}>()("opencode-context-pruner/Scheduler") {
  static readonly layer: Layer.Layer<Scheduler, never, Config> = Layer.effect(
    Scheduler,
    Effect.gen(function*() {
      // Read at each use: a config file edited while OpenCode runs applies from the next request on.
      const config = yield* Config
      const toolChanges = yield* Ref.make(0)
      const agentPrompts = yield* Ref.make<ReadonlyMap<string, string>>(new Map())
      // A history stamped ahead of this clock (another machine, a skewed clock) counts as just sent.
      const idleSeconds = (now: number, last: number | undefined) =>
        last === undefined ? undefined : Math.max(0, now - last) / 1000
      const profile = (state: SessionState): PricingProfile => {
        const cache = config.current.cache
        if (cache.pricing !== "auto") return profiles[cache.pricing]
        const model = state.model
        return model === undefined ? profiles.anthropic : profileFor(model)
      }
      return Scheduler.of({
        profile,
        priced: (state) => config.current.cache.pricing !== "auto" || state.model !== undefined,
        horizon: (state) => horizon(state.pace ?? { requests: 1, coldGaps: 0, run: 1 }, config.current.cache.horizon),
        toolsChanged: Ref.update(toolChanges, (count) => count + 1),
        agentsConfigured: (prompts) => Ref.set(agentPrompts, prompts),
        decide: (state, request) =>
          Effect.map(Effect.all([Clock.currentTimeMillis, Ref.get(toolChanges), Ref.get(agentPrompts)]), ([
            now,
            tools,
            prompts
          ]) => {
            const cache = config.current.cache
            let last = state.lastRequestAt
            if (state.pace === undefined) {
              const times = request.history()
              state.pace = paceOf(times, cache.ttlSeconds)
              last = times.at(-1)
            }
            // A session this process sends for the first time after a change may have gone out with the new tools
            // already (before a restart): it is not taken as cold, as a rewrite for nothing costs more than a free
            // application missed.
            const toolsChanged = state.toolsSeen !== undefined && state.toolsSeen !== tools
            const agentSwitch = request.agentSwitch
            const promptChanged = agentSwitch !== undefined &&
              prompts.get(agentSwitch.from) !== prompts.get(agentSwitch.to)
            const cold = request.modelSwitched || request.instructionsChanged || promptChanged || toolsChanged ||
              cacheExpired(idleSeconds(now, last), cache.ttlSeconds) || dateChanged(now, last)
            state.lastRequestAt = now
            state.toolsSeen = tools
            state.pace = paceAfter(state.pace, cold)
            const pricing = profile(state)
            const rebuild = (change: ChangeAt) =>
              rebuildTokens(pricing, {
                contextTokens: request.contextTokens,
                systemTokens: state.systemTokens ?? 0,
                change
              })
            const near = request.afterBreakpoint
            const decision = schedule({
              mode: cache.mode,
              profile: pricing,
              pendingTokens: request.pendingTokens,
              minPruneTokens: cache.minPruneTokens,
              contextTokens: request.contextTokens,
              contextLimit: state.model?.contextLimit,
              pressure: cache.pressure,
              rebuildTokens: rebuild(request.change),
              afterBreakpoint: near === undefined
                ? undefined
                : { pendingTokens: near.pendingTokens, rebuildTokens: rebuild(near.change) },
              cold,
              compacted: request.compacted,
              horizon: horizon(state.pace, cache.horizon),
              waited: state.waited,
              patience: cache.patience
            })
            const weighed = decision.scope === "afterBreakpoint" && near !== undefined
              ? near.pendingTokens
              : request.pendingTokens
            state.waited = decision.trigger === undefined && weighed > 0 ? state.waited + weighed * pricing.read : 0
            return { ...decision, cold, profile: pricing }
          })
      })
    })
  )
}
