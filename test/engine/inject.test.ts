import { describe, expect, it } from "vitest"
import { appendTail, syntheticId } from "../../src/engine/inject.ts"
import { assistant, fresh, type Msg, tool, user } from "../support/history.ts"

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
    expect(messages).toHaveLength(4)
    const added = messages[3] as Msg
    expect(added.info).toEqual({ ...last.info, id: syntheticId, role: "user", time: { created } })
    expect(added.parts).toEqual([{
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
    expect(messages).toHaveLength(3)
    const added = messages[2] as Msg
    expect(added.info.role).toBe("user")
    expect(added.info.id).toBe(syntheticId)
    expect(added.info.time).toEqual({ created: 1000 })
    expect(added.info).not.toHaveProperty("summary")
    expect(added.info).not.toHaveProperty("error")
    expect(added.parts).toMatchObject([{ type: "text", text: note, synthetic: true }])
  })

  it("leaves every earlier message exactly as it was", () => {
    const messages = endingWithAssistant()
    const before = fresh(messages)
    appendTail(messages, note)
    expect(messages.slice(0, -1)).toEqual(before)
  })

  it("keeps one note when a request is transformed twice", () => {
    const messages = endingWithUser()
    appendTail(messages, "first")
    appendTail(messages, note)
    expect(messages).toHaveLength(4)
    expect((messages[3] as Msg).parts[0]!.text).toBe(note)
  })

  it("does nothing to a history with no message to follow", () => {
    const messages: Array<Msg> = []
    appendTail(messages, note)
    expect(messages).toEqual([])
  })
})
