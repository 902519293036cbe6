import type { LifetimeFile, LifetimeFileV1, LifetimeTotals, SessionStats, SessionTotals, Tally } from "./schema.ts"

/**
 * Lifetime totals as per-session records (src/state/schema.ts, `LifetimeFile`): data in, data out. A session's record
 * is replaced, never added to, so recording the same totals twice, or the same prunes from two processes, counts them
 * once; of two records of one session, the one with more calls (then more tokens) wins, so totals never go back.
 */

const emptyTotals: LifetimeTotals = { sessions: 0, calls: 0, tokens: 0, byReason: {} }

export const emptyLifetime: LifetimeFile = { version: 2, updatedAt: 0, retired: emptyTotals, sessions: {} }

/** A session's part of the lifetime totals: what its statistics say it pruned. */
export const sessionTotals = (stats: SessionStats): SessionTotals => ({
  calls: stats.calls,
  tokens: stats.tokens,
  byReason: stats.byReason
})

/** Token figures may be estimates: counts are rounded and clamped, so one odd figure cannot make the file invalid. */
const count = (n: number) => (Number.isFinite(n) && n > 0 ? Math.round(n) : 0)

const clean = (totals: SessionTotals): SessionTotals => ({
  calls: count(totals.calls),
  tokens: count(totals.tokens),
  byReason: Object.fromEntries(
    Object.entries(totals.byReason).map((
      [reason, tally]
    ) => [reason, { calls: count(tally.calls), tokens: count(tally.tokens) }])
  )
})

const larger = (stored: SessionTotals | undefined, given: SessionTotals): SessionTotals =>
  stored === undefined || given.calls > stored.calls || (given.calls === stored.calls && given.tokens > stored.tokens)
    ? given
    : stored

/** Each given session's record set to the larger of the stored one and the given one. */
export const recordSessions = (
  file: LifetimeFile,
  records: ReadonlyMap<string, SessionTotals>,
  now: number
): LifetimeFile => {
  const sessions: Record<string, SessionTotals> = { ...file.sessions }
  for (const [sessionID, totals] of records) sessions[sessionID] = larger(sessions[sessionID], clean(totals))
  return { ...file, updatedAt: now, sessions }
}

/** A deleted session: its record folded into `retired`, which no session writes to again. */
export const retireSession = (file: LifetimeFile, sessionID: string, now: number): LifetimeFile => {
  const record = file.sessions[sessionID]
  if (record === undefined) return file
  const { [sessionID]: _, ...sessions } = file.sessions
  return { ...file, updatedAt: now, retired: plus(file.retired, record), sessions }
}

/** The totals: the retired ones plus every session's record. */
export const totalsOf = (file: LifetimeFile): LifetimeTotals =>
  Object.values(file.sessions).reduce<LifetimeTotals>((totals, record) => plus(totals, record), file.retired)

const plus = (totals: LifetimeTotals, record: SessionTotals): LifetimeTotals => {
  const byReason: Record<string, Tally> = { ...totals.byReason }
  for (const [reason, tally] of Object.entries(record.byReason)) {
    const before = byReason[reason] ?? { calls: 0, tokens: 0 }
    byReason[reason] = { calls: before.calls + tally.calls, tokens: before.tokens + tally.tokens }
  }
  return {
    sessions: totals.sessions + (record.calls > 0 || record.tokens > 0 ? 1 : 0),
    calls: totals.calls + record.calls,
    tokens: totals.tokens + record.tokens,
    byReason
  }
}

/**
 * A version 1 file, given the totals of the sessions whose state files are on disk: those become records, and what the
 * running sum counted beyond them (deleted sessions, and prunes it counted twice) is retired. A session that goes on
 * after the migration then replaces its record instead of adding its whole history to the sum again.
 */
export const migrateV1 = (
  old: LifetimeFileV1,
  onDisk: ReadonlyMap<string, SessionTotals>,
  now: number
): LifetimeFile => {
  const fresh = recordSessions(emptyLifetime, onDisk, now)
  const explained = totalsOf(fresh)
  const byReason: Record<string, Tally> = {}
  for (const [reason, tally] of Object.entries(old.byReason)) {
    const known = explained.byReason[reason] ?? { calls: 0, tokens: 0 }
    const left = { calls: count(tally.calls - known.calls), tokens: count(tally.tokens - known.tokens) }
    if (left.calls > 0 || left.tokens > 0) byReason[reason] = left
  }
  return {
    ...fresh,
    retired: {
      sessions: count(old.sessions - explained.sessions),
      calls: count(old.calls - explained.calls),
      tokens: count(old.tokens - explained.tokens),
      byReason
    }
  }
}
