import { Predicate } from "effect"
import { roleOf } from "../host/messages.ts"

/** Stable identity of what we append, so a request transformed twice still ends with exactly one such message. */
export const syntheticId = "dcp-prunable-tools"
export const syntheticTool = "context_pruning"

/**
 * Appends `text` as the last message. After a user message it is a synthetic user text; after an assistant
 * message (the agent loop, right after tool results) it is an assistant message with one completed tool part,
 * so the request still ends the way providers require. Nothing here changes from one request to the next unless
 * `text` does, which keeps the prompt cache matching up to the tail.
 */
export const appendTail = (messages: Array<unknown>, text: string): void => {
  const lastIndex = messages.length - 1
  if (lastIndex >= 0 && isSynthetic(messages[lastIndex])) messages.pop()
  const last = messages[messages.length - 1]
  const role = roleOf(last)
  if (role === undefined || !Predicate.isObject(last)) return
  const info = last.info as Record<string, unknown>
  const sessionID = info.sessionID
  const created = Predicate.isObject(info.time) ? info.time.created : 0
  if (role === "user") {
    messages.push({
      info: { ...info, id: syntheticId },
      parts: [{ id: `${syntheticId}-text`, sessionID, messageID: syntheticId, type: "text", text, synthetic: true }]
    })
    return
  }
  const { error: _error, summary: _summary, ...assistant } = info
  messages.push({
    info: { ...assistant, id: syntheticId, time: { created, completed: created }, finish: "tool-calls" },
    parts: [{
      id: `${syntheticId}-tool`,
      sessionID,
      messageID: syntheticId,
      type: "tool",
      callID: `${syntheticId}-call`,
      tool: syntheticTool,
      state: {
        status: "completed",
        input: {},
        output: text,
        title: "prunable tools",
        metadata: {},
        time: { start: created, end: created }
      }
    }]
  })
}

const isSynthetic = (message: unknown): boolean =>
  Predicate.isObject(message) && Predicate.isObject(message.info) && message.info.id === syntheticId
