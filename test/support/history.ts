import type { Msg } from "../../src/host/schema.ts"
import { SessionId } from "../../src/host/sessionId.ts"
import {
  assistantInfo,
  reasoningPart,
  stepFinish,
  stepStart,
  textPart,
  toolPart as callPart,
  type Tokens,
  toolState,
  userMessage
} from "../../src/simulator/messages.ts"

/**
 * Builds OpenCode-shaped histories (what `experimental.chat.messages.transform` receives) for tests, by hand: one
 * message a call, with the shapes of src/simulator/messages.ts and IDs from one counter (`msg_u_000001`). Every
 * builder returns plain JSON objects, like the fresh copy OpenCode passes on each request.
 */

export type { Msg }

export const sessionID = SessionId.make("ses_test0000000000000000001")

/** The ID of the one message the plugin appends to a request (src/engine/inject.ts): a request sent twice has one. */
export const syntheticId = "dcp-note"

let counter = 0
const nextId = (prefix: string) => `${prefix}_${String(++counter).padStart(6, "0")}`

const model = { providerID: "fake", modelID: "fake-model" }

/** A step's usage when the provider reports none. */
export const noTokens = (): Tokens => ({ input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } })

export const user = (text: string, options: { session?: string; id?: string } = {}): Msg => {
  const id = options.id ?? nextId("msg_u")
  const session = options.session ?? sessionID
  return userMessage({ id, sessionID: session, created: counter, model, partID: nextId("prt"), text })
}

export interface ToolSpec {
  readonly tool: string
  readonly input: Record<string, unknown>
  readonly output?: unknown
  readonly error?: string
  readonly status?: "pending" | "running" | "completed" | "error"
  readonly callID?: string
  readonly compacted?: boolean
  /** The tool's own details (OpenCode's `bash` puts the command's exit code in `exit`). */
  readonly metadata?: Record<string, unknown>
}

export const tool = (spec: ToolSpec) => ({ kind: "tool" as const, spec })
export const text = (value: string) => ({ kind: "text" as const, value })
/** The model's reasoning, signed as Claude's thinking blocks are (OpenCode sends only those). */
export const reasoning = (value: string) => ({ kind: "reasoning" as const, value })

const stateOf = (spec: ToolSpec) => {
  const status = spec.status ?? (spec.error === undefined ? "completed" : "error")
  const time = { start: 1, end: 2, ...(spec.compacted ? { compacted: 3 } : {}) }
  return status === "completed"
    ? toolState.completed({
      input: spec.input,
      output: spec.output ?? "",
      title: "",
      metadata: spec.metadata ?? {},
      time
    })
    : status === "error"
    ? toolState.error({ input: spec.input, error: spec.error ?? "failed", time })
    : status === "running"
    ? toolState.running(spec.input, 1)
    : toolState.pending(spec.input)
}

/** One assistant message: a step-start (one turn), then the given tool calls and texts, then a step-finish. */
export const assistant = (
  items: ReadonlyArray<ReturnType<typeof tool> | ReturnType<typeof text> | ReturnType<typeof reasoning>>,
  options: { session?: string; summary?: boolean; id?: string } = {}
): Msg => {
  const id = options.id ?? nextId("msg_a")
  const session = options.session ?? sessionID
  const of = { sessionID: session, messageID: id }
  const parts = [stepStart(nextId("prt"), of)]
  for (const item of items) {
    if (item.kind === "text") parts.push(textPart(nextId("prt"), of, item.value))
    else if (item.kind === "reasoning") {
      parts.push(
        reasoningPart(nextId("prt"), of, item.value, { start: 1, end: 2 }, { anthropic: { signature: "sig" } })
      )
    } else parts.push(
        callPart(nextId("prt"), of, item.spec.callID ?? nextId("call"), item.spec.tool, stateOf(item.spec))
      )
  }
  parts.push(stepFinish(nextId("prt"), of, "tool-calls", noTokens()))
  const info = assistantInfo({
    id,
    sessionID: session,
    time: { created: counter },
    parentID: "msg_parent",
    model,
    directory: "/project",
    tokens: noTokens(),
    ...(options.summary ? { summary: true, finish: "stop" } : {})
  })
  return { info, parts }
}

/** A deep copy, as OpenCode hands a fresh copy of the history to every request. */
export const fresh = <T>(messages: T): T => structuredClone(messages)

/** The tool part for `callID` in `messages`. */
export const toolPart = (messages: ReadonlyArray<Msg>, callID: string): Record<string, any> => {
  for (const message of messages) {
    for (const part of message.parts) if (part.callID === callID) return part as Record<string, any>
  }
  throw new Error(`no tool part ${callID}`)
}

export const lines = (n: number, prefix = "line") =>
  Array.from({ length: n }, (_, i) => `${prefix} ${i + 1}: some content for the file`).join("\n")
