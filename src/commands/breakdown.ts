import { Predicate } from "effect"
import { roleOf } from "../host/messages.ts"

// Token counts are read one value at a time, not decoded as a whole: one odd value a provider reports must not
// hide the others of its message.

/**
 * The context's size after an assistant message, as OpenCode shows it ("Context" in its sidebar, and the plugin's
 * panel): the provider's count of the request, cached or not, plus the reply, which the next request carries. 0 when
 * the message has no usage (yet).
 */
export const contextOfUsage = (tokens: unknown): number => {
  if (!Predicate.isObject(tokens)) return 0
  const cache = Predicate.isObject(tokens.cache) ? tokens.cache : {}
  return [tokens.input, tokens.output, tokens.reasoning, cache.read, cache.write].reduce<number>(
    (sum, value) => sum + (typeof value === "number" && Number.isFinite(value) ? value : 0),
    0
  )
}

/** The context's size after the newest assistant message that reports usage (`contextOfUsage`). */
export const reportedContext = (messages: ReadonlyArray<unknown>): number | undefined => {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]
    if (roleOf(message) !== "assistant" || !Predicate.isObject(message) || !Predicate.isObject(message.info)) continue
    const total = contextOfUsage(message.info.tokens)
    if (total > 0) return total
  }
  return undefined
}

/** Prompt-cache usage the provider reported, summed over the session's assistant messages. */
export interface CacheUsage {
  readonly requests: number
  readonly read: number
  readonly write: number
  readonly uncached: number
}

export const reportedCacheUsage = (messages: ReadonlyArray<unknown>): CacheUsage => {
  let requests = 0
  let read = 0
  let write = 0
  let uncached = 0
  const number = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : 0)
  for (const message of messages) {
    if (roleOf(message) !== "assistant" || !Predicate.isObject(message) || !Predicate.isObject(message.info)) continue
    const tokens = message.info.tokens
    if (!Predicate.isObject(tokens)) continue
    const cache = Predicate.isObject(tokens.cache) ? tokens.cache : {}
    requests++
    read += number(cache.read)
    write += number(cache.write)
    uncached += number(tokens.input)
  }
  return { requests, read, write, uncached }
}
