import { Predicate, Result, Schema, SchemaIssue } from "effect"
import { shortJson } from "../data/boundedJson.ts"
import { SessionId } from "../host/sessionId.ts"

/**
 * What each hook reads of what OpenCode hands it, as Schemas: decoded first thing, inside the hook's runner, so that
 * no input (null, a number where an ID goes, a list where an object goes) can throw out of a hook. Whatever the plugin
 * changes in place (the messages, the system texts, the config) is checked, not copied: a `declare`d value decodes to
 * itself.
 */

const isList = (value: unknown): value is Array<unknown> => Array.isArray(value)
const isTextList = (value: unknown): value is Array<string> =>
  Array.isArray(value) && value.every((item) => typeof item === "string")
const isRecord = (value: unknown): value is Record<string, unknown> =>
  Predicate.isObject(value) && !Array.isArray(value)

const List = Schema.declare(isList, { expected: "a list" })
const TextList = Schema.declare(isTextList, { expected: "a list of texts" })
export const InPlaceObject = Schema.declare(isRecord, { expected: "an object" })

export const MessagesOutput = Schema.Struct({ messages: List })

export const SystemInput = Schema.Struct({
  sessionID: Schema.optional(SessionId),
  model: Schema.optional(Schema.Unknown)
})
export const SystemOutput = Schema.Struct({ system: TextList })

export const ChatMessageInput = Schema.Struct({
  sessionID: SessionId,
  agent: Schema.optional(Schema.String),
  model: Schema.optional(Schema.Struct({ providerID: Schema.String, modelID: Schema.String })),
  variant: Schema.optional(Schema.String)
})

export const CompactingInput = Schema.Struct({ sessionID: SessionId })
export const CompactingOutput = Schema.Struct({ context: TextList })

export const CommandInput = Schema.Struct({
  command: Schema.Literal("dcp"),
  sessionID: SessionId,
  arguments: Schema.optional(Schema.String)
})

export const ToolDefinitionInput = Schema.Struct({ toolID: Schema.String })

export const EventInput = Schema.Struct({ event: Schema.Unknown })

/** The `config` hook's `experimental` section, where the plugin adds its tools to `primary_tools`. */
export const Experimental = Schema.Struct({ primary_tools: Schema.optional(Schema.Array(Schema.String)) })

/** A tool's arguments: lists of anything, each entry checked (and named as written) by the tool's validation. */
export const IdsArguments = Schema.Struct({ ids: Schema.Array(Schema.Unknown) })
/**
 * `recall`'s arguments: a list of IDs or a query, each optional (null counts as not given); the query's type and which
 * of the two was given are checked by the tool's validation, which names what was wrong.
 */
export const RecallArguments = Schema.Struct({
  ids: Schema.optional(Schema.NullOr(Schema.Array(Schema.Unknown))),
  query: Schema.optional(Schema.Unknown)
})
export const ExtractArguments = Schema.Struct({
  ids: Schema.Array(Schema.Unknown),
  distillation: Schema.Array(Schema.Unknown)
})
/** What the plugin reads of OpenCode's context for a tool call; the session ID is decoded on its own, to say why. */
export const ToolContext = Schema.Struct({ sessionID: Schema.Unknown, messageID: Schema.optional(Schema.String) })

/**
 * Decodes `value`; a failure is one line that names where, what was expected and what was found, e.g.
 * `ids: expected a list, found null`.
 */
export const decodeOr = <S extends Schema.Codec<unknown, unknown>>(schema: S) => {
  const decode = Schema.decodeUnknownResult(schema)
  return (value: unknown, what = "the input"): Result.Result<S["Type"], string> =>
    Result.mapError(
      decode(value),
      (error) =>
        SchemaIssue.makeFormatterStandardSchemaV1()(error.issue).issues.map((issue) => {
          const path = (issue.path ?? []).map((segment) => typeof segment === "object" ? segment.key : segment)
          const where = path.length === 0 ? what : path.map(String).join(".")
          const expected = issue.message.replace(/^Expected /, "").replace(/^Missing key$/, "a value")
          return `${where}: expected ${expected}, found ${shownValue(valueAt(value, path))}`
        }).join("; ")
    )
}

const valueAt = (value: unknown, path: ReadonlyArray<PropertyKey>): unknown =>
  path.reduce<unknown>(
    (inner, key) => Predicate.isObject(inner) ? (inner as Record<PropertyKey, unknown>)[key] : undefined,
    value
  )

const shownValue = (value: unknown): string => value === undefined ? "nothing" : shortJson(value)
