import { Context, Effect, Layer } from "effect"
import { estimateO200k } from "../data/o200kEstimate.ts"
import { LruMap } from "../data/LruMap.ts"

/** About four characters a token: the crudest estimate, for tests that need predictable counts. */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

/**
 * Token counts with OpenAI's o200k encoding: close enough to every provider's tokenizer to size what is sent, and
 * what OpenCode users know from their bills. Two ways to get one:
 *
 * - `estimate`, on the request path: a calibrated estimate of the o200k count (src/data/o200kEstimate.ts), a few
 *   percent off for a whole text and closer over a session, computed in one pass without loading the encoding.
 *   Loading o200k costs 65-95 MB of memory and 0.3-0.5 s, and counting exactly was a quarter of the request time, for
 *   figures that are thresholds and "~" amounts anyway. Callers compute it once per content (per part, per
 *   placeholder).
 * - `count`, exact, with gpt-tokenizer's o200k, where a report promises exact counts (`/dcp context`): the encoding is
 *   loaded on the first exact count, and counts are cached by content so the same content is never counted twice.
 */
export class Tokenizer extends Context.Service<Tokenizer, {
  /** The exact o200k count. */
  readonly count: (text: string) => Effect.Effect<number>
  /** The estimated o200k count, for the request path. */
  readonly estimate: (text: string) => number
}>()("opencode-context-pruner/Tokenizer") {
  /**
   * `gpt-tokenizer` costs 0.3-1.5 s to import, so it is loaded on the first exact count, not when OpenCode starts.
   */
  static readonly layer = Layer.effect(
    Tokenizer,
    Effect.map(
      Effect.cached(
        Effect.promise(() => import("gpt-tokenizer/encoding/o200k_base")).pipe(
          Effect.map((module) => (text: string) => module.countTokens(text, plainText))
        )
      ),
      (encoding) => make(encoding, estimateO200k)
    )
  )

  /**
   * o200k for every count, the request path's included, loaded when the layer is built: what exact counting on the
   * request path would cost (a benchmark diagnostic, `npm run bench -- --tokenizer exact`).
   */
  static readonly layerExact = Layer.effect(
    Tokenizer,
    Effect.map(Effect.promise(() => import("gpt-tokenizer/encoding/o200k_base")), (module) => {
      const count = (text: string) => module.countTokens(text, plainText)
      const cache = new LruMap<string, number>(20_000)
      return make(Effect.succeed(count), (text) => {
        const key = contentKey(text)
        const known = cache.get(key)
        if (known !== undefined) return known
        const tokens = count(text)
        cache.set(key, tokens)
        return tokens
      })
    })
  )

  /** The production tokenizer (sampling, caching) over another encoder, for both counts: lets tests count what gets encoded. */
  static readonly layerWith = (encode: (text: string) => number) =>
    Layer.succeed(Tokenizer, make(Effect.succeed(encode), encode))

  /** About four characters a token for both counts, for tests and benchmarks that need predictable counts. */
  static readonly layerEstimate = Layer.succeed(
    Tokenizer,
    Tokenizer.of({ count: (text) => Effect.succeed(estimateTokens(text)), estimate: estimateTokens })
  )
}

const make = (encoding: Effect.Effect<(text: string) => number>, estimate: (text: string) => number) =>
  Tokenizer.of({
    count: cachedCount((text) => Effect.map(encoding, (count) => sampledCount(count, text))),
    estimate: (text) => (text.length === 0 ? 0 : sampledCount(estimate, text))
  })

/** Tool output can contain strings such as `<|endoftext|>`; they are counted as text, never rejected. */
const plainText = { disallowedSpecial: new Set<string>() }

/**
 * Counting is linear but slow (a few MB/s exactly, tens of MB/s estimated). Past `exactLimit` characters the count
 * is extrapolated from a sample at the start, so a 10 MB log costs milliseconds, not seconds.
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
