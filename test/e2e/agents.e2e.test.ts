import { assert, describe, it } from "vitest"
import { done } from "./support/fixtures.ts"
import { systemText } from "./support/requests.ts"
import { type Scenario, useScenario } from "./support/scenario.ts"
import { waitFor } from "./support/wait.ts"

/**
 * OpenCode's own hidden agents pass through the plugin's system transform too (src/host/agents.ts): the title
 * generator runs on the small model (`fake-small`) after the first prompt, and its request is left as OpenCode and the
 * other plugins made it.
 */

/** The main model's first request and the title request of one prompt in a new session. */
const firstPrompt = async (s: Scenario) => {
  const before = s.model.requests.length
  const session = await s.newSession()
  s.model.script([done])
  await s.prompt(session, "hello")
  const title = await waitFor(
    "the title request",
    () => s.model.requests.slice(before).find((request) => request.model === "fake-small")
  )
  return { main: s.requests()[0]!, title }
}

describe("OpenCode's title request", () => {
  const scenario = useScenario({})

  it("carries no pruning section; the main model's request does", async () => {
    const { main, title } = await firstPrompt(scenario())
    assert.include(systemText(main), "## Context pruning")
    assert.include(systemText(title), "title generator")
    assert.notInclude(systemText(title), "## Context pruning")
  })
})

describe("OpenCode's title request, with a plugin that puts a system text of its own before OpenCode's", () => {
  // Listed before this plugin in opencode.json, so OpenCode runs it first, and this plugin then finds the title
  // generator's instructions in the second system text, not the first.
  const first = `export const First = async () => ({
  "experimental.chat.system.transform": async (_input, output) => {
    output.system.unshift("Style: answer tersely.")
  }
})
`
  const scenario = useScenario({ files: { "first/first.js": first }, pluginsBefore: ["./first/first.js"] })

  it("carries no pruning section; the main model's request does", async () => {
    const { main, title } = await firstPrompt(scenario())
    assert.include(systemText(title), "Style: answer tersely.")
    assert.include(systemText(main), "## Context pruning")
    assert.include(systemText(title), "title generator")
    assert.notInclude(systemText(title), "## Context pruning")
  })
})
