import { Schema } from "effect"
import { SessionId } from "./sessionId.ts"

/**
 * The shapes of what OpenCode 1.18 hands the plugin (and writes to an `opencode export` file), as far as the plugin
 * and the offline analyser read them: one declaration each, shared by both. Fields not named here pass through as
 * they came; what the SDK types promise is not trusted at run time (older or newer hosts, other plugins mutating
 * first), so a value is decoded before it is read.
 */

// biome-ignore lint/suspicious/noExplicitAny: stored messages as loose records, for the analyser, the benchmark and the tests; the plugin itself takes messages as `unknown` and decodes what it reads
type Fields = Record<string, any>

/** A stored message as OpenCode hands it to plugins: `info` and `parts`, everything else left as it came. */
export interface Msg {
  info: Fields
  parts: Array<Fields>
}

const Tokens = Schema.Struct({
  input: Schema.optional(Schema.Number),
  output: Schema.optional(Schema.Number),
  cache: Schema.optional(Schema.Struct({ read: Schema.optional(Schema.Number), write: Schema.optional(Schema.Number) }))
})

/** A message's `info` (`UserMessage` / `AssistantMessage` in `@opencode-ai/sdk`) as it is stored. */
export const MessageInfo = Schema.Struct({
  id: Schema.String,
  sessionID: Schema.String,
  role: Schema.Literals(["user", "assistant"]),
  time: Schema.Struct({ created: Schema.Number }),
  agent: Schema.optional(Schema.String),
  /** User messages: the model the turn was sent to, and its variant (thinking settings) if the user picked one. */
  model: Schema.optional(
    Schema.Struct({ providerID: Schema.String, modelID: Schema.String, variant: Schema.optional(Schema.Unknown) })
  ),
  /** Assistant messages. */
  providerID: Schema.optional(Schema.String),
  modelID: Schema.optional(Schema.String),
  // Read as whatever it is, so that an odd variant never costs the rest of the info its decoding.
  variant: Schema.optional(Schema.Unknown),
  mode: Schema.optional(Schema.String),
  summary: Schema.optional(Schema.Unknown),
  finish: Schema.optional(Schema.String),
  tokens: Schema.optional(Tokens)
})
export type MessageInfo = typeof MessageInfo.Type

/**
 * A message's `info` as the transform and the commands read it: a message that does not say its ID, session or
 * time is still read for what it has (its role, its token counts).
 */
export const HostMessageInfo = MessageInfo.mapFields(({ id, sessionID, time, ...fields }) => ({
  ...fields,
  id: Schema.optional(id),
  sessionID: Schema.optional(sessionID),
  time: Schema.optional(time)
}))
export type HostMessageInfo = typeof HostMessageInfo.Type

/** Every part has a type; what else is read depends on it. */
export const PartHead = Schema.Struct({ type: Schema.String })

export const TextPart = Schema.Struct({
  type: Schema.Literals(["text", "reasoning"]),
  text: Schema.String,
  synthetic: Schema.optional(Schema.Boolean),
  ignored: Schema.optional(Schema.Boolean)
})

export const CompactionPart = Schema.Struct({
  type: Schema.Literal("compaction"),
  tail_start_id: Schema.optional(Schema.String)
})

const ToolState = Schema.Struct({
  status: Schema.Literals(["pending", "running", "completed", "error"]),
  input: Schema.optional(Schema.Record(Schema.String, Schema.Unknown)),
  output: Schema.optional(Schema.Unknown),
  error: Schema.optional(Schema.Unknown),
  time: Schema.optional(Schema.Struct({ compacted: Schema.optional(Schema.Unknown) })),
  /** The tool's own details; OpenCode's `bash` puts the command's exit code in `exit`. Read as whatever it is. */
  metadata: Schema.optional(Schema.Unknown)
})

export const ToolPart = Schema.Struct({
  type: Schema.Literal("tool"),
  callID: Schema.String.check(Schema.isNonEmpty()),
  tool: Schema.String,
  state: ToolState
})
export type ToolPart = typeof ToolPart.Type
export type ToolStatus = ToolPart["state"]["status"]

const sessionEvent = <const Type extends string>(type: Type) =>
  Schema.Struct({ type: Schema.Literal(type), properties: Schema.Struct({ sessionID: SessionId }) })

/**
 * The `event` hook's events the plugin acts on (`Event` in `@opencode-ai/sdk`, with the fields read here). Every
 * other event type is none of the plugin's business.
 */
export const HostEvent = Schema.Union([
  Schema.Struct({
    type: Schema.Literal("session.deleted"),
    properties: Schema.Struct({ info: Schema.Struct({ id: SessionId }) })
  }),
  sessionEvent("session.compacted"),
  sessionEvent("session.idle"),
  Schema.Struct({
    type: Schema.Literal("session.status"),
    properties: Schema.Struct({ sessionID: SessionId, status: Schema.Struct({ type: Schema.String }) })
  }),
  // Published by OpenCode 1.18.33 when a connected MCP server says its tool list changed (after OpenCode has fetched
  // the new one) and when a server's connection closes (its tools are gone); not when a server connects.
  Schema.Struct({ type: Schema.Literal("mcp.tools.changed"), properties: Schema.Struct({ server: Schema.String }) })
]).pipe(Schema.toTaggedUnion("type"))
export type HostEvent = typeof HostEvent.Type

/** Whom a note the plugin posts speaks for: the agent and model of the user's newest turn, so it switches neither. */
export interface NoteOrigin {
  readonly agent?: string | undefined
  readonly model?: { readonly providerID: string; readonly modelID: string } | undefined
  readonly variant?: string | undefined
}
