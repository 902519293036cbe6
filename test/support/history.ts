import type { Msg } from "../../src/host/schema.ts"
import { SessionId } from "../../src/host/sessionId.ts"

/**
 * Builds OpenCode-shaped histories (what `experimental.chat.messages.transform` receives) for tests. Every
 * builder returns plain JSON objects, like the fresh copy OpenCode passes on each request.
 */

export type { Msg }

export const sessionID = SessionId.make("ses_test0000000000000000001")

let counter = 0
const nextId = (prefix: string) => `${prefix}_${String(++counter).padStart(6, "0")}`

export const user = (text: string, options: { session?: string; id?: string } = {}): Msg => {
  const id = options.id ?? nextId("msg_u")
  const session = options.session ?? sessionID
  return {
    info: {
      id,
      sessionID: session,
      role: "user",
      time: { created: counter },
      agent: "build",
      model: { providerID: "fake", modelID: "fake-model" }
    },
    parts: [{ id: nextId("prt"), sessionID: session, messageID: id, type: "text", text }]
  }
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

/** One assistant message: a step-start (one turn), then the given tool calls and texts, then a step-finish. */
export const assistant = (
  items: ReadonlyArray<ReturnType<typeof tool> | ReturnType<typeof text> | ReturnType<typeof reasoning>>,
  options: { session?: string; summary?: boolean; id?: string } = {}
): Msg => {
  const id = options.id ?? nextId("msg_a")
  const session = options.session ?? sessionID
  const base = { sessionID: session, messageID: id }
  const parts: Array<Record<string, unknown>> = [{ id: nextId("prt"), ...base, type: "step-start" }]
  for (const item of items) {
    if (item.kind === "text") {
      parts.push({ id: nextId("prt"), ...base, type: "text", text: item.value })
      continue
    }
    if (item.kind === "reasoning") {
      parts.push({
        id: nextId("prt"),
        ...base,
        type: "reasoning",
        text: item.value,
        metadata: { anthropic: { signature: "sig" } },
        time: { start: 1, end: 2 }
      })
      continue
    }
    const spec = item.spec
    const status = spec.status ?? (spec.error === undefined ? "completed" : "error")
    const time = { start: 1, end: 2, ...(spec.compacted ? { compacted: 3 } : {}) }
    const state = status === "completed"
      ? { status, input: spec.input, output: spec.output ?? "", title: "", metadata: spec.metadata ?? {}, time }
      : status === "error"
      ? { status, input: spec.input, error: spec.error ?? "failed", time }
      : status === "running"
      ? { status, input: spec.input, time: { start: 1 } }
      : { status, input: spec.input, raw: "" }
    parts.push({
      id: nextId("prt"),
      ...base,
      type: "tool",
      callID: spec.callID ?? nextId("call"),
      tool: spec.tool,
      state
    })
  }
  parts.push({
    id: nextId("prt"),
    ...base,
    type: "step-finish",
    reason: "tool-calls",
    cost: 0,
    tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } }
  })
  return {
    info: {
      id,
      sessionID: session,
      role: "assistant",
      time: { created: counter },
      parentID: "msg_parent",
      modelID: "fake-model",
      providerID: "fake",
      mode: "build",
      path: { cwd: "/project", root: "/project" },
      cost: 0,
      tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } },
      ...(options.summary ? { summary: true, finish: "stop" } : {})
    },
    parts
  }
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
