/**
 * Stored messages and parts shaped as OpenCode 1.18.33 stores them (`UserMessage`, `AssistantMessage`, `TextPart`,
 * `ReasoningPart`, `ToolPart`, `StepStartPart`, `StepFinishPart` of `@opencode-ai/sdk`): one way to build each, for
 * the session generator and the tests' histories. Fields come in OpenCode's order; an optional field a caller leaves
 * out is absent, not undefined, so what is built serialises as OpenCode's would.
 */
import type { Msg } from "../host/schema.ts"

type Part = Msg["parts"][number]

/** What every part of a message carries besides its own ID. */
export interface PartOf {
  readonly sessionID: string
  readonly messageID: string
}

export interface Model {
  readonly providerID: string
  readonly modelID: string
}

/** Usage figures of a step; OpenCode's are zero when the provider reports none. */
export interface Tokens {
  readonly input: number
  readonly output: number
  readonly reasoning: number
  readonly cache: { readonly read: number; readonly write: number }
}

interface Span {
  readonly start: number
  readonly end: number
}

/** An ID that sorts by creation, as OpenCode's do: a prefix, a counter in 12 hex digits, then `tail`. */
export const ascendingId = (prefix: string, n: number, tail = ""): string =>
  `${prefix}_${n.toString(16).padStart(12, "0")}${tail}`

/** A user's prompt: one text part. */
export const userMessage = (options: {
  readonly id: string
  readonly sessionID: string
  readonly created: number
  readonly model: Model
  readonly partID: string
  readonly text: string
}): Msg => {
  const { id, sessionID } = options
  return {
    info: { id, sessionID, role: "user", time: { created: options.created }, agent: "build", model: options.model },
    parts: [{ id: options.partID, sessionID, messageID: id, type: "text", text: options.text }]
  }
}

export const assistantInfo = (options: {
  readonly id: string
  readonly sessionID: string
  readonly time: { readonly created: number; readonly completed?: number }
  readonly parentID: string
  readonly model: Model
  readonly agent?: string
  /** The directory the session ran in, its git root too. */
  readonly directory: string
  readonly tokens: Tokens
  /** A compaction's summary. */
  readonly summary?: boolean
  readonly finish?: string
}): Msg["info"] => ({
  id: options.id,
  sessionID: options.sessionID,
  role: "assistant",
  time: options.time,
  parentID: options.parentID,
  modelID: options.model.modelID,
  providerID: options.model.providerID,
  mode: "build",
  ...(options.agent === undefined ? {} : { agent: options.agent }),
  path: { cwd: options.directory, root: options.directory },
  cost: 0,
  tokens: options.tokens,
  ...(options.summary === true ? { summary: true } : {}),
  ...(options.finish === undefined ? {} : { finish: options.finish })
})

/** Where a step (one model request's answer) starts; `snapshot`: the git snapshot OpenCode took then. */
export const stepStart = (id: string, of: PartOf, snapshot?: string): Part => ({
  id,
  ...of,
  type: "step-start",
  ...(snapshot === undefined ? {} : { snapshot })
})

export const stepFinish = (id: string, of: PartOf, reason: string, tokens: Tokens, snapshot?: string): Part => ({
  id,
  ...of,
  type: "step-finish",
  reason,
  ...(snapshot === undefined ? {} : { snapshot }),
  cost: 0,
  tokens
})

export const textPart = (id: string, of: PartOf, text: string, time?: Span): Part => ({
  id,
  ...of,
  type: "text",
  text,
  ...(time === undefined ? {} : { time })
})

/** `metadata`: the provider's, such as the signature of Claude's thinking blocks (OpenCode sends only those). */
export const reasoningPart = (id: string, of: PartOf, text: string, time: Span, metadata?: object): Part => ({
  id,
  ...of,
  type: "reasoning",
  text,
  ...(metadata === undefined ? {} : { metadata }),
  time
})

export const toolPart = (id: string, of: PartOf, callID: string, tool: string, state: object): Part => ({
  id,
  ...of,
  type: "tool",
  callID,
  tool,
  state
})

/** The states of a tool call. */
export const toolState = {
  completed: (options: {
    readonly input: unknown
    readonly output: unknown
    readonly title: string
    readonly metadata: unknown
    readonly time: Span & { readonly compacted?: number }
    readonly attachments?: ReadonlyArray<unknown>
  }) => ({
    status: "completed",
    input: options.input,
    output: options.output,
    title: options.title,
    metadata: options.metadata,
    time: options.time,
    ...(options.attachments === undefined ? {} : { attachments: options.attachments })
  }),
  error: (options: {
    readonly input: unknown
    readonly error: string
    readonly metadata?: unknown
    readonly time: Span & { readonly compacted?: number }
  }) => ({
    status: "error",
    input: options.input,
    error: options.error,
    ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
    time: options.time
  }),
  running: (input: unknown, start: number) => ({ status: "running", input, time: { start } }),
  pending: (input: unknown) => ({ status: "pending", input, raw: "" })
}
