import { assert, describe, it } from "vitest"
import { agentPrompts } from "../../src/host/agents.ts"

describe("agentPrompts", () => {
  it("keeps the agents of OpenCode's config that have a prompt of their own", () => {
    const prompts = agentPrompts({
      build: { model: "anthropic/claude-sonnet-4-5" },
      reviewer: { mode: "primary", prompt: "You review code.", tools: { write: false } },
      docs: { prompt: "You write documentation." }
    })
    assert.deepStrictEqual([...prompts], [["reviewer", "You review code."], ["docs", "You write documentation."]])
  })

  it("passes over an agent whose entry is not what OpenCode's config schema says", () => {
    const prompts = agentPrompts({ odd: { prompt: 42 }, broken: "reviewer", none: null, ok: { prompt: "Short." } })
    assert.deepStrictEqual([...prompts], [["ok", "Short."]])
  })

  it("is empty without agents", () => {
    for (const agents of [undefined, null, "agents", []]) assert.strictEqual(agentPrompts(agents).size, 0)
  })
})
