import { assert, describe, it } from "vitest"
import { CostMeter, costWithoutRebuilds } from "../../src/simulator/cost.ts"
import { Blocks, blockTokens, type Wire } from "../../src/simulator/wire.ts"
import { profiles } from "../../src/pricing/profiles.ts"

/** One token per word, and no framing: every figure below is counted by hand. */
const words = (value: string) => (value === "" ? 0 : value.split(/\s+/).length)
const ten = "a b c d e f g h i j"

/**
 * A little world of blocks: `system` (10 tokens), and numbered message blocks of 10 tokens each. `wire(...)` lays out
 * the blocks of a request with its breakpoints given as block names.
 */
const world = () => {
  const blocks = new Blocks()
  const named = new Map<string, number>()
  const block = (name: string) => {
    let id = named.get(name)
    if (id === undefined) {
      id = blocks.text("user", `${name} ${ten.split(" ").slice(1).join(" ")}`)
      named.set(name, id)
    }
    return id
  }
  const tokensOf = blockTokens(blocks, words)
  const wire = (names: ReadonlyArray<string>, marked: ReadonlyArray<string>): Wire => ({
    blocks: Int32Array.from(names.map(block)),
    breakpoints: marked.map((name) => names.indexOf(name)).toSorted((a, b) => a - b)
  })
  return { blocks, tokensOf, wire }
}

const anthropic = { ...profiles.anthropic, minTokens: 10 }
const minute = 60_000
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => `m${from + i}`)

describe("CostMeter, Anthropic rules", () => {
  it("writes the prefix up to the last breakpoint on a first request and sends the rest uncached", () => {
    const { blocks, tokensOf, wire } = world()
    const meter = new CostMeter(anthropic, blocks, tokensOf)
    const cost = meter.record(wire(["sys", "m1", "m2", "m3", "m4"], ["sys", "m2", "m3"]), 0)
    assert.deepStrictEqual(cost, { tokens: 50, readTokens: 0, writeTokens: 40, cost: 1.25 * 40 + 10 })
  })

  it("reads the previous request's entry when it ends close before a breakpoint, and writes what follows", () => {
    const { blocks, tokensOf, wire } = world()
    const meter = new CostMeter(anthropic, blocks, tokensOf)
    meter.record(wire(["sys", "m1", "m2", "m3"], ["sys", "m2", "m3"]), 0)
    const cost = meter.record(wire(["sys", "m1", "m2", "m3", "m4", "m5"], ["sys", "m4", "m5"]), minute)
    assert.deepStrictEqual(cost, { tokens: 60, readTokens: 40, writeTokens: 20, cost: 0.1 * 40 + 1.25 * 20 })
  })

  it("after a change far from the end reads only what ends before it at a breakpoint: the system prompt", () => {
    const { blocks, tokensOf, wire } = world()
    const meter = new CostMeter(anthropic, blocks, tokensOf)
    const history = range(1, 30)
    meter.record(wire(["sys", ...history], ["sys", "m29", "m30"]), 0)
    const pruned = ["sys", "m1", "pruned2", ...range(3, 31)]
    const cost = meter.record(wire(pruned, ["sys", "m30", "m31"]), minute)
    // sys + 31 blocks = 320 tokens: 10 read (the system entry), 310 written.
    assert.deepStrictEqual(cost, { tokens: 320, readTokens: 10, writeTokens: 310, cost: 0.1 * 10 + 1.25 * 310 })
  })

  it("finds an entry only up to 20 content blocks before a breakpoint", () => {
    const { blocks, tokensOf, wire } = world()
    const near = new CostMeter(anthropic, blocks, tokensOf)
    near.record(wire(["sys", "m1", "m2"], ["sys", "m1", "m2"]), 0)
    // m2's entry ends 20 blocks before a breakpoint (m22): found.
    assert.strictEqual(near.record(wire(["sys", ...range(1, 22)], ["sys", "m21", "m22"]), minute).readTokens, 30)
    const far = new CostMeter(anthropic, blocks, tokensOf)
    far.record(wire(["sys", "m1", "m2"], ["sys", "m1", "m2"]), 0)
    // 21 blocks before the nearest breakpoint (m23): only the system entry is found.
    assert.strictEqual(far.record(wire(["sys", ...range(1, 24)], ["sys", "m23", "m24"]), minute).readTokens, 10)
  })

  it("lets an entry expire after the TTL without use, and keeps it alive while it is used", () => {
    const { blocks, tokensOf, wire } = world()
    const request = wire(["sys", "m1", "m2"], ["sys", "m1", "m2"])
    const idle = new CostMeter(anthropic, blocks, tokensOf)
    idle.record(request, 0)
    assert.strictEqual(idle.record(request, 5 * minute + 1).readTokens, 0)
    const busy = new CostMeter(anthropic, blocks, tokensOf)
    busy.record(request, 0)
    busy.record(request, 4 * minute)
    assert.strictEqual(busy.record(request, 8 * minute).readTokens, 30)
  })

  it("caches nothing shorter than the minimum", () => {
    const { blocks, tokensOf, wire } = world()
    const meter = new CostMeter({ ...anthropic, minTokens: 20 }, blocks, tokensOf)
    // sys alone (10 tokens) is under the minimum of 20: no entry there, on either request.
    meter.record(wire(["sys", "m1", "m2"], ["sys", "m2"]), 0)
    const cost = meter.record(wire(["sys", "x1", "x2"], ["sys", "x2"]), minute)
    assert.deepStrictEqual(cost, { tokens: 30, readTokens: 0, writeTokens: 30, cost: 1.25 * 30 })
  })

  it("costs a trailing message of its own only itself: the next request reads the entry before it", () => {
    const { blocks, tokensOf, wire } = world()
    const meter = new CostMeter(anthropic, blocks, tokensOf)
    meter.record(wire(["sys", "m1", "m2"], ["sys", "m1", "m2"]), 0)
    const withNote = meter.record(wire(["sys", "m1", "m2", "note"], ["sys", "m2", "note"]), minute)
    assert.deepStrictEqual(withNote, { tokens: 40, readTokens: 30, writeTokens: 10, cost: 0.1 * 30 + 1.25 * 10 })
    const next = meter.record(wire(["sys", "m1", "m2", "m3", "m4"], ["sys", "m3", "m4"]), 2 * minute)
    assert.deepStrictEqual(next, { tokens: 50, readTokens: 30, writeTokens: 20, cost: 0.1 * 30 + 1.25 * 20 })
  })

  it("prices the 1-hour TTL's writes at 2 and keeps entries for an hour", () => {
    const { blocks, tokensOf, wire } = world()
    const meter = new CostMeter({ ...profiles["anthropic-1h"], minTokens: 20 }, blocks, tokensOf)
    const request = wire(["sys", "m1", "m2"], ["sys", "m2"])
    assert.strictEqual(meter.record(request, 0).cost, 2 * 30)
    assert.closeTo(meter.record(request, 59 * minute).cost, 0.1 * 30, 10 ** -2 / 2)
  })

  it("reads nothing another model wrote, and finds the first model's entries again when the session goes back to it", () => {
    const { blocks, tokensOf, wire } = world()
    const meter = new CostMeter(anthropic, blocks, tokensOf)
    const request = wire(["sys", "m1", "m2"], ["sys", "m1", "m2"])
    meter.record(request, 0, "anthropic/claude-sonnet")
    assert.deepStrictEqual(meter.record(request, minute, "anthropic/claude-opus"), {
      tokens: 30,
      readTokens: 0,
      writeTokens: 30,
      cost: 1.25 * 30
    })
    assert.strictEqual(meter.record(request, 2 * minute, "anthropic/claude-sonnet").readTokens, 30)
  })

  it("takes a request that does not name its model to the previous request's", () => {
    const { blocks, tokensOf, wire } = world()
    const meter = new CostMeter(anthropic, blocks, tokensOf)
    const request = wire(["sys", "m1", "m2"], ["sys", "m1", "m2"])
    meter.record(request, 0)
    assert.strictEqual(meter.record(request, minute, "anthropic/claude-sonnet").readTokens, 30)
    assert.strictEqual(meter.record(request, 2 * minute).readTokens, 30)
  })

  it("sums requests", () => {
    const { blocks, tokensOf, wire } = world()
    const meter = new CostMeter(anthropic, blocks, tokensOf)
    meter.record(wire(["sys", "m1", "m2"], ["sys", "m2"]), 0)
    meter.record(wire(["sys", "m1", "m2", "m3"], ["sys", "m3"]), minute)
    assert.deepStrictEqual(meter.priced(), {
      profile: "anthropic",
      requests: 2,
      tokens: 70,
      readTokens: 30,
      writeTokens: 40,
      outputTokens: 0,
      cost: 1.25 * 30 + 0.1 * 30 + 1.25 * 10
    })
  })

  it("prices output it is told of at five times an uncached input token", () => {
    const { blocks, tokensOf, wire } = world()
    const meter = new CostMeter(anthropic, blocks, tokensOf)
    meter.record(wire(["sys", "m1"], []), 0)
    meter.output(200)
    const priced = meter.priced()
    assert.deepStrictEqual([priced.outputTokens, priced.cost], [200, 20 + 5 * 200])
  })
})

describe("CostMeter, OpenAI rules", () => {
  const openai = { ...profiles.openai, minTokens: 20 }

  it("reads the common prefix with the previous request, from the minimum on in 128-token steps", () => {
    const { blocks, tokensOf, wire } = world()
    const meter = new CostMeter(openai, blocks, tokensOf)
    meter.record(wire(["sys", ...range(1, 30)], []), 0)
    // 21 shared blocks = 210 tokens: 20 + 128 = 148 read.
    const cost = meter.record(wire(["sys", ...range(1, 20), "changed", ...range(22, 30)], []), minute)
    assert.deepStrictEqual(cost, { tokens: 310, readTokens: 148, writeTokens: 0, cost: 0.1 * 148 + (310 - 148) })
  })

  it("reads nothing in a request to another model than the previous one's", () => {
    const { blocks, tokensOf, wire } = world()
    const meter = new CostMeter(openai, blocks, tokensOf)
    const request = wire(["sys", ...range(1, 30)], [])
    meter.record(request, 0, "openai/gpt-5")
    assert.strictEqual(meter.record(request, minute, "openai/gpt-5-mini").readTokens, 0)
  })

  it("reads nothing after the TTL", () => {
    const { blocks, tokensOf, wire } = world()
    const meter = new CostMeter(openai, blocks, tokensOf)
    const request = wire(["sys", "m1", "m2"], [])
    meter.record(request, 0)
    assert.strictEqual(meter.record(request, 5 * minute + 1).readTokens, 0)
  })
})

describe("CostMeter, no cache", () => {
  it("bills a per-request provider by request, and a provider without a cache by token", () => {
    const { blocks, tokensOf, wire } = world()
    const perRequest = new CostMeter(profiles["per-request"], blocks, tokensOf)
    const plain = new CostMeter(profiles.none, blocks, tokensOf)
    for (const meter of [perRequest, plain]) {
      meter.record(wire(["sys", "m1"], []), 0)
      meter.record(wire(["sys", "m1", "m2"], []), minute)
    }
    assert.strictEqual(perRequest.priced().cost, 2)
    assert.deepStrictEqual(plain.priced(), {
      profile: "none",
      requests: 2,
      tokens: 50,
      readTokens: 0,
      writeTokens: 0,
      outputTokens: 0,
      cost: 50
    })
  })
})

describe("costWithoutRebuilds", () => {
  it("reads what the previous request sent and writes only growth, a prune that shrinks a request costing nothing", () => {
    // 1,000 written; 1,000 read + 500 written; a prune down to 600: 600 read; 600 read + 400 written.
    assert.closeTo(
      costWithoutRebuilds(profiles.anthropic, [1000, 1500, 600, 1000]),
      1.25 * 1000 + (0.1 * 1000 + 1.25 * 500) + 0.1 * 600 + (0.1 * 600 + 1.25 * 400),
      1e-9
    )
  })
})
