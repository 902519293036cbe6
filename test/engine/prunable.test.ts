import { describe, expect, it } from "vitest"
import type { ToolCall } from "../../src/engine/calls.ts"
import { listPrunable, nudgeDue, whyNotPrunable } from "../../src/engine/listing.ts"
import { type Listed, minListedTokens, prunableBlock } from "../../src/engine/prunable.ts"
import type { Protection } from "../../src/engine/protection.ts"
import { call, type CallSpec, history, protect, worktree } from "./support.ts"

const read = (path: string, outputTokens = 1200): CallSpec => ({
  tool: "read",
  input: { filePath: `${worktree}/${path}` },
  outputTokens
})

/** Stable IDs that are not positions: c1 -> 31, c2 -> 32, ... */
const idOf = (call: ToolCall) => 30 + Number(call.callID.slice(1))

const list = (
  calls: ReadonlyArray<ToolCall>,
  options: { pruned?: ReadonlyMap<string, unknown>; protection?: Protection; protectedTools?: ReadonlyArray<string> } = {}
) =>
  listPrunable(calls, idOf, {
    pruned: options.pruned ?? new Map(),
    protection: options.protection ?? protect(),
    protectedTools: options.protectedTools ?? []
  })

const listedIds = (listed: ReadonlyArray<Listed>) => listed.map((entry) => entry.id)

describe("listPrunable", () => {
  it("lists every prunable call with its stable ID and size", () => {
    const listed = list(history([read("src/a.ts", 1200), { tool: "bash", input: { command: "npm test" }, outputTokens: 800 }]))
    expect(listed.map(({ call, id, tokens }) => [id, call.tool, tokens])).toEqual([[31, "read", 1200], [32, "bash", 800]])
  })

  it("lists in stable-ID order, not in the order the calls were given", () => {
    const calls = history([read("a.ts"), read("b.ts"), read("c.ts")])
    const byId = new Map([["c1", 9], ["c2", 3], ["c3", 5]])
    const listed = listPrunable(calls, (call) => byId.get(call.callID)!, { pruned: new Map(), protection: protect(), protectedTools: [] })
    expect(listedIds(listed)).toEqual([3, 5, 9])
  })

  it("leaves out calls already pruned", () => {
    const calls = history([read("a.ts"), read("b.ts")])
    expect(listedIds(list(calls, { pruned: new Map([["c1", { reason: "discard" }]]) }))).toEqual([32])
  })

  it("leaves out always-protected tools", () => {
    const calls = history([
      { tool: "task", input: { description: "explore" }, outputTokens: 5000 },
      { tool: "todowrite", input: { todos: [] }, outputTokens: 500 },
      read("a.ts")
    ])
    expect(listedIds(list(calls))).toEqual([33])
  })

  it("leaves out the tools protected in tools.settings.protectedTools", () => {
    const calls = history([{ tool: "bash", input: { command: "npm test" }, outputTokens: 900 }, read("a.ts")])
    expect(listedIds(list(calls, { protectedTools: ["bash"] }))).toEqual([32])
  })

  it("leaves out calls on protected files", () => {
    const calls = history([read(".env"), read("src/secret/keys.ts"), read("src/a.ts")])
    expect(listedIds(list(calls, { protection: protect({ patterns: ["*.env", "src/secret/**"] }) }))).toEqual([33])
  })

  it("leaves out turn-protected calls", () => {
    const calls = history([{ ...read("a.ts"), turn: 2 }, { ...read("b.ts"), turn: 8 }])
    const protection = protect({ turnProtection: { enabled: true, turns: 4 }, currentTurn: 9 })
    expect(listedIds(list(calls, { protection }))).toEqual([31])
  })

  it("leaves out calls that have not finished", () => {
    const calls = history([{ ...read("a.ts"), status: "pending" }, { ...read("b.ts"), status: "running" }, read("c.ts")])
    expect(listedIds(list(calls))).toEqual([33])
  })

  it("leaves out outputs too small to be worth a placeholder", () => {
    const calls = history([read("a.ts", minListedTokens - 1), read("b.ts", minListedTokens)])
    expect(listedIds(list(calls))).toEqual([32])
  })

  it("leaves out outputs that are not text or were already cleared", () => {
    const calls = history([{ ...read("a.ts"), hasTextOutput: false }, { ...read("b.ts"), compacted: true }])
    expect(list(calls)).toEqual([])
  })

  it("lists a failed call by the size of its large inputs", () => {
    const failed = call({
      tool: "bash",
      callID: "c1",
      input: { command: "x" },
      inputTokens: { command: 400 },
      error: "exit 1"
    })
    expect(list([failed]).map((entry) => entry.tokens)).toEqual([400])
  })
})

describe("whyNotPrunable", () => {
  const context = { pruned: new Map<string, unknown>(), protection: protect(), protectedTools: [] }

  it("names the first rule that keeps a call", () => {
    expect(whyNotPrunable(call({ ...read("a.ts"), callID: "x" }), { ...context, pruned: new Map([["x", {}]]) })).toBe("pruned")
    expect(whyNotPrunable(call({ tool: "task", input: {} }), context)).toBe("protected-tool")
    expect(whyNotPrunable(call(read(".env")), { ...context, protection: protect({ patterns: [".env"] }) })).toBe("protected-file")
    const recent = protect({ turnProtection: { enabled: true, turns: 2 }, currentTurn: 3 })
    expect(whyNotPrunable(call({ ...read("a.ts"), turn: 3 }), { ...context, protection: recent })).toBe("recent")
    expect(whyNotPrunable(call({ ...read("a.ts"), status: "running" }), context)).toBe("unfinished")
    expect(whyNotPrunable(call({ ...read("a.ts"), hasTextOutput: false }), context)).toBe("empty")
    expect(whyNotPrunable(call(read("a.ts")), context)).toBeUndefined()
  })
})

describe("prunableBlock", () => {
  const calls = history([
    read("src/config.ts", 4200),
    { tool: "bash", input: { command: "npm test" }, outputTokens: 850 },
    { tool: "mystery", input: { n: 1 }, outputTokens: 350 }
  ])
  const listed = list(calls)

  it("lists each call as `id: tool, argument (~tokens)` inside a prunable-tools block", () => {
    const block = prunableBlock({ listed, nudge: false, cooldown: false })
    expect(block.startsWith("<prunable-tools>\n")).toBe(true)
    expect(block.endsWith("\n</prunable-tools>")).toBe(true)
    expect(block).toContain("\n31: read, src/config.ts (~4.2k)\n32: bash, npm test (~850)\n33: mystery (~350)\n")
  })

  it("is byte-identical for the same list", () => {
    expect(prunableBlock({ listed: list(calls), nudge: false, cooldown: false }))
      .toBe(prunableBlock({ listed, nudge: false, cooldown: false }))
  })

  it("says when there is nothing to prune", () => {
    const block = prunableBlock({ listed: [], nudge: false, cooldown: false })
    expect(block).toMatch(/^<prunable-tools>\n.*\n<\/prunable-tools>$/)
    expect(block).not.toMatch(/\d+:/)
  })

  it("adds no reminder when no nudge is due", () => {
    expect(prunableBlock({ listed, nudge: false, cooldown: false })).not.toMatch(/could be discarded/)
  })

  it("quantifies the opportunity in tokens and outputs when a nudge is due", () => {
    const block = prunableBlock({ listed, nudge: true, cooldown: false })
    expect(block).toContain("~5.4k tokens in 3 outputs")
    expect(block.split("\n").length).toBe(prunableBlock({ listed, nudge: false, cooldown: false }).split("\n").length + 1)
  })

  it("words the nudge calmly", () => {
    const nudge = prunableBlock({ listed, nudge: true, cooldown: false }).split("\n").at(-2)!
    expect(nudge).not.toMatch(/!|\b(MUST|IMPORTANT|URGENT|CRITICAL|WARNING)\b|immediately|now\b/i)
  })

  it("shows the cooldown note instead of the list right after a prune", () => {
    const block = prunableBlock({ listed, nudge: true, cooldown: true })
    expect(block).toMatch(/^<prunable-tools>\n[^\n]+\n<\/prunable-tools>$/)
    expect(block).not.toContain("31:")
    expect(block).not.toContain("could be discarded")
  })
})

describe("nudgeDue", () => {
  const listed: Array<Listed> = history([read("a.ts", 5000), read("b.ts", 4000)]).map((call, i) => ({
    id: i + 1,
    call,
    tokens: call.outputTokens
  }))
  const due = (overrides: Partial<Parameters<typeof nudgeDue>[0]>) =>
    nudgeDue({ enabled: true, frequency: 10, minTokens: 8000, resultsSince: 10, listed, ...overrides })

  it("is due when enough results arrived and enough is prunable", () => {
    expect(due({})).toBe(true)
  })

  it("is not due before the configured number of tool results", () => {
    expect(due({ resultsSince: 9 })).toBe(false)
  })

  it("is not due when the prunable content is below the token threshold", () => {
    expect(due({ minTokens: 9001 })).toBe(false)
    expect(due({ listed: listed.slice(0, 1) })).toBe(false)
  })

  it("is never due when nudges are switched off", () => {
    expect(due({ enabled: false, resultsSince: 100 })).toBe(false)
  })
})
