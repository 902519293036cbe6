import { assert, describe, it } from "vitest"
import { call, done, holdsPlaceholder, read, sentWhole, sourceFile } from "./support/fixtures.ts"
import type { RecordedRequest } from "./support/model-server.ts"
import { resultOf, toolNames } from "./support/requests.ts"
import { type Scenario, useScenario } from "./support/scenario.ts"
import { waitFor } from "./support/wait.ts"

/**
 * An MCP server whose tools change during a session (test/e2e/support/fake-mcp.mjs). Tool definitions head every
 * request, before the system prompt, so the first request that sends a new list is written to the prompt cache whole,
 * with the plugin or without it: a free moment to apply what waits. OpenCode publishes `mcp.tools.changed` once it has
 * the new list, and the plugin takes the session's next request as cold. Default scheduling (`cache.mode: "auto"`); a
 * small duplicate (a.ts read twice, a moment apart) waits on the warm cache.
 */

const fakeMcpServer = new URL("./support/fake-mcp.mjs", import.meta.url).pathname

const files = {
  "src/a.ts": sourceFile("alpha"),
  ".opencode/dcp.jsonc": `${JSON.stringify({ cache: { mode: "auto" } }, null, 2)}\n`,
  ".opencode/opencode.json": `${
    JSON.stringify({ mcp: { fake: { type: "local", command: [process.execPath, fakeMcpServer] } } })
  }\n`
}

/**
 * Reads a.ts twice, then calls the MCP server's `tool` once and `noop` twice; the requests that carry `${prefix}_1`.
 * The reply after `tool`'s call is held until OpenCode announces a changed tool list (`mcp.tools.changed`) when
 * `toolsChange`: the request after it is then built with the new list, however long OpenCode takes to fetch it.
 */
const run = async (
  s: Scenario,
  tool: string,
  prefix: string,
  toolsChange = false
): Promise<ReadonlyArray<RecordedRequest>> => {
  const events = await s.subscribe()
  try {
    const session = await s.newSession()
    const toolsChanged = () =>
      waitFor("OpenCode's mcp.tools.changed event", () => events.events.find((e) => e.type === "mcp.tools.changed"))
    s.model.script([
      read(s, "src/a.ts", `${prefix}_1`),
      read(s, "src/a.ts", `${prefix}_2`),
      call(tool, {}, `${prefix}_3`),
      { ...call("fake_noop", {}, `${prefix}_4`), ...(toolsChange ? { after: toolsChanged } : {}) },
      call("fake_noop", {}, `${prefix}_5`),
      done
    ])
    await s.prompt(session, "read a.ts twice, then call the MCP tools")
    return s.requests().filter((request) => resultOf(request, `${prefix}_1`) !== undefined)
  } finally {
    events.close()
  }
}

const serverTools = (request: RecordedRequest) => toolNames(request).filter((name) => name.startsWith("fake_"))

describe("an MCP server's tools change during a session", () => {
  const scenario = useScenario({ files, mainModel: "claude-fake" })

  it("with the same tools on every request, the small duplicate waits to the end", async () => {
    const requests = await run(scenario(), "fake_noop", "n")
    assert.lengthOf(requests, 5)
    for (const request of requests) {
      assert.deepStrictEqual(serverTools(request), ["fake_noop", "fake_toggle"])
      assert.isTrue(sentWhole(resultOf(request, "n_1")))
    }
  })

  it("the duplicate is applied with the first request that sends the new tool list, and not before", async () => {
    const requests = await run(scenario(), "fake_toggle", "t", true)
    const changed = requests.findIndex((request) => serverTools(request).includes("fake_extra"))
    assert.isAbove(changed, 0, "OpenCode sent the new tool list after the toggle")
    requests.forEach((request, i) => {
      assert.strictEqual(
        holdsPlaceholder(resultOf(request, "t_1")!),
        i >= changed,
        `request ${i + 1} of ${requests.length}`
      )
    })
  })
})
