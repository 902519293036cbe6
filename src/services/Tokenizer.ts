import { Context, Effect, Layer } from "effect"
import { estimateO200k } from "../data/o200kEstimate.ts"
import { LruMap } from "../data/LruMap.ts"
import { contentKey, countsOver, plainText } from "../data/tokenCounts.ts"

/** About four characters a token: the crudest estimate, for tests and benchmarks that need predictable counts. */
const estimateTokens = (text: string): number => Math.ceil(text.length / 4)

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
  static readonly layer: Layer.Layer<Tokenizer> = Layer.effect(
    Tokenizer,
    Effect.map(
      Effect.cached(
        Effect.promise(() => import("gpt-tokenizer/encoding/o200k_base")).pipe(
          Effect.map((module) => (text: string) => module.countTokens(text, plainText))
        )
      ),
      (encoding) => Tokenizer.of(countsOver(encoding, estimateO200k))
    )
  )

  /**
   * o200k for every count, the request path's included, loaded when the layer is built: what exact counting on the
   * request path would cost (a benchmark diagnostic, `npm run bench -- --tokenizer exact`).
   */
  static readonly layerExact: Layer.Layer<Tokenizer> = Layer.effect(
    Tokenizer,
    Effect.map(Effect.promise(() => import("gpt-tokenizer/encoding/o200k_base")), (module) => {
      const count = (text: string) => module.countTokens(text, plainText)
      const cache = new LruMap<string, number>(20_000)
      return Tokenizer.of(countsOver(Effect.succeed(count), (text) => {
        const key = contentKey(text)
        const known = cache.get(key)
        if (known !== undefined) return known
        const tokens = count(text)
        cache.set(key, tokens)
        return tokens
      }))
    })
  )

  /** About four characters a token for both counts, for tests and benchmarks that need predictable counts. */
  static readonly layerEstimate: Layer.Layer<Tokenizer> = Layer.succeed(
    Tokenizer,
    Tokenizer.of({ count: (text) => Effect.succeed(estimateTokens(text)), estimate: estimateTokens })
  )
}
