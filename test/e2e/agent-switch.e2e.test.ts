import { assert, describe, it } from "vitest"
import { done, holdsPlaceholder, read, sentWhole, sourceFile } from "./support/fixtures.ts"
import type { RecordedRequest } from "./support/model-server.ts"
import { resultOf, systemText } from "./support/requests.ts"
import { type Scenario, useScenario } from "./support/scenario.ts"

/**
 * The user switches agents between two prompts. An agent with a prompt of its own (in `opencode.json` or an
 * `agent/*.md` file) is sent it in place of the model's prompt, so the first request to it is written to the prompt
 * cache whole, with the plugin or without it: a free moment to apply what waits. OpenCode's plan agent has the
 * model's prompt and the same tools as build: nothing changes. Default scheduling (`cache.mode: "auto"`); a small
 * duplicate (a.ts read twice, a moment apart) waits on the warm cache.
 */

const files = {
  "src/a.ts": sourceFile("alpha"),
  "src/b.ts": sourceFile("beta"),
  ".opencode/dcp.jsonc": `${JSON.stringify({ cache: { mode: "auto" } }, null, 2)}\n`,
  ".opencode/opencode.json": `${
    JSON.stringify({ agent: { reviewer: { mode: "primary", prompt: "You review code and nothing else." } } })
  }\n`,
  ".opencode/agent/docs.md": "---\ndescription: Writes documentation\nmode: primary\n---\nYou write documentation.\n"
}

/** A first prompt to build reads a.ts twice; a second, to `agent`, reads b.ts. Each prompt's requests. */
const run = async (s: Scenario, agent: string, prefix: string) => {
  const session = await s.newSession()
  s.model.script([read(s, "src/a.ts", `${prefix}_1`), read(s, "src/a.ts", `${prefix}_2`), done])
  await s.prompt(session, "read a.ts twice")
  const first = s.requests().length
  s.model.script([read(s, "src/b.ts", `${prefix}_3`), done])
  await s.prompt(session, "now b.ts", undefined, undefined, agent)
  const requests = s.requests().filter((request) => resultOf(request, `${prefix}_1`) !== undefined)
  return { before: requests.slice(0, first - 1), after: s.requests().slice(first) }
}

const pruned = (request: RecordedRequest, prefix: string) => holdsPlaceholder(resultOf(request, `${prefix}_1`)!)
/** The duplicate waiting: sent whole, with the tag the plugin gives it (`sentWhole`). */
const whole = (request: RecordedRequest, prefix: string) => sentWhole(resultOf(request, `${prefix}_1`))

describe("the user switches agents", () => {
  const scenario = useScenario({ files, mainModel: "claude-fake" })

  it("to plan: the same system prompt, and the small duplicate waits", async () => {
    const { before, after } = await run(scenario(), "plan", "p")
    assert.strictEqual(systemText(after[0]!), systemText(before.at(-1)!))
    assert.isTrue(after.every((request) => whole(request, "p")))
  })

  it("to an agent of opencode.json with a prompt of its own: its first request carries the duplicate pruned", async () => {
    const { before, after } = await run(scenario(), "reviewer", "r")
    assert.isTrue(systemText(after[0]!).startsWith("You review code and nothing else."))
    assert.isTrue(before.every((request) => whole(request, "r")))
    assert.isTrue(after.every((request) => pruned(request, "r")))
  })

  it("to an agent of an agent/*.md file: the same", async () => {
    const { before, after } = await run(scenario(), "docs", "d")
    assert.isTrue(systemText(after[0]!).startsWith("You write documentation."))
    assert.isTrue(before.every((request) => whole(request, "d")))
    assert.isTrue(after.every((request) => pruned(request, "d")))
  })
})
