import { describe, expect, it } from "vitest"
import { CacheMeter, commonPrefix, readPrice, unitTokens, Units, writePrice } from "../../src/analysis/cost.ts"

const text = (value: string, id = value) => ({ id, type: "text", text: value })
const tool = (output: string, input: Record<string, unknown> = { filePath: "/p/a.ts" }) => ({
  id: "prt_t",
  type: "tool",
  tool: "read",
  callID: "c1",
  state: { status: "completed", input, output }
})
/** One token per word: easy to count by hand. */
const words = (value: string) => (value === "" ? 0 : value.split(/\s+/).length)

describe("commonPrefix", () => {
  it("stops at the first differing unit", () => {
    expect(commonPrefix([1, 2, 3, 4], [1, 2, 9, 4])).toBe(2)
    expect(commonPrefix([1, 2], [1, 2, 3])).toBe(2)
    expect(commonPrefix([], [1])).toBe(0)
  })
})

describe("Units", () => {
  it("gives equal content the same unit, whatever the object", () => {
    const units = new Units()
    expect(units.part(text("hello there", "a"))).toBe(units.part(text("hello there", "b")))
    expect(units.part(tool("x y z"))).toBe(units.part(structuredClone(tool("x y z"))))
    expect(units.part(tool("x y z"))).not.toBe(units.part(tool("[pruned]")))
    expect(units.part(tool("x", { filePath: "/p/a.ts" }))).not.toBe(units.part(tool("x", { filePath: "/p/b.ts" })))
  })

  it("sends nothing for step parts and ignored text", () => {
    const units = new Units()
    expect(units.part({ type: "step-start" })).toBe(-1)
    expect(units.part({ type: "step-finish", tokens: {} })).toBe(-1)
    expect(units.part({ type: "text", text: "note", ignored: true })).toBe(-1)
  })
})

describe("CacheMeter", () => {
  // Two requests by hand: the second repeats the first two parts, then differs (a prune changed the third part).
  const units = new Units()
  const system = units.system("you are helpful")
  const user = units.message("user")
  const question = units.part(text("fix the bug"))
  const assistant = units.message("assistant")
  const read = units.part(tool("one two three four five six"))
  const pruned = units.part(tool("[pruned]"))
  const answer = units.part(text("done now"))
  const first = [system, user, question, assistant, read]
  const second = [system, user, question, assistant, pruned, answer]
  const tokensOf = unitTokens(units, words)
  const size = (request: ReadonlyArray<number>) => request.reduce((sum, unit) => sum + tokensOf(unit), 0)

  it("reads the common prefix from the cache within the TTL", () => {
    const meter = new CacheMeter(300_000)
    expect(meter.record(first, 0)).toBe(0)
    expect(meter.record(second, 60_000)).toBe(4)
    const priced = meter.priced(tokensOf)
    const cached = size([system, user, question, assistant])
    const total = size(first) + size(second)
    expect(priced.tokens).toBe(total)
    expect(priced.cachedTokens).toBe(cached)
    expect(priced.cost).toBeCloseTo(readPrice * cached + writePrice * (total - cached))
    expect(priced.costNoCache).toBe(total)
  })

  it("reads nothing after a pause longer than the TTL", () => {
    const meter = new CacheMeter(300_000)
    meter.record(first, 0)
    expect(meter.record(first, 300_001)).toBe(0)
    expect(meter.priced(tokensOf).cachedTokens).toBe(0)
  })

  it("counts framing overhead on message and tool units", () => {
    expect(tokensOf(user)).toBeGreaterThan(0)
    expect(tokensOf(read)).toBeGreaterThan(words("one two three four five six"))
  })
})
