import { describe, expect, it } from "vitest"
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
    expect(tagged([read("src/a.ts", 1200), { tool: "bash", input: { command: "npm test" }, outputTokens: 800 }]))
      .toEqual([[0, 1200], [1, 800]])
  })

  it("leaves out always-protected tools", () => {
    expect(
      tagged([
        { tool: "task", input: { description: "explore" }, outputTokens: 5000 },
        { tool: "todowrite", input: { todos: [] }, outputTokens: 500 },
        read("a.ts")
      ]).map(([position]) => position)
    ).toEqual([2])
  })

  it("leaves out the tools protected in tools.settings.protectedTools", () => {
    expect(
      tagged([{ tool: "bash", input: { command: "npm test" }, outputTokens: 900 }, read("a.ts")], {
        protectedTools: ["bash"]
      })
    )
      .toEqual([[1, 1200]])
  })

  it("leaves out calls on protected files", () => {
    const protection = protect({ patterns: ["*.env", "src/secret/**"] })
    expect(tagged([read(".env"), read("src/secret/keys.ts"), read("src/a.ts")], { protection })).toEqual([[2, 1200]])
  })

  it("tags turn-protected calls too: a tag, once sent, never changes", () => {
    const protection = protect({ turnProtection: { enabled: true, turns: 4 }, currentTurn: 9 })
    expect(tagged([{ ...read("a.ts"), turn: 2 }, { ...read("b.ts"), turn: 8 }], { protection })).toHaveLength(2)
  })

  it("leaves out calls that have not finished", () => {
    expect(tagged([{ ...read("a.ts"), status: "pending" }, { ...read("b.ts"), status: "running" }, read("c.ts")]))
      .toEqual([[2, 1200]])
  })

  it("leaves out outputs too small to be worth a placeholder", () => {
    expect(tagged([read("a.ts", minTaggedTokens - 1), read("b.ts", minTaggedTokens)])).toEqual([[1, minTaggedTokens]])
  })

  it("leaves out outputs that are not text or were already cleared", () => {
    expect(tagged([{ ...read("a.ts"), hasTextOutput: false }, { ...read("b.ts"), compacted: true }])).toEqual([])
  })

  it("tags a failed call by the size of its large inputs", () => {
    const failed = call({
      tool: "bash",
      callID: "c1",
      input: { command: "x" },
      inputTokens: { command: 400 },
      error: "exit 1"
    })
    expect(taggable(failed, protect(), [])).toBe(400)
  })
})

describe("whyNotPrunable", () => {
  const context = { pruned: new Map<string, unknown>(), protection: protect(), protectedTools: [] }

  it("names the first rule that keeps a call", () => {
    expect(whyNotPrunable(call({ ...read("a.ts"), callID: "x" }), { ...context, pruned: new Map([["x", {}]]) })).toBe(
      "pruned"
    )
    expect(whyNotPrunable(call({ tool: "task", input: {} }), context)).toBe("protected-tool")
    expect(whyNotPrunable(call(read(".env")), { ...context, protection: protect({ patterns: [".env"] }) })).toBe(
      "protected-file"
    )
    const recent = protect({ turnProtection: { enabled: true, turns: 2 }, currentTurn: 3 })
    expect(whyNotPrunable(call({ ...read("a.ts"), turn: 3 }), { ...context, protection: recent })).toBe("recent")
    expect(whyNotPrunable(call({ ...read("a.ts"), status: "running" }), context)).toBe("unfinished")
    expect(whyNotPrunable(call({ ...read("a.ts"), hasTextOutput: false }), context)).toBe("empty")
    expect(whyNotPrunable(call(read("a.ts", minTaggedTokens - 1)), context)).toBe("empty")
    expect(whyNotPrunable(call(read("a.ts")), context)).toBeUndefined()
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
    expect(nudge(due)).toBe(
      "[Context note, not from the user: ~11k tokens in 3 earlier tool outputs could be discarded or extracted if you no longer need them (largest: ids 3, 7, 12).]"
    )
  })

  it("is due only on the request whose new results cross a multiple of the frequency", () => {
    expect(nudge({ ...due, resultsSince: 9, arrived: 2 })).toBeUndefined()
    expect(nudge({ ...due, resultsSince: 11, arrived: 2 })).toBeDefined()
    expect(nudge({ ...due, resultsSince: 12, arrived: 2 })).toBeUndefined()
    expect(nudge({ ...due, resultsSince: 13, arrived: 2 })).toBeUndefined()
    expect(nudge({ ...due, arrived: 0 })).toBeUndefined()
  })

  it("is not due when the prunable content is below the token threshold", () => {
    expect(nudge({ ...due, minTokens: 20_000 })).toBeUndefined()
  })

  it("is not due when discarding now would cost more in cache rebuild than it saves", () => {
    expect(nudge({ ...due, worth: () => false })).toBeUndefined()
  })

  it("is never due when nudges are switched off", () => {
    expect(nudge({ ...due, enabled: false })).toBeUndefined()
  })
})
