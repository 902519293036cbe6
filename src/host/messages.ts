import { Option, Predicate, Schema } from "effect"
import { HostMessageInfo, ToolPart } from "./schema.ts"

// What `experimental.chat.messages.transform` hands us is typed by the SDK, but at run time anything can arrive
// (older or newer hosts, other plugins mutating first), so every field we depend on is decoded before use and
// anything that does not decode is left exactly as it came.
//
// A Schema decode of a message's info costs about 4 µs: fine for the few messages a request or a command looks at,
// too much for the walks over the whole history on every request (the tool index, the visible history the
// analyser computes per request). Those read the few fields they need through `roleOf`, `messageIdOf` and
// `partsOf`, which check each field by hand.

export const decodeToolPart = Schema.decodeUnknownOption(ToolPart)

const decodeInfo = Schema.decodeUnknownOption(HostMessageInfo)

/** A message's decoded `info`; none for anything that is not a message with an info of the expected shape. */
export const infoOf = (message: unknown): Option.Option<HostMessageInfo> =>
  Predicate.isObject(message) ? decodeInfo(message.info) : Option.none()

export const roleOf = (message: unknown): "user" | "assistant" | undefined => {
  if (!Predicate.isObject(message) || !Predicate.isObject(message.info)) return undefined
  const role = message.info.role
  return role === "user" || role === "assistant" ? role : undefined
}

export const partsOf = (message: unknown): ReadonlyArray<unknown> =>
  Predicate.isObject(message) && Array.isArray(message.parts) ? message.parts : []

export const messageIdOf = (message: unknown): string | undefined =>
  Predicate.isObject(message) && Predicate.isObject(message.info) && typeof message.info.id === "string"
    ? message.info.id
    : undefined

/** The session a request belongs to: the newest user message's, else any message's. */
export const findSessionId = (messages: ReadonlyArray<unknown>): string | undefined => {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (roleOf(messages[i]) !== "user") continue
    const id = Option.getOrUndefined(infoOf(messages[i]))?.sessionID
    if (id !== undefined) return id
  }
  for (const message of messages) {
    const id = Option.getOrUndefined(infoOf(message))?.sessionID
    if (id !== undefined) return id
  }
  return undefined
}

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
    const created = Option.getOrUndefined(infoOf(message))?.time?.created
    if (created !== undefined && Number.isFinite(created)) times.push(created)
  }
  return times
}

/**
 * Whether the request goes to another model than the one that answered the previous request, or to the same one with
 * another variant: the newest user message's model against the newest assistant message's. A provider keeps its
 * prompt cache per model, and Anthropic's is also lost for the messages when the thinking settings change (what a
 * Claude model's variants set), so the messages are written again whatever the plugin does. OpenCode's agents,
 * build and plan, share one prompt and one tool list: switching between them changes neither.
 */
export const modelSwitched = (messages: ReadonlyArray<unknown>): boolean => {
  let asked: ModelKey | undefined
  let answered: ModelKey | undefined
  let user = -1
  let assistant = -1
  for (let i = messages.length - 1; i >= 0 && (user < 0 || assistant < 0); i--) {
    const role = roleOf(messages[i])
    if (role === "user" && user < 0) {
      user = i
      asked = Option.getOrUndefined(infoOf(messages[i]))?.model
    } else if (role === "assistant" && assistant < 0) {
      assistant = i
      const info = Option.getOrUndefined(infoOf(messages[i]))
      if (info?.providerID !== undefined && info.modelID !== undefined) {
        answered = { providerID: info.providerID, modelID: info.modelID, variant: info.variant }
      }
    }
  }
  return asked !== undefined && answered !== undefined &&
    (asked.providerID !== answered.providerID || asked.modelID !== answered.modelID ||
      variantOf(asked) !== variantOf(answered))
}

/**
 * The agents of the previous request and of this one, when they differ: the newest assistant message's agent against
 * the newest user message's. Whether that changes the system prompt depends on the agents (`agentPrompts`).
 */
export const agentSwitch = (
  messages: ReadonlyArray<unknown>
): { readonly from: string; readonly to: string } | undefined => {
  let to: string | undefined
  let from: string | undefined
  let user = false
  let assistant = false
  for (let i = messages.length - 1; i >= 0 && !(user && assistant); i--) {
    const role = roleOf(messages[i])
    if (role === "user" && !user) {
      user = true
      to = Option.getOrUndefined(infoOf(messages[i]))?.agent
    } else if (role === "assistant" && !assistant) {
      assistant = true
      // OpenCode before 1.x named an assistant message's agent `mode` only.
      const info = Option.getOrUndefined(infoOf(messages[i]))
      from = info?.agent ?? info?.mode
    }
  }
  return from !== undefined && to !== undefined && from !== to ? { from, to } : undefined
}

interface ModelKey {
  readonly providerID: string
  readonly modelID: string
  readonly variant?: unknown
}

/** OpenCode names the model's own settings "default", or leaves the variant out. */
const variantOf = (key: ModelKey): string | undefined =>
  typeof key.variant === "string" && key.variant !== "default" ? key.variant : undefined
