import { assert, describe, it } from "vitest"
import { appendTail } from "../../src/engine/inject.ts"
import { assistant, fresh, type Msg, syntheticId, tool, user } from "../support/history.ts"

const note = "[Context note, not from the user: ~12k tokens in 4 earlier tool outputs could be discarded]"

const endingWithUser = (): Array<Msg> => [
  user("read a.ts"),
  assistant([tool({ tool: "read", callID: "r1", input: { filePath: "a.ts" }, output: "body" })]),
  user("now fix it")
]
const endingWithAssistant = (): Array<Msg> => {
  const messages = [
    user("fix it"),
    assistant([tool({ tool: "read", callID: "r1", input: { filePath: "a.ts" }, output: "body" })])
  ]
  Object.assign(messages[1]!.info, {
    summary: true,
    error: { name: "MessageAbortedError", data: {} },
    time: { created: 1000, completed: 1500 }
  })
  return messages
}

describe("appendTail", () => {
  it("appends one synthetic user text message after a user message", () => {
    const messages = endingWithUser()
    const last = messages[2]!
    const created = (last.info.time as { readonly created: number }).created
    appendTail(messages, note)
    assert.lengthOf(messages, 4)
    const added = messages[3] as Msg
    assert.deepStrictEqual(added.info, { ...last.info, id: syntheticId, role: "user", time: { created } })
    assert.deepStrictEqual(added.parts, [{
      id: `${syntheticId}-text`,
      sessionID: last.info.sessionID,
      messageID: syntheticId,
      type: "text",
      text: note,
      synthetic: true
    }])
  })

  it("appends a user message after the results of an assistant message, with none of its flags", () => {
    const messages = endingWithAssistant()
    appendTail(messages, note)
    assert.lengthOf(messages, 3)
    const added = messages[2] as Msg
    assert.strictEqual(added.info.role, "user")
    assert.strictEqual(added.info.id, syntheticId)
    assert.deepStrictEqual(added.info.time, { created: 1000 })
    assert.notProperty(added.info, "summary")
    assert.notProperty(added.info, "error")
    assert.lengthOf(added.parts, 1)
    assert.deepInclude(added.parts[0], { type: "text", text: note, synthetic: true })
  })

  it("leaves every earlier message exactly as it was", () => {
    const messages = endingWithAssistant()
    const before = fresh(messages)
    appendTail(messages, note)
    assert.deepStrictEqual(messages.slice(0, -1), before)
  })

  it("keeps one note when a request is transformed twice", () => {
    const messages = endingWithUser()
    appendTail(messages, "first")
    appendTail(messages, note)
    assert.lengthOf(messages, 4)
    assert.strictEqual((messages[3] as Msg).parts[0]!.text, note)
  })

  it("does nothing to a history with no message to follow", () => {
    const messages: Array<Msg> = []
    appendTail(messages, note)
    assert.deepStrictEqual(messages, [])
  })
})
