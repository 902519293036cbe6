/**
 * When pending automatic prunes reach what is sent. A prune changes the history at the pruned call, so the
 * provider's prompt cache is rebuilt from there on (written at about 1.25x the price of input, while a cached
 * token costs about 0.1x). Applying every prune at once, as the predecessor did, made long sessions cost more
 * than no pruning at all. So prunes wait, and are applied together when that pays:
 */
export type Trigger =
  /** `cache.mode: "immediate"`, or a provider that bills per request rather than per token. */
  | "immediate"
  /** The cache expired (no request for `ttlSeconds`): the whole prompt is written again anyway. */
  | "cold"
  /** The context fills `pressure` of the model's window: room matters more than the cache. */
  | "pressure"
  /** The pending saving reached `minPruneTokens`: worth one rebuild. */
  | "batch"

export interface ScheduleInput {
  readonly mode: "auto" | "immediate"
  readonly pendingTokens: number
  readonly minPruneTokens: number
  readonly contextTokens: number
  /** The model's context window, when known. */
  readonly contextLimit: number | undefined
  readonly pressure: number
  /** Seconds since the session's previous request (this process's, else the history's), undefined when unknown. */
  readonly idleSeconds: number | undefined
  readonly ttlSeconds: number
  readonly billedPerRequest: boolean
}

/** Whether the provider's cache has expired: no request for longer than its TTL, or none known. */
export const cacheExpired = (idleSeconds: number | undefined, ttlSeconds: number): boolean =>
  idleSeconds === undefined || idleSeconds > ttlSeconds

/** The reason to apply pending prunes now, or undefined to keep them pending. */
export const scheduleTrigger = (input: ScheduleInput): Trigger | undefined => {
  if (input.pendingTokens <= 0) return undefined
  if (input.mode === "immediate" || input.billedPerRequest) return "immediate"
  if (cacheExpired(input.idleSeconds, input.ttlSeconds)) return "cold"
  if (input.contextLimit !== undefined && input.contextTokens >= input.pressure * input.contextLimit) return "pressure"
  if (input.pendingTokens >= input.minPruneTokens) return "batch"
  return undefined
}

/** Providers whose price is per request: a smaller prompt saves nothing, so there is no reason to wait. */
export const billedPerRequest: ReadonlySet<string> = new Set(["github-copilot"])
