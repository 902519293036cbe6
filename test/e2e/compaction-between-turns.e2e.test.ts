import { assert, describe, it } from "vitest"
import { dcpConfig, sourceFile } from "./support/fixtures.ts"
import { reportedPromptTokens } from "./support/model-server.ts"
import { requestText, resultOf } from "./support/requests.ts"
import { useScenario } from "./support/scenario.ts"
import { waitFor } from "./support/wait.ts"

/**
 * The plugin's compaction between turns, on the real OpenCode: a turn that ends with the context above
 * `compaction.atTokens` makes the plugin ask OpenCode to compact (as `/compact` does), and the next prompt starts
 * from the summary.
 */

/**
 * Between the context of a turn that read small.ts (~9,200 tokens as the scripted model reports it, tool definitions
 * included) or none (~8,400, as right after a compaction) and that of a turn that read big.ts (~19,700): a turn ending
 * above it compacts, and the one after that compaction ends below it, so one compaction asked is the only one.
 */
const atTokens = 14_000

const scenario = useScenario({
  files: {
    "src/big.ts": sourceFile("big", 1_000),
    "src/small.ts": sourceFile("small"),
    ...dcpConfig({ compaction: { enabled: true, atTokens } })
  }
})

describe("compaction between turns", () => {
  it("a turn that ends above compaction.atTokens is followed by OpenCode's compaction, and the next prompt starts from its summary", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([
      { toolCalls: [{ name: "read", args: { filePath: s.path("src/big.ts") }, id: "cbt_big" }] },
      { text: "Read it." },
      { text: "Summary: big.ts was read and looks fine." }
    ])
    await s.prompt(session, "read big.ts")
    const before = reportedPromptTokens(s.requests().at(-1)!)
    assert.isAbove(before, atTokens)

    const summary = await waitFor("the plugin's compaction to end", async () => {
      const newest = (await s.messages(session)).findLast((message) => message.info.summary === true)
      return newest !== undefined && "finish" in newest.info ? newest : undefined
    })
    assert.deepInclude(summary.info, { summary: true, finish: "stop" })
    assert.notProperty(summary.info, "error")
    await s.waitIdle(session)

    s.model.script([{ text: "Nothing left to do." }])
    await s.prompt(session, "anything else?")
    const last = s.requests().at(-1)!
    assert.include(requestText(last), "Summary: big.ts was read and looks fine.")
    assert.isBelow(reportedPromptTokens(last), before / 2)
  })

  it("a turn that ends below it is not", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([
      { toolCalls: [{ name: "read", args: { filePath: s.path("src/small.ts") }, id: "cbt_small" }] },
      { text: "Read it." }
    ])
    await s.prompt(session, "read small.ts")
    s.model.script([{ text: "Nothing left to do." }])
    await s.prompt(session, "anything else?")
    // The read ran (no compaction of another session took its scripted reply), and the plugin saw it: its output
    // carries the plugin's tag. The plugin was at work in this session, and asked for no compaction.
    assert.match(resultOf(s.requests().at(-1)!, "cbt_small") ?? "", /^\[id 1\]\n[\s\S]*small line 59/)
    const messages = await s.messages(session)
    assert.isFalse(messages.some((message) => message.info.summary === true))
  })
})
