import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { discardDescription, extractDescription, systemSection } from "../../src/engine/prompts.ts"
import { Tokenizer } from "../../src/services/Tokenizer.ts"

describe("systemSection", () => {
  it("is absent when neither pruning tool is enabled and nothing is folded", () => {
    assert.isUndefined(systemSection({ discard: false, extract: false, recall: true, fold: false }))
  })

  it("says how folded tool calls read, and how to get their outputs back, when old turns are folded", () => {
    const section = systemSection({ discard: false, extract: false, recall: true, fold: true })!
    assert.include(section, "`#17 read src/app.ts`")
    assert.include(section, "`recall` gets their outputs back")
    assert.notInclude(systemSection({ discard: true, extract: true, recall: true, fold: false }), "folded")
  })

  it("describes only the enabled tools", () => {
    const discardOnly = systemSection({ discard: true, extract: false, recall: false, fold: true })!
    const extractOnly = systemSection({ discard: false, extract: true, recall: false, fold: true })!
    assert.include(discardOnly, "`discard`")
    assert.notInclude(discardOnly, "`extract`")
    assert.include(extractOnly, "`extract`")
    assert.notInclude(extractOnly, "`discard`")
  })

  it("points to recall only when the recall tool is enabled", () => {
    assert.include(systemSection({ discard: true, extract: true, recall: true, fold: true }), "`recall`")
    assert.notInclude(systemSection({ discard: true, extract: true, recall: false, fold: true }), "recall")
  })

  it("is byte-identical for the same tools", () => {
    const tools = { discard: true, extract: true, recall: true, fold: true }
    assert.strictEqual(systemSection({ ...tools }), systemSection(tools))
  })

  it.effect("stays under 250 tokens with every tool enabled", () =>
    Effect.gen(function*() {
      const tokenizer = yield* Tokenizer
      const tokens = yield* tokenizer.count(systemSection({ discard: true, extract: true, recall: true, fold: true })!)
      assert.isBelow(tokens, 250)
    }).pipe(Effect.provide(Tokenizer.layer)))
})

describe("tool descriptions", () => {
  it("tell the model the argument format", () => {
    assert.match(discardDescription, /"completion" .* or "noise"/)
    assert.match(extractDescription, /one finding per id/)
  })
})
