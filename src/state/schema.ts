import { Effect, Schema } from "effect"

/**
 * What survives a restart, as stored on disk. Every field added after version 1 carries a decoding default, so a
 * file written by an older release still loads; a file that fails to decode is quarantined, never half-used.
 */

const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const withDefault = <S extends Schema.Top>(schema: S, value: () => S["Type"]) =>
  schema.pipe(Schema.withDecodingDefaultKey(Effect.sync(value)))

/** Calls and tokens removed, for one strategy, tool or the whole session. */
export const Tally = Schema.Struct({
  calls: Count,
  tokens: Count
})
export type Tally = typeof Tally.Type

/** The earlier copy a repeated output points to: its stable ID, and how the repeat relates to it. */
export const CopyOf = Schema.Struct({
  id: Count,
  /**
   * `same`: the same call with the same output; `written`: a read of the content a write sent; `contained`: part of an
   * earlier read; `input`: the call's own input read back (`id` is the call's own).
   */
  kind: Schema.Literals(["same", "written", "contained", "input"])
})
export type CopyOf = typeof CopyOf.Type

/** One prune: the reason (strategy or tool) and the tokens it removes from what is sent. */
export const PruneRecord = Schema.Struct({
  reason: Schema.String,
  tokens: Count,
  at: Schema.Number,
  /** Decided between requests (by the model's tools or the user's command) and not yet sent to the model. */
  pending: Schema.optional(Schema.Boolean),
  /** A repeat pruned at its first send: the earlier copy its placeholder names. */
  of: Schema.optional(CopyOf),
  /**
   * Made by the model's discard or extract: the assistant message that holds that call. OpenCode's undo takes the
   * message out of the session, and the prune goes with it.
   */
  message: Schema.optional(Schema.String)
})
export type PruneRecord = typeof PruneRecord.Type

/**
 * An old turn folded in what is sent: its calls' parts replaced by one digest (src/engine/fold.ts). Keyed by the turn's
 * key (the ID of the message that opens it).
 */
export const FoldRecord = Schema.Struct({
  /** The calls the digest stands for, oldest first; the turn's other calls stay in place. */
  calls: Schema.Array(Schema.String),
  /** Tokens the fold takes out of every request, net of its digest. */
  tokens: Count,
  at: Schema.Number,
  /** Decided, and not yet sent to the model. */
  pending: Schema.optional(Schema.Boolean)
})
export type FoldRecord = typeof FoldRecord.Type

/** How often prunes reached what is sent, and the prompt cache they made the provider rebuild (an estimate). */
const Applications = Schema.Struct({
  count: Count,
  /** Applied when the cache had expired anyway: no rebuild cost. */
  cold: Count,
  rebuiltTokens: Count
})

/**
 * The cost effect of pruning under the pricing profile of the session's provider (src/pricing/profiles.ts), in units
 * of one uncached input token, summed over the requests this plugin transformed: what the pruned tokens would have
 * cost (read from the cache, or written when new or after the cache expired), and what the prompt cache rebuilds
 * that prunes caused cost on top. Estimates: the provider bills what it counts.
 */
export const CostLedger = Schema.Struct({
  profile: Schema.String,
  requests: Count,
  saved: Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)),
  rebuilt: Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)),
  /** Reads of a file whose every copy in what was sent was pruned: the model reading again what masking took. */
  reReads: withDefault(Count, () => 0),
  /**
   * What they cost: the request each took, and the file's content sent again where, without pruning, the copy the
   * model already had would have been (so what `saved` counts for that copy is not a saving).
   */
  reRead: withDefault(Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0)), () => 0)
})
export type CostLedger = typeof CostLedger.Type

const emptyCostLedger = (): CostLedger => ({ profile: "", requests: 0, saved: 0, rebuilt: 0, reReads: 0, reRead: 0 })

export const SessionStats = Schema.Struct({
  /** Calls and tokens pruned in what reached the model (a prune still pending is not counted until it is sent). */
  calls: Count,
  tokens: Count,
  applications: withDefault(Applications, () => ({ count: 0, cold: 0, rebuiltTokens: 0 })),
  cost: withDefault(CostLedger, emptyCostLedger),
  byReason: withDefault(Schema.Record(Schema.String, Tally), () => ({})),
  byTool: withDefault(Schema.Record(Schema.String, Tally), () => ({})),
  lastPrune: Schema.optional(Schema.Struct({
    at: Schema.Number,
    reason: Schema.String,
    calls: Count,
    tokens: Count
  })),
  /**
   * The compactions the plugin asked OpenCode for (compaction between turns, opt-in) and OpenCode made: how many, and
   * the latest, with the context it had reached, as OpenCode counts it, and the threshold it had crossed.
   */
  compactions: withDefault(
    Schema.Struct({
      count: Count,
      last: Schema.optional(Schema.Struct({ at: Schema.Number, tokens: Count, threshold: Count }))
    }),
    () => ({ count: 0 })
  )
})
export type SessionStats = typeof SessionStats.Type

/** A distilled finding kept by `extract`, handed to OpenCode's summariser when it compacts the session. */
export const Finding = Schema.Struct({
  id: Count,
  tool: Schema.String,
  text: Schema.String
})
export type Finding = typeof Finding.Type

/**
 * The model of the session's latest request, as OpenCode described it: after a restart, its provider's pricing and
 * window apply from the first request on, before OpenCode describes the model again.
 */
const StoredModel = Schema.Struct({
  providerID: Schema.String,
  modelID: Schema.String,
  npm: Schema.optional(Schema.String),
  contextLimit: Schema.optional(Count),
  outputLimit: Schema.optional(Count)
})

export const SessionFile = Schema.Struct({
  version: Schema.Literal(1),
  sessionID: Schema.String,
  updatedAt: Schema.Number,
  /** The next stable numeric ID; IDs are never reused or renumbered. */
  nextId: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)),
  /** callID -> stable numeric ID. */
  ids: withDefault(Schema.Record(Schema.String, Count), () => ({})),
  /** callID -> the prune applied to it. */
  pruned: withDefault(Schema.Record(Schema.String, PruneRecord), () => ({})),
  stats: withDefault(SessionStats, () => emptyStats()),
  /** The newest compaction summary message seen: history before it is no longer sent. */
  summaryId: Schema.optional(Schema.String),
  findings: withDefault(Schema.Array(Finding), () => []),
  /** Calls the user restored with `/dcp restore`: automatic rules leave them alone from then on. */
  restored: withDefault(Schema.Array(Schema.String), () => []),
  /** callID -> tokens of a read of a file whose every copy was pruned (`CostLedger.reReads`). */
  reReads: withDefault(Schema.Record(Schema.String, Count), () => ({})),
  /** Turn key -> the fold of that old turn. */
  folds: withDefault(Schema.Record(Schema.String, FoldRecord), () => ({})),
  model: Schema.optional(StoredModel),
  /**
   * Tokens the prunes and folds in effect left out of the latest request: after a restart, whether a sweep or a restore
   * made since that request (before the restart) changed what the next one sends from what the provider counted.
   */
  sentLeft: Schema.optional(Count)
})
export type SessionFile = typeof SessionFile.Type

/**
 * What changed in a session's state since its file or its last change was written, appended to the session's journal
 * beside the file (`Persistence.append`) so that a write is as large as the change, not the session. The scalars are
 * always there (a few hundred bytes); of the keyed parts only the keys set (to their value) or deleted (`null`).
 */
export const SessionChange = Schema.Struct({
  updatedAt: Schema.Number,
  nextId: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)),
  stats: SessionStats,
  summaryId: Schema.NullOr(Schema.String),
  model: Schema.NullOr(StoredModel),
  sentLeft: Schema.NullOr(Count),
  /** The whole list, when it changed. */
  findings: Schema.optional(Schema.Array(Finding)),
  ids: Schema.Record(Schema.String, Schema.NullOr(Count)),
  pruned: Schema.Record(Schema.String, Schema.NullOr(PruneRecord)),
  folds: Schema.Record(Schema.String, Schema.NullOr(FoldRecord)),
  reReads: Schema.Record(Schema.String, Schema.NullOr(Count)),
  /** callID -> restored (true) or no longer (false). */
  restored: Schema.Record(Schema.String, Schema.Boolean)
})
export type SessionChange = typeof SessionChange.Type

const emptyStats = (): SessionStats => ({
  calls: 0,
  tokens: 0,
  applications: { count: 0, cold: 0, rebuiltTokens: 0 },
  cost: emptyCostLedger(),
  byReason: {},
  byTool: {},
  compactions: { count: 0 }
})

export const emptySessionFile = (sessionID: string, now: number): SessionFile => ({
  version: 1,
  sessionID,
  updatedAt: now,
  nextId: 1,
  ids: {},
  pruned: {},
  stats: emptyStats(),
  reReads: {},
  findings: [],
  restored: [],
  folds: {}
})

/** Calls and tokens pruned in one session, in all and by reason: its part of the lifetime totals. */
export const SessionTotals = Schema.Struct({
  calls: Count,
  tokens: Count,
  byReason: withDefault(Schema.Record(Schema.String, Tally), () => ({}))
})
export type SessionTotals = typeof SessionTotals.Type

/** Totals across every session on this machine. */
export const LifetimeTotals = Schema.Struct({
  /** Sessions in which anything was pruned. */
  sessions: Count,
  calls: Count,
  tokens: Count,
  byReason: withDefault(Schema.Record(Schema.String, Tally), () => ({}))
})
export type LifetimeTotals = typeof LifetimeTotals.Type

/**
 * The lifetime file of version 1: one running sum, to which every process added what it pruned. Two processes working
 * in one session each added the prunes both made, so it counted them twice; it is read only to be migrated.
 */
export const LifetimeFileV1 = Schema.Struct({
  version: Schema.Literal(1),
  updatedAt: Schema.Number,
  ...LifetimeTotals.fields
})
export type LifetimeFileV1 = typeof LifetimeFileV1.Type

/**
 * Totals across every session on this machine, kept in one file so reading them never means reading all sessions: each
 * session's own totals (what its state file's statistics say), so that a session worked on by two OpenCode processes
 * at once is counted once, and a write repeated after a failure changes nothing. Sessions deleted in OpenCode, and what
 * version 1 had counted that no session file explains, are summed in `retired`.
 */
export const LifetimeFile = Schema.Struct({
  version: Schema.Literal(2),
  updatedAt: Schema.Number,
  retired: LifetimeTotals,
  sessions: Schema.Record(Schema.String, SessionTotals)
})
export type LifetimeFile = typeof LifetimeFile.Type
