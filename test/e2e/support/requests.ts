import type { RecordedRequest } from "./model-server.ts"

/** Reading what the model received: the recorded chat-completions request bodies. */

type Message = RecordedRequest["messages"][number]

interface ToolCallPart {
  readonly id: string
  readonly function: { readonly name: string; readonly arguments: string }
}

export const contentText = (content: unknown): string => {
  if (typeof content === "string") return content
  if (!Array.isArray(content)) return ""
  return content.map((part: { text?: unknown }) => (typeof part?.text === "string" ? part.text : "")).join("")
}

const callsOf = (message: Message): ReadonlyArray<ToolCallPart> =>
  Array.isArray(message.tool_calls) ? (message.tool_calls as ReadonlyArray<ToolCallPart>) : []

/** A message's text, tool-call arguments included. */
export const messageText = (message: Message): string =>
  [contentText(message.content), ...callsOf(message).map((call) => `${call.function.name} ${call.function.arguments}`)]
    .join("\n")

/** Everything the model reads in a request except the tool definitions. */
export const requestText = (request: RecordedRequest): string => request.messages.map(messageText).join("\n")

export const occurrences = (text: string, needle: string): number => text.split(needle).length - 1

export const toolNames = (request: RecordedRequest): ReadonlyArray<string> =>
  (request.tools ?? []).map((tool) => tool.function.name)

export const systemText = (request: RecordedRequest): string =>
  request.messages.filter((message) => message.role === "system").map(messageText).join("\n")

/** The tool result the model got for `callId`, or undefined when the request does not carry that call. */
export const resultOf = (request: RecordedRequest, callId: string): string | undefined => {
  const message = request.messages.find((entry) => entry.role === "tool" && entry.tool_call_id === callId)
  return message === undefined ? undefined : contentText(message.content)
}

/** The arguments the model sees for its own call `callId`. */
export const argumentsOf = (request: RecordedRequest, callId: string): Record<string, unknown> | undefined => {
  for (const message of request.messages) {
    const call = callsOf(message).find((entry) => entry.id === callId)
    if (call !== undefined) return JSON.parse(call.function.arguments) as Record<string, unknown>
  }
  return undefined
}

export const lastMessageText = (request: RecordedRequest): string => messageText(request.messages.at(-1)!)

/** The first request that carries the result of `callId`, i.e. the one sent right after that call ran. */
export const requestAfter = (requests: ReadonlyArray<RecordedRequest>, callId: string): RecordedRequest => {
  const found = requests.find((request) => resultOf(request, callId) !== undefined)
  if (found === undefined) throw new Error(`no request carries the result of ${callId}`)
  return found
}

const clip = (text: string, max: number) =>
  (text.length <= max ? text : `${text.slice(0, max)}… (${text.length} chars)`).replaceAll("\n", "\\n")

/** A compact rendering of requests for failure reports: one line per message. */
export const describeRequests = (requests: ReadonlyArray<RecordedRequest>, firstIndex = 0): string =>
  requests.map((request, i) => {
    const head = `request #${firstIndex + i} (${request.model}, ${request.messages.length} messages, tools: ${
      toolNames(request).join(",")
    })`
    const lines = request.messages.map((message) => {
      const callId = message.tool_call_id === undefined ? "" : `[${message.tool_call_id}]`
      return `  ${message.role}${callId}: ${clip(messageText(message), 400)}`
    })
    return [head, ...lines].join("\n")
  }).join("\n")
