import { Option, Predicate } from "effect"
import { infoOf } from "../host/messages.ts"

/** Stable identity of what we append, so a request transformed twice still ends with exactly one such message. */
const syntheticId = "dcp-note"

/**
 * Appends `text` as one synthetic user message after the last message: the only place per-request text goes. The
 * next request is built afresh by OpenCode and does not carry it, so everything the previous request sent before it
 * stays byte-identical, and the provider's cache entry at the previous last message still serves (OpenCode marks the
 * last two messages of each request; this message takes one of the marks only on the request it is sent with).
 * After tool results a user text is valid for every provider: Anthropic puts it in the same turn as the results.
 */
export const appendTail = (messages: Array<unknown>, text: string): void => {
  const lastIndex = messages.length - 1
  if (lastIndex >= 0 && isSynthetic(messages[lastIndex])) messages.pop()
  const last = messages[messages.length - 1]
  const decoded = infoOf(last)
  if (Option.isNone(decoded)) return
  const info = decoded.value
  const sessionID = info.sessionID
  const created = info.time?.created ?? 0
  // A user message's info is copied whole, with the fields not decoded here (the turn's variant, system, tools).
  const user = info.role === "user"
    ? (last as { readonly info: object }).info
    : { sessionID, agent: info.agent ?? info.mode, model: { providerID: info.providerID, modelID: info.modelID } }
  messages.push({
    info: { ...user, id: syntheticId, role: "user", time: { created } },
    parts: [{ id: `${syntheticId}-text`, sessionID, messageID: syntheticId, type: "text", text, synthetic: true }]
  })
}

const isSynthetic = (message: unknown): boolean =>
  Predicate.isObject(message) && Predicate.isObject(message.info) && message.info.id === syntheticId
