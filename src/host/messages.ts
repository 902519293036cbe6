import { Predicate, Schema } from "effect"

// What `experimental.chat.messages.transform` hands us is typed by the SDK, but at run time anything can arrive
// (older or newer hosts, other plugins mutating first), so every field we depend on is decoded before use and
// anything that does not decode is left exactly as it came.

const ToolState = Schema.Struct({
  status: Schema.Literals(["pending", "running", "completed", "error"]),
  input: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)),
  output: Schema.optional(Schema.Unknown),
  error: Schema.optional(Schema.Unknown),
  time: Schema.optional(Schema.Struct({ compacted: Schema.optional(Schema.Unknown) }))
})

export const ToolPartFields = Schema.Struct({
  type: Schema.Literal("tool"),
  callID: Schema.String.check(Schema.isNonEmpty()),
  tool: Schema.String,
  state: ToolState
})
export type ToolPartFields = typeof ToolPartFields.Type
export type ToolStatus = ToolPartFields["state"]["status"]

export const decodeToolPart = Schema.decodeUnknownOption(ToolPartFields)

export const roleOf = (message: unknown): "user" | "assistant" | undefined => {
  if (!Predicate.isObject(message) || !Predicate.isObject(message.info)) return undefined
  const role = message.info.role
  return role === "user" || role === "assistant" ? role : undefined
}

const sessionIdOf = (message: unknown): string | undefined =>
  Predicate.isObject(message) && Predicate.isObject(message.info) && typeof message.info.sessionID === "string"
    ? message.info.sessionID
    : undefined

/** The session a request belongs to: the newest user message's, else any message's. */
export const findSessionId = (messages: ReadonlyArray<unknown>): string | undefined => {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (roleOf(messages[i]) === "user") {
      const id = sessionIdOf(messages[i])
      if (id !== undefined) return id
    }
  }
  for (const message of messages) {
    const id = sessionIdOf(message)
    if (id !== undefined) return id
  }
  return undefined
}

export const partsOf = (message: unknown): ReadonlyArray<unknown> =>
  Predicate.isObject(message) && Array.isArray(message.parts) ? message.parts : []

export const messageIdOf = (message: unknown): string | undefined =>
  Predicate.isObject(message) && Predicate.isObject(message.info) && typeof message.info.id === "string"
    ? message.info.id
    : undefined

/** A user message with text the user typed (not only synthetic or ignored parts, not a compaction request). */
export const isTypedByUser = (message: unknown): boolean =>
  roleOf(message) === "user" &&
  partsOf(message).some((part) =>
    Predicate.isObject(part) && part.type === "text" && part.synthetic !== true && part.ignored !== true
  )

/**
 * When the history's model requests were sent, oldest first: their assistant messages' creation times. For a session
 * this process has not sent a request of yet (after OpenCode restarts), the provider's cache is as warm as the latest
 * left it, and the session's pace so far is in their spacing.
 */
export const requestTimes = (messages: ReadonlyArray<unknown>): Array<number> => {
  const times: Array<number> = []
  for (const message of messages) {
    if (roleOf(message) !== "assistant") continue
    const time = (message as { info: { time?: unknown } }).info.time
    const created = Predicate.isObject(time) ? time.created : undefined
    if (typeof created === "number" && Number.isFinite(created)) times.push(created)
  }
  return times
}
