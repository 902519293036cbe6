import { assert, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { discardDescription, extractDescription, systemSection } from "../../src/engine/prompts.ts"
import { Tokenizer } from "../../src/services/Tokenizer.ts"

describe("systemSection", () => {
  it("is absent when neither pruning tool is enabled", () => {
    expect(systemSection({ discard: false, extract: false, recall: true })).toBeUndefined()
  })

  it("describes only the enabled tools", () => {
    const discardOnly = systemSection({ discard: true, extract: false, recall: false })!
    const extractOnly = systemSection({ discard: false, extract: true, recall: false })!
    expect(discardOnly).toContain("`discard`")
    expect(discardOnly).not.toContain("`extract`")
    expect(extractOnly).toContain("`extract`")
    expect(extractOnly).not.toContain("`discard`")
  })

  it("points to recall only when the recall tool is enabled", () => {
    expect(systemSection({ discard: true, extract: true, recall: true })).toContain("`recall`")
    expect(systemSection({ discard: true, extract: true, recall: false })).not.toContain("recall")
  })

  it("is byte-identical for the same tools", () => {
    const tools = { discard: true, extract: true, recall: true }
    expect(systemSection({ ...tools })).toBe(systemSection(tools))
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
    expect(discardDescription).toMatch(/"completion" .* or "noise"/)
    expect(extractDescription).toMatch(/one finding per id/)
  })
})
