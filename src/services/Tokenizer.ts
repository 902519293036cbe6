import { Context, Effect, Layer } from "effect"
import { LruMap } from "../data/LruMap.ts"

/**
 * Token counts with OpenAI's o200k encoding: close enough to every provider's tokenizer to size what is sent,
 * and what OpenCode users know from their bills.
 */
export class Tokenizer extends Context.Service<Tokenizer, {
  readonly count: (text: string) => Effect.Effect<number>
}>()("opencode-context-pruner/Tokenizer") {
  /**
   * `gpt-tokenizer` costs 0.3-1.5 s to import, so it is loaded on the first count, not when OpenCode starts.
   */
  static readonly layer = Layer.effect(
    Tokenizer,
    Effect.map(
      Effect.cached(
        Effect.promise(() => import("gpt-tokenizer/encoding/o200k_base")).pipe(
          Effect.map((module) => (text: string) => module.countTokens(text, plainText))
        )
      ),
      (encoding) => make(encoding)
    )
  )

  /** The production tokenizer (sampling, caching) over another encoder: lets tests count what gets encoded. */
  static readonly layerWith = (encode: (text: string) => number) => Layer.succeed(Tokenizer, make(Effect.succeed(encode)))

  /** About four characters a token, for tests and benchmarks that need speed rather than exact counts. */
  static readonly layerEstimate = Layer.succeed(
    Tokenizer,
    Tokenizer.of({ count: (text) => Effect.succeed(estimateTokens(text)) })
  )
}

const make = (encoding: Effect.Effect<(text: string) => number>) =>
  Tokenizer.of({ count: cachedCount((text) => Effect.map(encoding, (count) => sampledCount(count, text))) })

/** Tool output can contain strings such as `<|endoftext|>`; they are counted as text, never rejected. */
const plainText = { disallowedSpecial: new Set<string>() }

export const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

/**
 * Counting is linear but slow (a few MB/s). Past `exactLimit` characters the count is extrapolated from a sample
 * at the start, so a 10 MB log costs milliseconds, not seconds, on the request path.
 */
const exactLimit = 256 * 1024
const sampleSize = 64 * 1024

const sampledCount = (count: (text: string) => number, text: string): number => {
  if (text.length <= exactLimit) return count(text)
  const sample = text.slice(0, sampleSize)
  return Math.ceil(count(sample) * (text.length / sample.length))
}

/** The same content (a file read twice, a repeated placeholder) is counted once. */
const cachedCount = (count: (text: string) => Effect.Effect<number>) => {
  const cache = new LruMap<string, number>(20_000)
  return (text: string): Effect.Effect<number> => {
    if (text.length === 0) return Effect.succeed(0)
    const key = contentKey(text)
    const known = cache.get(key)
    if (known !== undefined) return Effect.succeed(known)
    return Effect.tap(count(text), (tokens) => Effect.sync(() => cache.set(key, tokens)))
  }
}

/** Short strings are their own key; long ones are keyed by length and two FNV-1a hashes, so keys stay small. */
const contentKey = (text: string): string => {
  if (text.length <= 64) return text
  let a = 0x811c9dc5
  let b = 0x01000193 ^ text.length
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    a = Math.imul(a ^ c, 0x01000193)
    b = Math.imul(b ^ c, 0x5bd1e995)
  }
  return `${text.length}:${(a >>> 0).toString(36)}:${(b >>> 0).toString(36)}`
}
