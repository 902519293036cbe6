import { Predicate, Result, Schema } from "effect"
import { boundedJson } from "../data/boundedJson.ts"

/**
 * A session's ID as OpenCode gives it (`ses_4f1c2b3a9ffeXYZabc123`), checked. The plugin names files and directories
 * after it (state, status, debug snapshots), so this is the one gate between a string from the host and the file
 * system: a value from outside is decoded once, where it comes in (the hooks, a state file), and everything past that
 * point takes a `SessionId`.
 */
export const SessionId = Schema.String.check(
  Schema.makeFilter((id: string) => stringProblem(id) ?? true, { expected: "a session ID" })
).pipe(Schema.brand("SessionId"))
export type SessionId = typeof SessionId.Type

/** What a valid session ID is, in words: shown to whoever passed an invalid one. */
const sessionIdRule = `1 to 128 ASCII letters, digits, "_" or "-", not starting with "-"`

const shape = /^[A-Za-z0-9_][A-Za-z0-9_-]{0,127}$/
/** Device names Windows resolves in any directory, whatever the extension (`CON.json` is the console). */
const windowsDeviceName = /^(con|prn|aux|nul|com[0-9]|lpt[0-9])$/i

const stringProblem = (id: string): string | undefined => {
  if (id.length === 0) return "it is empty"
  if (id.length > 128) return `it is ${id.length} characters long`
  if (id.startsWith("-")) return `it starts with "-"`
  if (!shape.test(id)) return 'it contains a character other than an ASCII letter, digit, "_" or "-"'
  if (windowsDeviceName.test(id)) return "it is a reserved device name on Windows"
  return undefined
}

/** Why a value cannot be a session ID, or undefined when it can. */
export const sessionIdProblem = (value: unknown): string | undefined => {
  if (typeof value === "string") return stringProblem(value)
  if (value === undefined) return "there is none"
  if (value === null) return "it is null"
  if (Array.isArray(value)) return "it is a list, not a string"
  if (Predicate.isObject(value)) return "it is an object, not a string"
  return `it is a ${typeof value}, not a string`
}

export class InvalidSessionId extends Schema.TaggedError<InvalidSessionId>()("InvalidSessionId", {
  sessionID: Schema.Unknown,
  problem: Schema.String
}) {
  override get message() {
    return `Invalid session ID ${shown(this.sessionID)}: ${this.problem}. A session ID is ${sessionIdRule}.`
  }
}

/** The value as the caller wrote it, cut short. */
const shown = (value: unknown): string =>
  typeof value === "string" && value.length > 80
    ? `${JSON.stringify(value.slice(0, 80))}...`
    : value === undefined
    ? "undefined"
    : boundedJson(value, { maxDepth: 3, maxString: 80, maxLength: 100 })

/** The one decoding of a session ID from outside, with a problem that names the value and what is valid. */
export const decodeSessionId = (value: unknown): Result.Result<SessionId, InvalidSessionId> => {
  const problem = sessionIdProblem(value)
  return problem === undefined
    ? Result.succeed(value as SessionId)
    : Result.fail(new InvalidSessionId({ sessionID: value, problem }))
}
