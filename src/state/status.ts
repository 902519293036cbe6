import { Result, Schema } from "effect"
import { Tally } from "./schema.ts"

/**
 * A session's status as the terminal UI shows it (the sidebar panel and the `/dcp` dialog): a small JSON file the
 * server part rewrites after every request and every prune or restore, and the TUI part reads. The two parts run
 * in different JavaScript contexts and may come from different releases, so this file is their whole contract:
 * `version` changes only when a reader of the previous version would misread the file; fields added later are
 * optional, and a reader shows what it finds.
 */

export const statusVersion = 1

/**
 * The plugin's state directory below the data directory (`$XDG_DATA_HOME`, else `~/.local/share`): where the server
 * part writes and the TUI part, which only has the environment to go by, reads.
 */
export const stateDirInDataHome = ["opencode", "storage", "plugin", "dcp"] as const

/** Status files live apart from the state files, in `<stateDir>/status/<sessionID>.json`. */
export const statusDirName = "status"
export const statusFileName = (sessionID: string) => `${sessionID}.json`

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

/** The session's next request as things stand (the latest one, with the prunes made since), estimated. */
const StatusContext = Schema.Struct({
  /** Tokens sent: system prompt, conversation text and what tool calls kept. */
  tokens: Count,
  /** The model's context window, when the host named it. */
  limit: Schema.optional(Count),
  system: Count,
  /**
   * The process writing the status has not seen the system prompt yet (OpenCode hands it over with each request, after
   * the request path ran): `system` is 0 then, and the size leaves it out. Absent from status files of earlier builds.
   */
  systemUnknown: Schema.optional(Schema.Boolean),
  /** User and assistant text and reasoning. */
  text: Count,
  /** Tool inputs and outputs still sent. */
  tools: Count,
  /** Tool calls in the request. */
  calls: Count,
  /** Tokens the prunes and folds in effect leave out of it. */
  pruned: Count,
  at: Schema.Number,
  /**
   * Prunes changed since the latest request (a sweep, a restore): these figures are the next request's, and the
   * provider's count of the latest one no longer describes it. Absent from status files of earlier builds.
   */
  changed: Schema.optional(Schema.Boolean),
  /** What the prunes and folds in effect left out of the latest request this process sent (with `changed`). */
  leftAtLatest: Schema.optional(Count)
})

/**
 * One call the next request leaves out, for the dialog's restore list: pruned, or folded with its turn (`reason`
 * "fold" when the fold alone takes it out), with what it takes out of every request (its share of a fold included).
 */
export const StatusPrune = Schema.Struct({
  id: Count,
  tool: Schema.String,
  /** The call's key argument (a path, a command), possibly empty. */
  target: Schema.String,
  tokens: Count,
  reason: Schema.String,
  /** Its turn is folded; absent from status files of earlier builds. */
  folded: Schema.optional(Schema.Boolean)
})
export type StatusPrune = typeof StatusPrune.Type

/**
 * Automatic prunes found but not applied yet, and why they wait (a short phrase, e.g. "warm cache"), which holds until
 * `expiresAt`: then the prompt cache has gone cold, and they apply with the next request.
 */
const StatusPending = Schema.Struct({
  calls: Count,
  tokens: Count,
  reason: Schema.String,
  expiresAt: Schema.optional(Schema.Number)
})

/** A problem in a config file in effect: shown until the file is fixed. */
export const StatusProblem = Schema.Struct({
  file: Schema.String,
  message: Schema.String
})
export type StatusProblem = typeof StatusProblem.Type

/**
 * The cost effect of pruning so far under the pricing profile of the session's provider (the session's cost ledger),
 * in input-token equivalents (one uncached input token = 1): what the pruned tokens would have cost, and what the
 * prompt-cache rebuilds the prunes caused and the model's reads of masked files cost on top. Estimates.
 */
const StatusCost = Schema.Struct({
  profile: Schema.String,
  saved: Schema.Number.check(Schema.isGreaterThanOrEqualTo(0)),
  rebuilt: Schema.Number.check(Schema.isGreaterThanOrEqualTo(0)),
  /** What the model's reads of masked files cost (`CostLedger.reRead`); absent from status files of earlier builds. */
  reRead: Schema.optional(Schema.Number.check(Schema.isGreaterThanOrEqualTo(0)))
})

export const SessionStatus = Schema.Struct({
  version: Schema.Literal(statusVersion),
  sessionID: Schema.String,
  updatedAt: Schema.Number,
  /** Absent until the first request this process transformed. */
  context: Schema.optional(StatusContext),
  /**
   * What every request leaves out from now on: the calls pruned or folded (each once), and the tokens the prunes and
   * folds take out.
   */
  pruned: Tally,
  /** Old turns folded in what is sent (src/engine/fold.ts), the calls their digests stand for, the tokens saved. */
  folded: Schema.optional(Schema.Struct({ turns: Count, calls: Count, tokens: Count })),
  /** Calls the user restored in the session (automatic rules leave them alone); absent from earlier builds' files. */
  restored: Schema.optional(Count),
  /** Prunes and folds made since the latest request: the next request carries them (part of the figures above). */
  queued: Schema.optional(Tally),
  /** Everything pruned in the session so far (restored calls included), by reason. */
  session: Schema.Struct({
    calls: Count,
    tokens: Count,
    byReason: Schema.Record(Schema.String, Tally)
  }),
  /** The calls in effect (`pruned`), newest first: a bounded list, all of them up to its bound. */
  recent: Schema.Array(StatusPrune),
  pending: Schema.optional(StatusPending),
  cost: Schema.optional(StatusCost),
  /** The server part handles `/dcp`: the dialog may sweep and restore through it. */
  commands: Schema.Boolean,
  /** Problems in the config files in effect, until they are fixed. */
  problems: Schema.optional(Schema.Array(StatusProblem))
})
export type SessionStatus = typeof SessionStatus.Type

export const encodeStatus = Schema.encodeEffect(Schema.fromJsonString(SessionStatus))

/** What a status file holds, for a reader that must never throw. */
export type ReadStatus =
  | { readonly _tag: "ok"; readonly status: SessionStatus }
  | { readonly _tag: "invalid"; readonly problem: string }
  /** Written by a release with another status version: the reader cannot tell what it means. */
  | { readonly _tag: "otherVersion"; readonly version: unknown }

const VersionOnly = Schema.Struct({ version: Schema.Unknown })
const decodeVersion = Schema.decodeUnknownResult(Schema.fromJsonString(VersionOnly))
const decodeStatus = Schema.decodeUnknownResult(Schema.fromJsonString(SessionStatus))

/** Decodes a status file's text; a file of another version is told apart from a broken one. */
export const readStatus = (text: string): ReadStatus => {
  const head = decodeVersion(text)
  if (Result.isFailure(head)) return { _tag: "invalid", problem: head.failure.message }
  if (head.success.version !== statusVersion) return { _tag: "otherVersion", version: head.success.version }
  const full = decodeStatus(text)
  return Result.isFailure(full)
    ? { _tag: "invalid", problem: full.failure.message }
    : { _tag: "ok", status: full.success }
}
