import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { discardDescription, extractDescription, systemSection } from "../../src/engine/prompts.ts"
import { Tokenizer } from "../../src/services/Tokenizer.ts"

describe("systemSection", () => {
  it("is absent when neither pruning tool is enabled", () => {
    assert.isUndefined(systemSection({ discard: false, extract: false, recall: true }))
  })

  it("describes only the enabled tools", () => {
    const discardOnly = systemSection({ discard: true, extract: false, recall: false })!
    const extractOnly = systemSection({ discard: false, extract: true, recall: false })!
    assert.include(discardOnly, "`discard`")
    assert.notInclude(discardOnly, "`extract`")
    assert.include(extractOnly, "`extract`")
    assert.notInclude(extractOnly, "`discard`")
  })

  it("points to recall only when the recall tool is enabled", () => {
    assert.include(systemSection({ discard: true, extract: true, recall: true }), "`recall`")
    assert.notInclude(systemSection({ discard: true, extract: true, recall: false }), "recall")
  })

  it("is byte-identical for the same tools", () => {
    const tools = { discard: true, extract: true, recall: true }
    assert.strictEqual(systemSection({ ...tools }), systemSection(tools))
  })

  it.effect("stays under 250 tokens with every tool enabled", () =>
    Effect.gen(function*() {
      const tokenizer = yield* Tokenizer
      const tokens = yield* tokenizer.count(systemSection({ discard: true, extract: true, recall: true })!)
      assert.isBelow(tokens, 250)
    }).pipe(Effect.provide(Tokenizer.layer)))
})

describe("tool descriptions", () => {
  it("tell the model the argument format", () => {
    assert.match(discardDescription, /"completion" .* or "noise"/)
    assert.match(extractDescription, /one finding per id/)
  })
})
