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

/**
 * The session a request belongs to: the newest user message's, else any message's. Read by hand, on every request:
 * the ID is all it takes of a message, and the caller decodes it (`decodeSessionId`).
 */
export const findSessionId = (messages: ReadonlyArray<unknown>): string | undefined => {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (roleOf(messages[i]) !== "user") continue
    const id = sessionIdOf(messages[i])
    if (id !== undefined) return id
  }
  for (const message of messages) {
    const id = sessionIdOf(message)
    if (id !== undefined) return id
  }
  return undefined
}

const sessionIdOf = (message: unknown): string | undefined =>
  Predicate.isObject(message) && Predicate.isObject(message.info) && typeof message.info.sessionID === "string"
    ? message.info.sessionID
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
    const created = Option.getOrUndefined(infoOf(message))?.time?.created
    if (created !== undefined && Number.isFinite(created)) times.push(created)
  }
  return times
}

/** The newest user message's info (whom the request goes to) and the newest assistant message's (who answered last). */
export interface LatestTurn {
  readonly asked: HostMessageInfo | undefined
  readonly answered: HostMessageInfo | undefined
}

export const latestTurn = (messages: ReadonlyArray<unknown>): LatestTurn => {
  let asked: HostMessageInfo | undefined
  let answered: HostMessageInfo | undefined
  let user = false
  let assistant = false
  for (let i = messages.length - 1; i >= 0 && !(user && assistant); i--) {
    const role = roleOf(messages[i])
    if (role === "user" && !user) {
      user = true
      asked = Option.getOrUndefined(infoOf(messages[i]))
    } else if (role === "assistant" && !assistant) {
      assistant = true
      answered = Option.getOrUndefined(infoOf(messages[i]))
    }
  }
  return { asked, answered }
}

/**
 * Whether the request goes to another model than the one that answered the previous request, or to the same one with
 * another variant. A provider keeps its prompt cache per model, and Anthropic's is also lost for the messages when
 * the thinking settings change (what a Claude model's variants set), so the messages are written again whatever the
 * plugin does.
 */
export const modelSwitched = ({ asked, answered }: LatestTurn): boolean => {
  const model = asked?.model
  if (model === undefined || answered?.providerID === undefined || answered.modelID === undefined) return false
  return model.providerID !== answered.providerID || model.modelID !== answered.modelID ||
    variantOf(model.variant) !== variantOf(answered.variant)
}

/**
 * The agents of the previous request and of this one, when they differ. Whether that changes the system prompt
 * depends on the agents (`agentPrompts`): OpenCode's build and plan share one prompt and one tool list.
 */
export const agentSwitch = (
  { asked, answered }: LatestTurn
): { readonly from: string; readonly to: string } | undefined => {
  const to = asked?.agent
  // OpenCode before 1.x named an assistant message's agent `mode` only.
  const from = answered?.agent ?? answered?.mode
  return from !== undefined && to !== undefined && from !== to ? { from, to } : undefined
}

/** OpenCode names the model's own settings "default", or leaves the variant out. */
const variantOf = (variant: unknown): string | undefined =>
  typeof variant === "string" && variant !== "default" ? variant : undefined
