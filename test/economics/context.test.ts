import { assert, describe, it } from "vitest"
import type { ToolCall } from "../../src/engine/calls.ts"
import { viewContext } from "../../src/engine/view.ts"
import { freshViewState, history } from "../engine/support.ts"

/** c1: 100 output + 10 input tokens; c2: 200 output + 20 input; c3: 300 output, no string input. */
const calls = () =>
  history([
    { tool: "read", input: { filePath: "a.ts" }, outputTokens: 100, inputTokens: { filePath: 10 } },
    { tool: "read", input: { filePath: "b.ts" }, outputTokens: 200, inputTokens: { filePath: 20 } },
    { tool: "bash", input: {}, outputTokens: 300, inputTokens: {} }
  ])

/** The size of a request as the request path estimates it, from the view it builds of the request's calls. */
const estimateContext = (input: {
  readonly calls: ReadonlyArray<ToolCall>
  readonly textChars: number
  readonly systemTokens: number
  readonly pruned: ReadonlyMap<string, { readonly tokens: number }>
}): number => {
  const view = freshViewState(input.calls, {
    pruned: new Map([...input.pruned].map(([callID, { tokens }]) => [callID, { reason: "discard", tokens, at: 0 }]))
  })
  return viewContext(view, input.textChars, input.systemTokens)
}

describe("a request's size", () => {
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
