import { Result, Schema } from "effect"
import { type SessionChange, SessionChange as SessionChangeSchema, SessionFile } from "./schema.ts"

/**
 * A session's state on disk: its file (`<sessionID>.json`), written whole and atomically, and its journal
 * (`<sessionID>.journal`), the changes made since, one JSON line each, appended. Loading replays the journal over the
 * file. Each whole write starts a generation, a name no other write uses, carried by the file and by every line
 * appended after it: a line of another generation was written before the file (a process stopped between replacing
 * the file and removing the journal, or another process's writes) and is not replayed, so replaying never takes back
 * what the file already holds.
 */

/** The session file as stored: the state, and the generation its journal's lines carry (none: an older release's). */
export const StoredSession = Schema.Struct({
  ...SessionFile.fields,
  generation: Schema.optional(Schema.String)
})

/** One line of the journal. */
const JournalLine = Schema.Struct({
  generation: Schema.String,
  change: SessionChangeSchema
})

const decodeLine = Schema.decodeUnknownResult(Schema.fromJsonString(JournalLine))
const encodeLine = Schema.encodeSync(Schema.fromJsonString(JournalLine))

/** The journal line that records `change` after the file of `generation`, with its line end. */
export const journalLine = (generation: string, change: SessionChange): string =>
  `${encodeLine({ generation, change })}\n`

export interface JournalRead {
  /** The changes of the file's generation, in the order written. */
  readonly changes: ReadonlyArray<SessionChange>
  /** Lines of another generation, not replayed. */
  readonly stale: number
  /** The last line has no line end: its write was cut short (a crash, a full disk) and it is not replayed. */
  readonly torn: boolean
  /**
   * The first whole line that is not a change (1-based), and why; it and the lines after it are not replayed, so the
   * state is the one that line's write started from.
   */
  readonly invalid: { readonly line: number; readonly issue: string } | undefined
}

/** The changes `text` (a journal) holds for the file of `generation`. */
export const readJournal = (text: string, generation: string | undefined): JournalRead => {
  const changes: Array<SessionChange> = []
  let stale = 0
  let start = 0
  let line = 0
  while (start < text.length) {
    const end = text.indexOf("\n", start)
    if (end === -1) return { changes, stale, torn: true, invalid: undefined }
    line++
    const source = text.slice(start, end)
    start = end + 1
    if (source.trim() === "") continue
    const decoded = decodeLine(source)
    if (Result.isFailure(decoded))
      return { changes, stale, torn: false, invalid: { line, issue: decoded.failure.message } }
    if (decoded.success.generation === generation) changes.push(decoded.success.change)
    else stale++
  }
  return { changes, stale, torn: false, invalid: undefined }
}

/** `file` with `changes` made to it, in order. */
export const replay = (file: SessionFile, changes: ReadonlyArray<SessionChange>): SessionFile => {
  if (changes.length === 0) return file
  // Maps, not objects: a key is a call ID the host chose, and `__proto__` assigned to an object is not a key.
  const ids = new Map(Object.entries(file.ids))
  const pruned = new Map(Object.entries(file.pruned))
  const folds = new Map(Object.entries(file.folds))
  const reReads = new Map(Object.entries(file.reReads))
  const restored = new Set(file.restored)
  let findings = file.findings
  let last = changes[0]!
  for (const change of changes) {
    last = change
    apply(ids, change.ids)
    apply(pruned, change.pruned)
    apply(folds, change.folds)
    apply(reReads, change.reReads)
    for (const [callID, isRestored] of Object.entries(change.restored)) {
      if (isRestored) restored.add(callID)
      else restored.delete(callID)
    }
    if (change.findings !== undefined) findings = change.findings
  }
  return {
    version: file.version,
    sessionID: file.sessionID,
    updatedAt: last.updatedAt,
    nextId: last.nextId,
    ids: Object.fromEntries(ids),
    pruned: Object.fromEntries(pruned),
    stats: last.stats,
    ...(last.summaryId === null ? {} : { summaryId: last.summaryId }),
    findings,
    restored: [...restored],
    reReads: Object.fromEntries(reReads),
    folds: Object.fromEntries(folds),
    ...(last.model === null ? {} : { model: last.model }),
    ...(last.sentLeft === null ? {} : { sentLeft: last.sentLeft })
  }
}

const apply = <V>(target: Map<string, V>, changes: Readonly<Record<string, V | null>>) => {
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) target.delete(key)
    else target.set(key, value)
  }
}

/** Entries a change adds to a journal, its scalars (statistics, model: a few hundred bytes) counted as 8. */
export const changeEntries = (change: SessionChange): number =>
  8 + Object.keys(change.ids).length + Object.keys(change.pruned).length + Object.keys(change.folds).length +
  Object.keys(change.reReads).length + Object.keys(change.restored).length + (change.findings?.length ?? 0)

/**
 * A journal of `entries` over a state of `stateEntries` is due to be replaced by a whole write: past the state's own
 * size (so a state is written whole once per as many changed entries as it holds, and a load replays at most about
 * twice the state), and past a floor under which a small session's writes are appends too.
 */
export const journalFull = (entries: number, stateEntries: number): boolean => entries > Math.max(256, stateEntries)
