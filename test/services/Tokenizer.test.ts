import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Tokenizer } from "../../src/services/Tokenizer.ts"
import { tokenizerWith } from "../support/layers.ts"

describe("Tokenizer", () => {
  it.effect("counts with the o200k encoding", () =>
    Effect.gen(function*() {
      const tokenizer = yield* Tokenizer
      assert.strictEqual(yield* tokenizer.count("hello world"), 2)
      assert.strictEqual(yield* tokenizer.count(""), 0)
    }).pipe(Effect.provide(Tokenizer.layer)))

  it.effect("counts special-token strings found in tool output as plain text", () =>
    Effect.gen(function*() {
      const tokenizer = yield* Tokenizer
      assert.isAbove(yield* tokenizer.count("log line <|endoftext|> and <|im_start|>"), 5)
    }).pipe(Effect.provide(Tokenizer.layer)))

  it.effect("encodes the same content once", () => {
    const encoded: Array<string> = []
    const layer = tokenizerWith((text) => {
      encoded.push(text)
      return text.length
    })
    return Effect.gen(function*() {
      const tokenizer = yield* Tokenizer
      const long = "x".repeat(5000)
      yield* tokenizer.count(long)
      yield* tokenizer.count(long)
      yield* tokenizer.count("short")
      yield* tokenizer.count("short")
      assert.strictEqual(encoded.length, 2)
    }).pipe(Effect.provide(layer))
  })

  it.effect("estimates very large texts from a sample instead of encoding them whole", () => {
    let longest = 0
    const layer = tokenizerWith((text) => {
      longest = Math.max(longest, text.length)
      return Math.ceil(text.length / 3)
    })
    return Effect.gen(function*() {
      const tokenizer = yield* Tokenizer
      const tokens = yield* tokenizer.count("y".repeat(10_000_000))
      assert.isAtMost(longest, 64 * 1024)
      assert.approximately(tokens, 10_000_000 / 3, 10_000_000 / 3 / 1000)
    }).pipe(Effect.provide(layer))
  })
})
