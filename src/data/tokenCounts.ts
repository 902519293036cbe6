/** How the tokenizer counts: exact counts cached by content, and long texts counted from a sample. */
import { Effect } from "effect"
import { LruMap } from "./LruMap.ts"

/**
 * The tokenizer's two counts over an encoding (loaded when first needed) and an estimate: exact counts cached by
 * content, and both sampled past `exactLimit` characters.
 */
export const countsOver = (
  encoding: Effect.Effect<(text: string) => number>,
  estimate: (text: string) => number
): { readonly count: (text: string) => Effect.Effect<number>; readonly estimate: (text: string) => number } => ({
  count: cachedCount((text) => Effect.map(encoding, (count) => sampledCount(count, text))),
  estimate: (text) => (text.length === 0 ? 0 : sampledCount(estimate, text))
})

/** Tool output can contain strings such as `<|endoftext|>`; they are counted as text, never rejected. */
export const plainText = { disallowedSpecial: new Set<string>() }

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
export const contentKey = (text: string): string => {
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
