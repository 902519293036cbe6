import { Predicate } from "effect"
import { blocksOf } from "./anchor.ts"
import type { PricingProfile } from "../pricing/profiles.ts"

/**
 * When pending automatic prunes reach what is sent. Applying a prune changes the history at the pruned call, and the
 * provider then writes its prompt cache again from the last entry it can still use: under Anthropic's rules with
 * OpenCode's breakpoints, everything after the system prompt (src/pricing/profiles.ts). So a prune applied while the
 * cache is warm costs a rebuild now and saves its tokens on every later request the cache lives for. Prunes wait
 * until that pays, or until it is free:
 */
type Trigger =
  /** `cache.mode: "immediate"`, or a provider with no per-token cache cost (billed per request, or no cache). */
  | "immediate"
  /**
   * The cache expired (no request for `ttlSeconds`), the request goes to another model (a provider caches per
   * model), it is the first of a new day (`dateChanged`), the first since the tools OpenCode offers (an MCP server's)
   * or the instruction files of its system prompt (on disk) changed, or the first to or from an agent with a prompt of
   * its own: the whole prompt is written again anyway.
   */
  | "cold"
  /** OpenCode compacted the session: what follows the summary is sent for the first time. */
  | "compaction"
  /** The context fills `pressure` of the model's window: room matters more than the cache. */
  | "pressure"
  /** The pending saving over the cache's expected remaining life exceeds the rebuild. */
  | "break-even"

/**
 * In a warm cache, pending prunes apply when both hold:
 * - they pay for the rebuild within the requests the cache is expected to serve (the horizon, from the session's
 *   pace): a session about to pause or end would not get the saving back;
 * - keeping them out of the requests so far already cost `patience` times the rebuild (`waited`): the rule of renting
 *   skis until the rent reaches the price of buying. Prunes found a few at a time are applied together, not each at
 *   the price of a full rebuild, and whatever the future holds the choice costs at most 1 + `patience` times what
 *   hindsight would. A patience of 2 rather than the classic 1: a session that ends a few requests after a rebuild
 *   never gets it back, and under Anthropic's rules a rebuild rewrites the whole history; waiting twice as long keeps
 *   short sessions from paying for a rebuild in their last requests and costs long ones about 1%.
 * When the plugin's cache breakpoint (src/engine/anchor.ts) has pending prunes on both sides, those before it (an old
 * failed edit a later read supersedes, say) would make the provider write everything after the system prompt again
 * instead of what follows the breakpoint. They join the others only if their own saving pays for that difference
 * within the horizon; otherwise the prunes after the breakpoint are weighed alone and the older ones wait for a
 * request that writes everything anyway (a cold cache, a compaction, pressure).
 * Chosen by measurement against both rules alone (BENCHMARKS.md, "How the scheduling rule and the defaults were chosen").
 */

/**
 * Why pending prunes wait, for `/dcp context`, `/dcp stats` and the sidebar: too small a batch; a warm cache they
 * would not pay back within; or, paying back within it, gathering into one batch until waiting has cost `patience`
 * rebuilds.
 */
export interface Waiting {
  readonly reason: "warm-cache" | "below-minimum" | "gathering"
  /** Later requests within the cache's life for applying now to pay back. */
  readonly paysBackAfter: number
  /** Later requests the cache is expected to live for (the horizon). */
  readonly horizon: number
  /** Gathering: more requests, at the current pending tokens, until they apply. */
  readonly appliesAfter?: number
}

/**
 * The session's pace: its requests so far, how many followed a pause longer than the cache TTL, and the requests
 * since the latest such pause (this one included).
 */
export interface Pace {
  readonly requests: number
  readonly coldGaps: number
  readonly run: number
}

export const paceAfter = (pace: Pace | undefined, cold: boolean): Pace => {
  const before = pace ?? { requests: 0, coldGaps: 0, run: 0 }
  return {
    requests: before.requests + 1,
    coldGaps: before.coldGaps + (cold && before.requests > 0 ? 1 : 0),
    run: cold ? 1 : before.run + 1
  }
}

/** The pace of a history from the times of its requests (ms, oldest first). */
export const paceOf = (times: ReadonlyArray<number>, ttlSeconds: number): Pace | undefined => {
  let pace: Pace | undefined
  for (let i = 0; i < times.length; i++) pace = paceAfter(pace, i > 0 && times[i]! - times[i - 1]! > ttlSeconds * 1000)
  return pace
}

/**
 * How many more requests the prompt cache is expected to serve before it expires or the session ends: the length of
 * the session's warm runs so far (requests between pauses longer than the TTL), on average, unless `cache.horizon`
 * sets a number. Chosen by measurement (BENCHMARKS.md, "How the scheduling rule was chosen").
 */
export const horizon = (pace: Pace, configured: "auto" | number = "auto"): number =>
  configured === "auto" ? Math.max(1, pace.requests / (pace.coldGaps + 1)) : configured

export interface ScheduleInput {
  readonly mode: "auto" | "immediate"
  readonly profile: PricingProfile
  /** Tokens the pending prunes take out of every request. */
  readonly pendingTokens: number
  /** The smallest batch applied in a warm cache. */
  readonly minPruneTokens: number
  readonly contextTokens: number
  /** The model's context window, when known. */
  readonly contextLimit: number | undefined
  readonly pressure: number
  /** Tokens the provider would write again if the pending prunes applied now (before they are taken out). */
  readonly rebuildTokens: number
  readonly cold: boolean
  readonly compacted: boolean
  readonly horizon: number
  /** What keeping the pending prunes out of the previous requests cost: their read price, summed over requests. */
  readonly waited: number
  /** How many times the rebuild `waited` must reach (`cache.patience`). */
  readonly patience: number
  /**
   * The pending prunes after the plugin's cache breakpoint, when others precede it. Those others make the provider
   * write everything after the system prompt again rather than what follows the breakpoint, and are weighed against
   * that difference on their own.
   */
  readonly afterBreakpoint?: {
    readonly pendingTokens: number
    readonly rebuildTokens: number
  }
}

export interface Decision {
  readonly trigger: Trigger | undefined
  readonly waiting: Waiting | undefined
  /**
   * Which pending prunes the decision is about: all of them, or only those after the plugin's cache breakpoint (the
   * others wait, `warm-cache`, when those apply).
   */
  readonly scope: "all" | "afterBreakpoint"
}

/** Whether the provider's cache has expired: no request for longer than its TTL, or none known. */
export const cacheExpired = (idleSeconds: number | undefined, ttlSeconds: number): boolean =>
  idleSeconds === undefined || idleSeconds > ttlSeconds

/**
 * Whether the local date changed since the previous request. OpenCode 1.18.33 writes `Today's date:` and the
 * process's `Date.toDateString()` into the environment section of the system prompt it builds for each request, so
 * the first request of a new day changes the system prompt, and the provider writes everything from there on again.
 * The plugin runs in OpenCode's process: same clock, same time zone. Other changes of the system prompt cannot be
 * read from it in time: OpenCode calls `messages.transform`, where the decision is made, before it reads the
 * instruction files and calls `system.transform` for the same request (seen on the real host with `AGENTS.md` edited
 * between two prompts), so the plugin would learn of them one request late, on a cache that request has already
 * written again. A changed instruction file is seen on disk instead (services/Instructions.ts).
 */
export const dateChanged = (now: number, last: number | undefined): boolean =>
  last !== undefined && new Date(now).toDateString() !== new Date(last).toDateString()

/** Later requests for a prune of `pruned` tokens to pay for rewriting `rebuild` tokens of cache now. */
export const paysBackAfter = (profile: PricingProfile, pruned: number, rebuild: number): number => {
  if (profile.kind !== "anthropic" && profile.kind !== "openai") return 0
  const extra = Math.max(0, rebuild - pruned) * (profile.write - profile.read)
  const perRequest = pruned * profile.read
  return perRequest <= 0 ? Infinity : extra / perRequest
}

export const schedule = (input: ScheduleInput): Decision => {
  const idle: Decision = { trigger: undefined, waiting: undefined, scope: "all" }
  if (input.pendingTokens <= 0) return idle
  const kind = input.profile.kind
  if (input.mode === "immediate" || kind === "per-request" || kind === "none") {
    return { trigger: "immediate", waiting: undefined, scope: "all" }
  }
  if (input.cold) return { trigger: "cold", waiting: undefined, scope: "all" }
  if (input.compacted) return { trigger: "compaction", waiting: undefined, scope: "all" }
  if (input.contextLimit !== undefined && input.contextTokens >= input.pressure * input.contextLimit) {
    return { trigger: "pressure", waiting: undefined, scope: "all" }
  }
  const near = input.afterBreakpoint
  if (near === undefined || near.pendingTokens <= 0 || near.pendingTokens >= input.pendingTokens) {
    return weigh(input, input.pendingTokens, input.rebuildTokens)
  }
  // What the prunes before the breakpoint add: their own tokens, and everything between them and the breakpoint
  // written again.
  const before = paysBackAfter(
    input.profile,
    input.pendingTokens - near.pendingTokens,
    input.rebuildTokens - near.rebuildTokens
  )
  if (before <= input.horizon) return weigh(input, input.pendingTokens, input.rebuildTokens)
  const decision = weigh(input, near.pendingTokens, near.rebuildTokens)
  return decision.trigger === undefined
    ? { ...decision, scope: "afterBreakpoint" }
    : {
      trigger: decision.trigger,
      waiting: { reason: "warm-cache", paysBackAfter: before, horizon: input.horizon },
      scope: "afterBreakpoint"
    }
}

/** The warm-cache rule (above) for pending prunes of `pending` tokens that rewrite `rebuildTokens`. */
const weigh = (input: ScheduleInput, pending: number, rebuildTokens: number): Decision => {
  const after = paysBackAfter(input.profile, pending, rebuildTokens)
  const waiting = (reason: Waiting["reason"]): Decision => ({
    trigger: undefined,
    waiting: { reason, paysBackAfter: after, horizon: input.horizon },
    scope: "all"
  })
  if (pending < input.minPruneTokens) return waiting("below-minimum")
  if (after > input.horizon) return waiting("warm-cache")
  const rebuild = Math.max(0, rebuildTokens - pending) * (input.profile.write - input.profile.read)
  const owed = rebuild * input.patience - input.waited
  if (owed <= 0) return { trigger: "break-even", waiting: undefined, scope: "all" }
  return {
    trigger: undefined,
    waiting: {
      reason: "gathering",
      paysBackAfter: after,
      horizon: input.horizon,
      appliesAfter: Math.ceil(owed / (pending * input.profile.read))
    },
    scope: "all"
  }
}

/** Where the earliest change of a request sits, as far as the cost of rewriting the cache from there goes. */
export interface ChangeAt {
  /** Tokens from the changed call to the end of the request. */
  readonly tokensAfter: number
  /**
   * The provider still finds a cache entry shortly before it: few enough wire blocks follow it that the next request
   * finds the entry an earlier request wrote at its end (Anthropic looks back `lookbackBlocks` content blocks from
   * each breakpoint), or it follows the plugin's own breakpoint (src/engine/anchor.ts). `tokensAfter` then counts
   * from that entry.
   */
  readonly nearEnd: boolean
}

/**
 * The tokens a warm cache is written again from when calls change: under Anthropic's rules, everything after the
 * system prompt, unless an entry is found shortly before the change (`nearEnd`); under prefix caching, everything
 * after the change.
 */
export const rebuildTokens = (
  profile: PricingProfile,
  input: { readonly contextTokens: number; readonly systemTokens: number; readonly change: ChangeAt }
): number =>
  profile.kind === "anthropic" && !input.change.nearEnd
    ? Math.max(0, input.contextTokens - input.systemTokens)
    : input.change.tokensAfter

/** Content blocks the provider sees from message `from` to the end (see `blocksOf`), counted up to `limit` + 1. */
export const blocksFrom = (messages: ReadonlyArray<unknown>, from: number, limit: number): number => {
  let blocks = 0
  for (let m = messages.length - 1; m >= from && blocks <= limit; m--) {
    const message = messages[m]
    const parts = Predicate.isObject(message) && Array.isArray(message.parts) ? message.parts : []
    for (const part of parts) blocks += blocksOf(part)
  }
  return blocks
}
