import { Effect, Option, Predicate, Schema, SchemaIssue } from "effect"
import { CompactionPart, MessageInfo, type Msg, PartHead, TextPart, ToolPart } from "../host/schema.ts"

/**
 * An `opencode export <sessionID>` file: `{ info, messages }`, each message `{ info, parts }`. Only the fields the
 * analyser and the plugin depend on are decoded; everything else in the file is kept as it came, because the
 * replay hands the messages to the plugin exactly as OpenCode would.
 */

const ExportFile = Schema.Struct({
  info: Schema.Struct({
    id: Schema.String,
    title: Schema.optional(Schema.String),
    directory: Schema.optional(Schema.String),
    parentID: Schema.optional(Schema.NullOr(Schema.String)),
    version: Schema.optional(Schema.String)
  }),
  messages: Schema.Array(Schema.Struct({ info: MessageInfo, parts: Schema.Array(PartHead) }))
})

/** The part types of OpenCode 1.18 (`Part` in `@opencode-ai/sdk`), with the fields the replay reads. */
const knownParts: Readonly<Record<string, Schema.Decoder<unknown>>> = {
  text: TextPart,
  reasoning: TextPart,
  tool: ToolPart,
  compaction: CompactionPart,
  "step-start": PartHead,
  "step-finish": PartHead,
  file: PartHead,
  subtask: PartHead,
  snapshot: PartHead,
  patch: PartHead,
  agent: PartHead,
  retry: PartHead
}

type ExportInfo = typeof ExportFile.Type["info"]

/** A decoded export, ready to replay. */
export interface Session {
  readonly info: ExportInfo
  /** Oldest first, as OpenCode stores them; parts of unknown types removed. */
  readonly messages: ReadonlyArray<Msg>
  /** The decoded `info` of each message, in the same order. */
  readonly infos: ReadonlyArray<MessageInfo>
  /** Parts of types this version does not know, by type: skipped, not sent to the plugin. */
  readonly skipped: Readonly<Record<string, number>>
}

/** Input the analyser cannot use, with the one line that says why. */
class BadExport extends Schema.TaggedError<BadExport>()("BadExport", {
  message: Schema.String
}) {}

const formatIssue = SchemaIssue.makeFormatterStandardSchemaV1()

const pathText = (path: ReadonlyArray<PropertyKey>): string =>
  path.map((key, i) => (typeof key === "number" ? `[${key}]` : `${i === 0 ? "" : "."}${String(key)}`)).join("")

const valueAt = (input: unknown, path: ReadonlyArray<PropertyKey>): Option.Option<unknown> => {
  let value = input
  for (const key of path) {
    if (!Predicate.isObject(value) && !Array.isArray(value)) return Option.none()
    if (!(key in (value as object))) return Option.none()
    value = (value as Record<PropertyKey, unknown>)[key]
  }
  return Option.some(value)
}

const shortJson = (value: unknown): string => {
  const text = Array.isArray(value)
    ? "an array"
    : Predicate.isObject(value)
    ? "an object"
    : JSON.stringify(value) ?? String(value)
  return text.length > 40 ? `${text.slice(0, 37)}...` : text
}

/** One line: where in the file, what was expected, what is there. */
const describeIssue = (input: unknown, issue: SchemaIssue.Issue, prefix: ReadonlyArray<PropertyKey> = []): string => {
  const first = formatIssue(issue).issues[0]
  if (first === undefined) return "it does not have the expected shape"
  const path = [...prefix, ...(first.path ?? []).map((key) => (typeof key === "object" ? key.key : key))]
  const where = path.length === 0 ? "the top level" : pathText(path)
  const found = valueAt(input, path)
  const expected = first.message.replace(/^Expected /, "expected ")
  if (Option.isNone(found)) return `${where} is missing`
  return `${where}: ${expected}, found ${shortJson(found.value)}`
}

/**
 * Why the text does not parse. A text that stops in the middle is most likely an export piped straight from
 * `opencode export`: OpenCode 1.18 exits before a large export has drained through a pipe (it stops at a multiple of
 * 64 KiB), so the way out is a file.
 */
const notJson = (text: string, name: string, error: unknown): string => {
  if (text.trim() === "") return `${name} is empty: expected the JSON that \`opencode export <sessionID>\` prints`
  const reason = (error instanceof Error ? error.message : String(error)).replace(/\s+/g, " ")
  const position = /at position (\d+)/.exec(reason)
  const truncated = /Unexpected end of JSON input|Unterminated string/.test(reason) ||
    (position !== null && Number(position[1]) >= text.trimEnd().length)
  if (!truncated) return `${name} is not JSON (${reason})`
  return `${name} is not complete JSON: it stops after ${Buffer.byteLength(text).toLocaleString("en-US")} bytes. ` +
    "OpenCode 1.18 can exit before a large export has gone through a pipe; write it to a file " +
    "(opencode export <sessionID> > session.json) and pass the file"
}

/**
 * Decodes an export from its text. Fails with a `BadExport` whose message is one line: not JSON, not an export
 * (naming the first field that is wrong), or an export with no messages. Parts of unknown types are skipped and
 * counted, never fatal.
 */
export const decodeExport = Effect.fn("analysis.decodeExport")(function*(text: string, name: string) {
  const json = yield* Effect.try({
    try: () => JSON.parse(text) as unknown,
    catch: (error) => new BadExport({ message: notJson(text, name, error) })
  })
  const decoded = yield* Schema.decodeUnknownEffect(ExportFile)(json).pipe(
    Effect.mapError((error) =>
      new BadExport({ message: `${name} is not an OpenCode export: ${describeIssue(json, error.issue)}` })
    )
  )
  if (decoded.messages.length === 0) {
    return yield* new BadExport({
      message: `${name} is an export of session ${decoded.info.id} with no messages: nothing to analyse`
    })
  }
  const raw =
    (json as { messages: ReadonlyArray<{ info: Record<string, any>; parts: ReadonlyArray<Record<string, any>> }> })
      .messages
  const skipped: Record<string, number> = {}
  const messages: Array<Msg> = []
  for (const [m, message] of raw.entries()) {
    const parts: Array<Record<string, any>> = []
    for (const [p, part] of message.parts.entries()) {
      const schema = knownParts[String(part.type)]
      if (schema === undefined) {
        skipped[String(part.type)] = (skipped[String(part.type)] ?? 0) + 1
        continue
      }
      yield* Schema.decodeUnknownEffect(schema)(part).pipe(
        Effect.mapError((error) =>
          new BadExport({
            message: `${name} is not an OpenCode export: ${
              describeIssue(json, error.issue, ["messages", m, "parts", p])
            }`
          })
        )
      )
      parts.push(part)
    }
    messages.push({ info: message.info, parts })
  }
  if (!decoded.messages.some((message) => message.info.role === "assistant")) {
    return yield* new BadExport({
      message: `${name} has no assistant messages: the session never reached the model, so there is nothing to replay`
    })
  }
  return {
    info: decoded.info,
    messages,
    infos: decoded.messages.map((message) => message.info),
    skipped
  } satisfies Session
})
