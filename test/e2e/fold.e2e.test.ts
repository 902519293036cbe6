import { assert, describe, it } from "vitest"
import { call, dcpConfig, done, read, sourceFile } from "./support/fixtures.ts"
import type { RecordedRequest, Reply } from "./support/model-server.ts"
import { contentText, requestAfter, requestText, resultOf } from "./support/requests.ts"
import { type Scenario, useScenario } from "./support/scenario.ts"

/**
 * Folding old turns (src/engine/fold.ts) on the real OpenCode: once masking has pruned an old turn's outputs, what the
 * scripted model receives of that turn is one digest text, and the request still has the shape a provider requires.
 * Masking takes every output but the newest at once, so a turn is folded as soon as two newer ones follow it.
 */
const scenario = useScenario({
  files: {
    "src/a.ts": sourceFile("alpha"),
    "src/b.ts": sourceFile("beta"),
    "src/c.ts": sourceFile("gamma"),
    // Larger than the tail OpenCode keeps after a compaction (15,000 tokens by its estimate of 4 characters a token).
    "src/big.ts": sourceFile("delta", 2000),
    ...dcpConfig({ strategies: { staleOutputs: { trigger: 0, keepRecent: 1, keepFiles: 0, clearAtLeast: 0 } } })
  }
})

const digestHeader = "[folded tool calls]"

type Message = RecordedRequest["messages"][number]
const callIdsOf = (message: Message): Array<string> =>
  Array.isArray(message.tool_calls) ? (message.tool_calls as Array<{ id: string }>).map((entry) => entry.id) : []

/**
 * The shape a provider requires: each assistant message's tool calls answered, in order, by the tool messages right
 * after it, and no tool message that answers anything else.
 */
const assertProviderShape = (request: RecordedRequest) => {
  const messages = request.messages
  messages.forEach((message, i) => {
    const calls = callIdsOf(message)
    if (calls.length > 0) {
      const answers = messages.slice(i + 1, i + 1 + calls.length).map((entry) =>
        entry.role === "tool" ? entry.tool_call_id : `(${entry.role})`
      )
      assert.deepStrictEqual(answers, calls, `the calls of message ${i} answered right after it`)
    }
    if (message.role === "tool") {
      let k = i - 1
      while (k >= 0 && messages[k]!.role === "tool") k--
      assert.include(callIdsOf(messages[k]!), message.tool_call_id, `tool message ${i} answers a call just made`)
    }
  })
}

/** The texts of the assistant messages that hold digest lines (`#N tool ...`), as OpenCode joined each step's. */
const digestsOf = (request: RecordedRequest): Array<string> =>
  request.messages.filter((message) => message.role === "assistant").map((message) => contentText(message.content))
    .filter((text) => /^#\d+ /m.test(text))

/** Three turns: the first reads a.ts and b.ts, the second c.ts, the third answers. */
const threeTurns = async (s: Scenario, session: string, third: ReadonlyArray<Reply>) => {
  s.model.script([read(s, "src/a.ts", "fold_1"), read(s, "src/b.ts", "fold_2"), done])
  await s.prompt(session, "read a.ts and b.ts")
  s.model.script([read(s, "src/c.ts", "fold_3"), done])
  await s.prompt(session, "now read c.ts")
  s.model.script([...third])
  await s.prompt(session, "what did you find?")
}

describe("folding old turns", () => {
  it("an old turn reaches the model as one digest, in a request with the provider's shape", async () => {
    const s = scenario()
    const session = await s.newSession()
    await threeTurns(s, session, [done])

    const last = s.requests().at(-1)!
    assert.deepStrictEqual(digestsOf(last), [
      `${digestHeader}\n#1 read src/a.ts\n#2 read src/b.ts`
    ])
    assert.isUndefined(resultOf(last, "fold_1"))
    assert.isUndefined(resultOf(last, "fold_2"))
    assert.isDefined(resultOf(last, "fold_3"))
    assert.include(requestText(last), "read a.ts and b.ts")
    for (const request of s.requests()) assertProviderShape(request)
  })

  it("a folded turn reads in order: each digest where its calls stood, set apart from the model's words", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([
      { text: "First a.ts.", toolCalls: [{ name: "read", args: { filePath: s.path("src/a.ts") }, id: "fold_1" }] },
      { text: "Now b.ts.", toolCalls: [{ name: "read", args: { filePath: s.path("src/b.ts") }, id: "fold_2" }] },
      done
    ])
    await s.prompt(session, "read a.ts and b.ts")
    s.model.script([read(s, "src/c.ts", "fold_3"), done])
    await s.prompt(session, "now read c.ts")
    s.model.script([done])
    await s.prompt(session, "what did you find?")

    // OpenCode's OpenAI-style conversion joins the texts of a step with nothing between them.
    const last = s.requests().at(-1)!
    assert.deepStrictEqual(digestsOf(last), [
      `First a.ts.\n${digestHeader}\n#1 read src/a.ts`,
      "Now b.ts.\n#2 read src/b.ts"
    ])
    assertProviderShape(last)
  })

  it("recall of a folded call returns its output", async () => {
    const s = scenario()
    const session = await s.newSession()
    await threeTurns(s, session, [call("recall", { ids: ["1"] }, "fold_recall"), done])

    const recalled = resultOf(requestAfter(s.requests(), "fold_recall"), "fold_recall") ?? ""
    assert.include(recalled, 'alpha59 = "alpha line 59"')
  })

  it("an undo back to the second turn unfolds the first: it is recent again", async () => {
    const s = scenario()
    const session = await s.newSession()
    await threeTurns(s, session, [done])
    assert.lengthOf(digestsOf(s.requests().at(-1)!), 1)

    const second = (await s.messages(session)).find((message) =>
      message.parts.some((part) => part.text === "now read c.ts")
    )!
    const reverted = await s.opencode().api("POST", `/session/${session}/revert`, { messageID: second.info.id })
    assert.strictEqual(reverted.status, 200)
    s.model.script([done])
    await s.prompt(session, "never mind")

    const after = s.requests().at(-1)!
    assert.deepStrictEqual(digestsOf(after), [])
    assert.isDefined(resultOf(after, "fold_1"))
    assert.isUndefined(resultOf(after, "fold_3"))
    assertProviderShape(after)
  })

  it("after OpenCode compacts the session, nothing of the summarised turns is sent, folded or not", async () => {
    const s = scenario()
    const session = await s.newSession()
    await threeTurns(s, session, [done])
    assert.lengthOf(digestsOf(s.requests().at(-1)!), 1)
    // A fourth turn too large for the tail OpenCode keeps: the compaction summarises the first three.
    s.model.script([call("read", { filePath: s.path("src/big.ts"), limit: 2000 }, "fold_4"), done])
    await s.prompt(session, "now read big.ts")
    // The run's note, posted once the session is idle, before the compaction is asked for, as a user would see it:
    // one clean-clone run on a busy machine, which asked while the note was being posted, was sent the first turn
    // beside the summary.
    await s.waitForNote(session, "old turn folded: 3")

    s.model.script([{ text: "Summary: a.ts, b.ts, c.ts and big.ts were read." }])
    const compacted = await s.opencode().api("POST", `/session/${session}/summarize`, {
      providerID: "fake",
      modelID: "fake-model"
    })
    assert.strictEqual(compacted.status, 200)
    s.model.script([done])
    await s.prompt(session, "go on")

    const after = s.requests().at(-1)!
    assert.include(requestText(after), "Summary: a.ts, b.ts, c.ts and big.ts were read.")
    assert.notInclude(requestText(after), "read a.ts and b.ts")
    assert.deepStrictEqual(digestsOf(after), [])
    for (const callID of ["fold_1", "fold_2", "fold_3"]) assert.isUndefined(resultOf(after, callID))
    assertProviderShape(after)
  })
})
