import { assert, describe, it } from "vitest"
import { dcpConfig, sourceFile } from "./support/fixtures.ts"
import { reportedPromptTokens } from "./support/model-server.ts"
import { requestText } from "./support/requests.ts"
import { useScenario } from "./support/scenario.ts"
import { waitFor } from "./support/wait.ts"

/**
 * OpenCode 1.18.33 compacts by sending its summariser the history as one text, each tool input whole and each result
 * cut to 2,000 characters; a provider refuses a request longer than the model's window. Here the window is 30,000
 * tokens and the scripted model refuses anything longer, as a provider does; the plugin masks every output but the
 * newest two at once, so 72 reads of 2,000-odd characters each stay well under the window in what the model is sent,
 * while the history they make, sent whole, would not fit.
 */
const window = 30_000
const files = Array.from({ length: 72 }, (_, i) => `f${i}`)
const scenario = useScenario({
  contextLimit: window,
  files: {
    ...Object.fromEntries(files.map((name) => [`src/${name}.ts`, sourceFile(name)])),
    "src/big.ts": sourceFile("big", 1_000),
    ...dcpConfig({ strategies: { staleOutputs: { trigger: 0, keepRecent: 2, keepFiles: 0, clearAtLeast: 0 } } })
  }
})

/** 72 reads in 9 steps of 8, each output masked two reads later. */
const readEverything = async (s: ReturnType<typeof scenario>, session: string) => {
  const steps = Array.from({ length: 9 }, (_, k) => ({
    toolCalls: files.slice(k * 8, k * 8 + 8).map((name) => ({
      name: "read",
      args: { filePath: s.path(`src/${name}.ts`) },
      id: `cmp_${name}`
    }))
  }))
  s.model.script([...steps, { text: "Done." }])
  await s.prompt(session, "read every file")
}

/** The session's newest summary, once OpenCode has stored how it ended. */
const summaryOf = (s: ReturnType<typeof scenario>, session: string) =>
  waitFor("the summary to end", async () => {
    const newest = (await s.messages(session)).findLast((message) => message.info.summary === true)
    return newest !== undefined && "finish" in newest.info ? newest : undefined
  })

describe("OpenCode's compaction", () => {
  it("of a session the plugin kept under the window succeeds: the summariser gets the outputs the model no longer sees cleared", async () => {
    const s = scenario()
    const session = await s.newSession()
    await readEverything(s, session)
    assert.isBelow(reportedPromptTokens(s.requests().at(-1)!), window / 2)

    const before = s.requests().length
    s.model.script([{ text: "Summary: every file was read." }])
    const compacted = await s.opencode().api("POST", `/session/${session}/summarize`, {
      providerID: "fake",
      modelID: "fake-model"
    })
    assert.strictEqual(compacted.status, 200)
    // OpenCode answers the request before it has stored how the summary ended.
    const summary = await summaryOf(s, session)
    assert.deepInclude(summary.info, { summary: true, finish: "stop" })
    assert.notProperty(summary.info, "error")
    // The summariser's request is the one with the history written out; OpenCode may go on with the session after it.
    const summariser = s.requests().slice(before).filter((request) =>
      requestText(request).includes("[Assistant tool call]:")
    )
    assert.lengthOf(summariser, 1)
    assert.include(requestText(summariser[0]!), "[Tool result]: [Old tool result content cleared]")
  })

  it("that OpenCode starts on its own when the window fills goes through, and the session carries on", async () => {
    const s = scenario()
    const session = await s.newSession()
    await readEverything(s, session)
    s.model.script([
      { toolCalls: [{ name: "read", args: { filePath: s.path("src/big.ts") }, id: "cmp_big" }] },
      { text: "Read it." },
      { text: "Summary: every file was read, then big.ts." },
      { text: "Nothing left to do." }
    ])
    await s.prompt(session, "now read big.ts")
    const summary = await summaryOf(s, session)
    assert.deepInclude(summary.info, { summary: true, finish: "stop" })
    assert.notProperty(summary.info, "error")
    await s.waitIdle(session)
    const last = s.requests().at(-1)!
    assert.include(requestText(last), "Summary: every file was read, then big.ts.")
    assert.isBelow(last.messages.length, Math.max(...s.requests().map((request) => request.messages.length)) / 4)
  })
})
