import { assert, describe, it } from "vitest"
import { minTaggedTokens, nudge, taggable, whyNotPrunable } from "../../src/engine/listing.ts"
import type { Protection } from "../../src/engine/protection.ts"
import { call, type CallSpec, history, protect, worktree } from "./support.ts"

const read = (path: string, outputTokens = 1200): CallSpec => ({
  tool: "read",
  input: { filePath: `${worktree}/${path}` },
  outputTokens
})

/** The positions of the calls that carry their ID tag, and the tokens a discard of each would free. */
const tagged = (
  specs: ReadonlyArray<CallSpec>,
  options: { protection?: Protection; protectedTools?: ReadonlyArray<string> } = {}
) =>
  history(specs).flatMap((entry, position) => {
    const tokens = taggable(entry, options.protection ?? protect(), options.protectedTools ?? [])
    return tokens === undefined ? [] : [[position, tokens]]
  })

describe("taggable: the calls that carry their stable ID, by rules that never change for a call", () => {
  it("tags every finished call with an output worth a placeholder, with the tokens a discard would free", () => {
    assert.deepStrictEqual(
      tagged([read("src/a.ts", 1200), { tool: "bash", input: { command: "npm test" }, outputTokens: 800 }]),
      [[0, 1200], [1, 800]]
    )
  })

  it("leaves out always-protected tools", () => {
    assert.deepStrictEqual(
      tagged([
        { tool: "task", input: { description: "explore" }, outputTokens: 5000 },
        { tool: "todowrite", input: { todos: [] }, outputTokens: 500 },
        read("a.ts")
      ]).map(([position]) => position),
      [2]
    )
  })

  it("leaves out the tools protected in tools.settings.protectedTools", () => {
    assert.deepStrictEqual(
      tagged([{ tool: "bash", input: { command: "npm test" }, outputTokens: 900 }, read("a.ts")], {
        protectedTools: ["bash"]
      }),
      [[1, 1200]]
    )
  })

  it("leaves out calls on protected files", () => {
    const protection = protect({ patterns: ["*.env", "src/secret/**"] })
    assert.deepStrictEqual(tagged([read(".env"), read("src/secret/keys.ts"), read("src/a.ts")], { protection }), [[
      2,
      1200
    ]])
  })

  it("tags turn-protected calls too: a tag, once sent, never changes", () => {
    const protection = protect({ turnProtection: { enabled: true, turns: 4 }, currentTurn: 9 })
    assert.lengthOf(tagged([{ ...read("a.ts"), turn: 2 }, { ...read("b.ts"), turn: 8 }], { protection }), 2)
  })

  it("leaves out calls that have not finished", () => {
    assert.deepStrictEqual(
      tagged([{ ...read("a.ts"), status: "pending" }, { ...read("b.ts"), status: "running" }, read("c.ts")]),
      [[2, 1200]]
    )
  })

  it("leaves out outputs too small to be worth a placeholder", () => {
    assert.deepStrictEqual(tagged([read("a.ts", minTaggedTokens - 1), read("b.ts", minTaggedTokens)]), [[
      1,
      minTaggedTokens
    ]])
  })

  it("leaves out outputs that are not text or were already cleared", () => {
    assert.deepStrictEqual(
      tagged([{ ...read("a.ts"), hasTextOutput: false }, { ...read("b.ts"), compacted: true }]),
      []
    )
  })

  it("tags a failed call by the size of its large inputs", () => {
    const failed = call({
      tool: "bash",
      callID: "c1",
      input: { command: "x" },
      inputTokens: { command: 400 },
      error: "exit 1"
    })
    assert.strictEqual(taggable(failed, protect(), []), 400)
  })
})

describe("whyNotPrunable", () => {
  const context = { pruned: new Map<string, unknown>(), protection: protect(), protectedTools: [] }

  it("names the first rule that keeps a call", () => {
    assert.strictEqual(
      whyNotPrunable(call({ ...read("a.ts"), callID: "x" }), { ...context, pruned: new Map([["x", {}]]) }),
      "pruned"
    )
    assert.strictEqual(whyNotPrunable(call({ tool: "task", input: {} }), context), "protected-tool")
    assert.strictEqual(
      whyNotPrunable(call(read(".env")), { ...context, protection: protect({ patterns: [".env"] }) }),
      "protected-file"
    )
    const recent = protect({ turnProtection: { enabled: true, turns: 2 }, currentTurn: 3 })
    assert.strictEqual(whyNotPrunable(call({ ...read("a.ts"), turn: 3 }), { ...context, protection: recent }), "recent")
    assert.strictEqual(whyNotPrunable(call({ ...read("a.ts"), status: "running" }), context), "unfinished")
    assert.strictEqual(whyNotPrunable(call({ ...read("a.ts"), hasTextOutput: false }), context), "empty")
    assert.strictEqual(whyNotPrunable(call(read("a.ts", minTaggedTokens - 1)), context), "empty")
    assert.isUndefined(whyNotPrunable(call(read("a.ts")), context))
  })
})

describe("nudge", () => {
  const prunable = [{ id: 3, tokens: 4200 }, { id: 7, tokens: 850 }, { id: 12, tokens: 6000 }]
  const due = {
    enabled: true,
    frequency: 10,
    minTokens: 8000,
    resultsSince: 10,
    arrived: 2,
    prunable: () => prunable,
    worth: () => true
  }

  it("quantifies the opportunity and names the largest outputs when due", () => {
    assert.strictEqual(
      nudge(due),
      "[Context note, not from the user: ~11k tokens in 3 earlier tool outputs could be discarded or extracted if you no longer need them (largest: ids 3, 7, 12).]"
    )
  })

  it("is due only on the request whose new results cross a multiple of the frequency", () => {
    assert.isUndefined(nudge({ ...due, resultsSince: 9, arrived: 2 }))
    assert.isDefined(nudge({ ...due, resultsSince: 11, arrived: 2 }))
    assert.isUndefined(nudge({ ...due, resultsSince: 12, arrived: 2 }))
    assert.isUndefined(nudge({ ...due, resultsSince: 13, arrived: 2 }))
    assert.isUndefined(nudge({ ...due, arrived: 0 }))
  })

  it("is not due when the prunable content is below the token threshold", () => {
    assert.isUndefined(nudge({ ...due, minTokens: 20_000 }))
  })

  it("is not due when discarding now would cost more in cache rebuild than it saves", () => {
    assert.isUndefined(nudge({ ...due, worth: () => false }))
  })

  it("is never due when nudges are switched off", () => {
    assert.isUndefined(nudge({ ...due, enabled: false }))
  })
})
