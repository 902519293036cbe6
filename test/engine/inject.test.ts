import { describe, expect, it } from "vitest"
import { appendTail, syntheticId, syntheticTool } from "../../src/engine/inject.ts"
import { assistant, fresh, type Msg, tool, user } from "../support/history.ts"

const block = "<prunable-tools>\n3: read, src/a.ts (~1.2k)\n</prunable-tools>"

const endingWithUser = (): Array<Msg> => [
  user("read a.ts"),
  assistant([tool({ tool: "read", callID: "r1", input: { filePath: "a.ts" }, output: "body" })]),
  user("now fix it")
]
const endingWithAssistant = (): Array<Msg> => {
  const messages = [user("fix it"), assistant([tool({ tool: "read", callID: "r1", input: { filePath: "a.ts" }, output: "body" })])]
  Object.assign(messages[1]!.info, {
    summary: true,
    error: { name: "MessageAbortedError", data: {} },
    time: { created: 1000, completed: 1500 }
  })
  return messages
}

describe("appendTail after a user message", () => {
  it("appends a synthetic user text message carrying the block", () => {
    const messages = endingWithUser()
    const last = messages[2]!
    appendTail(messages, block)
    expect(messages).toHaveLength(4)
    const added = messages[3] as Msg
    expect(added.info).toEqual({ ...last.info, id: syntheticId })
    expect(added.parts).toEqual([{
      id: `${syntheticId}-text`,
      sessionID: last.info.sessionID,
      messageID: syntheticId,
      type: "text",
      text: block,
      synthetic: true
    }])
  })
})

describe("appendTail after an assistant message", () => {
  it("appends a synthetic assistant message with one completed tool part carrying the block", () => {
    const messages = endingWithAssistant()
    appendTail(messages, block)
    expect(messages).toHaveLength(3)
    const added = messages[2] as Msg
    expect(added.info.role).toBe("assistant")
    expect(added.info.id).toBe(syntheticId)
    expect(added.parts).toHaveLength(1)
    const part = added.parts[0] as Record<string, any>
    expect(part).toMatchObject({ type: "tool", tool: syntheticTool, callID: `${syntheticId}-call`, messageID: syntheticId })
    expect(part.state).toEqual({
      status: "completed",
      input: {},
      output: block,
      title: "prunable tools",
      metadata: {},
      time: { start: 1000, end: 1000 }
    })
  })

  it("does not copy the previous message's error or summary flag", () => {
    const messages = endingWithAssistant()
    appendTail(messages, block)
    const info = (messages[2] as Msg).info
    expect(info).not.toHaveProperty("error")
    expect(info).not.toHaveProperty("summary")
    expect(info.time).toEqual({ created: 1000, completed: 1000 })
    expect(info.finish).toBe("tool-calls")
    expect(info.modelID).toBe("fake-model")
  })
})

describe("appendTail", () => {
  it("leaves exactly one synthetic message when applied twice", () => {
    for (const messages of [endingWithUser(), endingWithAssistant()]) {
      const length = messages.length
      appendTail(messages, "first")
      appendTail(messages, block)
      expect(messages).toHaveLength(length + 1)
      expect(messages.filter((message) => (message as Msg).info.id === syntheticId)).toHaveLength(1)
      expect(JSON.stringify(messages.at(-1))).toContain("3: read, src/a.ts")
      expect(JSON.stringify(messages)).not.toContain('"first"')
    }
  })

  it("produces the same bytes when applied again with the same text", () => {
    const once = endingWithAssistant()
    appendTail(once, block)
    const twice = fresh(once)
    appendTail(twice, block)
    expect(JSON.stringify(twice)).toBe(JSON.stringify(once))
  })

  it("leaves the original messages untouched", () => {
    for (const messages of [endingWithUser(), endingWithAssistant()]) {
      const before = fresh(messages)
      const originals = [...messages]
      appendTail(messages, block)
      expect(messages.slice(0, -1)).toEqual(before)
      messages.slice(0, -1).forEach((message, i) => expect(message).toBe(originals[i]))
    }
  })

  it("does nothing to an empty request", () => {
    const messages: Array<unknown> = []
    appendTail(messages, block)
    expect(messages).toEqual([])
  })

  it("does nothing after a message whose role it does not know", () => {
    const messages: Array<unknown> = [{ info: { id: "x", role: "system" }, parts: [{ type: "text", text: "hi" }] }]
    appendTail(messages, block)
    expect(messages).toHaveLength(1)
  })
})
