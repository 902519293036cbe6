import { assert, describe, it } from "vitest"
import { estimateContext, rebuildEstimate } from "../../src/engine/context.ts"
import { history } from "../engine/support.ts"

/** c1: 100 output + 10 input tokens; c2: 200 output + 20 input; c3: 300 output, no string input. */
const calls = () =>
  history([
    { tool: "read", input: { filePath: "a.ts" }, outputTokens: 100, inputTokens: { filePath: 10 } },
    { tool: "read", input: { filePath: "b.ts" }, outputTokens: 200, inputTokens: { filePath: 20 } },
    { tool: "bash", input: {}, outputTokens: 300, inputTokens: {} }
  ])

describe("estimateContext", () => {
  it("adds the system prompt, text at four characters a token, and every call's inputs and outputs", () => {
    assert.strictEqual(
      estimateContext({ calls: calls(), textChars: 400, systemTokens: 50, pruned: new Map() }),
      50 + 100 + 630
    )
  })

  it("rounds a partial token of text up", () => {
    assert.strictEqual(estimateContext({ calls: [], textChars: 9, systemTokens: 0, pruned: new Map() }), 3)
  })

  it("subtracts what applied prunes take out", () => {
    const pruned = new Map([["c2", { tokens: 180 }], ["c3", { tokens: 290 }]])
    assert.strictEqual(estimateContext({ calls: calls(), textChars: 0, systemTokens: 0, pruned }), 630 - 180 - 290)
  })

  it("ignores prunes of calls that are not in the request", () => {
    const pruned = new Map([["gone", { tokens: 5000 }]])
    assert.strictEqual(estimateContext({ calls: calls(), textChars: 0, systemTokens: 0, pruned }), 630)
  })

  it("is never negative", () => {
    const pruned = new Map([["c1", { tokens: 10_000 }]])
    assert.strictEqual(estimateContext({ calls: calls(), textChars: 0, systemTokens: 0, pruned }), 0)
  })

  it("is the system prompt alone for an empty history", () => {
    assert.strictEqual(estimateContext({ calls: [], textChars: 0, systemTokens: 1234, pruned: new Map() }), 1234)
  })
})

describe("rebuildEstimate", () => {
  const four = () => history([{ tool: "read" }, { tool: "read" }, { tool: "read" }, { tool: "read" }])

  it("is 0 when no call changed", () => {
    assert.strictEqual(rebuildEstimate({ calls: four(), changed: new Set(), contextTokens: 1000 }), 0)
  })

  it("is 0 when the changed calls are not in the request", () => {
    assert.strictEqual(rebuildEstimate({ calls: four(), changed: new Set(["elsewhere"]), contextTokens: 1000 }), 0)
  })

  it("is 0 for an empty history", () => {
    assert.strictEqual(rebuildEstimate({ calls: [], changed: new Set(["c1"]), contextTokens: 1000 }), 0)
  })

  it("is the whole context when the first call changed", () => {
    assert.strictEqual(rebuildEstimate({ calls: four(), changed: new Set(["c1"]), contextTokens: 1000 }), 1000)
  })

  it("is proportional to the calls from the earliest changed one to the end", () => {
    assert.strictEqual(rebuildEstimate({ calls: four(), changed: new Set(["c3"]), contextTokens: 1000 }), 500)
    assert.strictEqual(rebuildEstimate({ calls: four(), changed: new Set(["c4"]), contextTokens: 1000 }), 250)
  })

  it("is decided by the earliest changed call, whatever the order of the set", () => {
    assert.strictEqual(rebuildEstimate({ calls: four(), changed: new Set(["c4", "c2"]), contextTokens: 1000 }), 750)
  })

  it("rounds to whole tokens", () => {
    const three = history([{ tool: "read" }, { tool: "read" }, { tool: "read" }])
    assert.strictEqual(rebuildEstimate({ calls: three, changed: new Set(["c2"]), contextTokens: 100 }), 67)
  })
})
