import type { Anchor } from "./anchor.ts"
import type { Pace, Waiting } from "./schedule.ts"
import type { Stamp } from "./instructions.ts"
import type { ViewState } from "./view.ts"
import type { NoteOrigin } from "../host/schema.ts"
import { TrackedMap, TrackedSet } from "../data/tracked.ts"
import type { Finding, FoldRecord, PruneRecord, SessionChange, SessionFile, SessionStats } from "../state/schema.ts"

/**
 * One session's state while OpenCode runs: the persisted part held in Maps (thousands of calls are looked up on
 * every request) that remember the keys changed since the last write (`takeChange`), plus what only matters until the
 * process exits.
 */
export interface SessionState {
  readonly sessionID: string
  /** Sub-agent sessions (OpenCode's `task` tool) are never modified. Asked of the host once. */
  readonly isSubAgent: boolean
  /** callID -> stable numeric ID, assigned once and never renumbered. */
  readonly ids: TrackedMap<string, number>
  nextId: number
  /** callID -> the prune applied to what is sent for that call. */
  readonly pruned: TrackedMap<string, PruneRecord>
  /** Turn key -> the fold of that old turn (src/engine/fold.ts). */
  readonly folds: TrackedMap<string, FoldRecord>
  /** callID -> the key of the turn whose fold stands for it: derived from `folds`, kept with it (`foldsChanged`). */
  readonly folded: Map<string, string>
  stats: SessionStats
  summaryId: string | undefined
  findings: Array<Finding>
  /** Calls the user restored: never pruned again by automatic rules. */
  readonly restored: TrackedSet<string>
  /** callID -> tokens of the model's reads of files whose every copy was pruned (see `CostLedger.reReads`). */
  readonly reReads: TrackedMap<string, number>
  updatedAt: number
  /** Changed since last written to disk. */
  dirty: boolean
  /** Agent and model of the newest user turn, so notes do not switch the user's agent. */
  origin: NoteOrigin
  /** OpenCode announced a compaction: the next transform is its summariser's and is left alone. */
  compacting: boolean
  /**
   * The compaction the plugin asked OpenCode for and OpenCode has not reported done: the context it had reached (as
   * OpenCode counts it) and the threshold it crossed, for the note that follows it and `/dcp stats`.
   */
  compactionAsked: { readonly tokens: number; readonly threshold: number } | undefined
  /** Prunes recorded but not yet sent to the model (the model's and the user's, made between requests). */
  readonly undelivered: Set<string>
  /** Folds recorded but not yet sent to the model, by turn key. */
  readonly undeliveredFolds: Set<string>
  /** Highest ID at the last prune by the model: nudges count tool results after it. */
  nudgeAfter: number
  /** Tokens of the system prompt of the latest request, once seen (estimated), and its texts. */
  systemTokens: number | undefined
  systemTexts: ReadonlyArray<string> | undefined
  /**
   * The array of system texts OpenCode handed the plugins for the latest request, itself: plugins after this one add
   * to it and OpenCode then joins some of its parts in place, so once that request is sent it holds the system
   * messages it sent.
   */
  systemParts: ReadonlyArray<string> | undefined
  /**
   * The model of the latest request: its provider's pricing and its context window decide when prunes are applied.
   * Kept in the session's file, so that a restarted OpenCode prices the session's first request under it; a session
   * with none stored takes its user's newest message's (`modelOfRequest`).
   */
  model: SessionModel | undefined
  /**
   * Tokens of the latest request the model got in this process, as the plugin sent it (the summariser's excluded),
   * until the session's compaction is asked for: what decides it at the end of a turn (src/engine/compaction.ts).
   */
  lastContext: number | undefined
  /**
   * Tokens the prunes and folds in effect left out of the latest request: against what they leave out now, how much
   * a sweep or a restore since changed the next request from what the provider counted for that one. Kept with the
   * session, so a restarted OpenCode knows what a restore made before the restart changed.
   */
  sentLeft: number | undefined
  /** When this process last saw a request for the session: an idle gap beyond the cache TTL means a cold cache. */
  lastRequestAt: number | undefined
  /** The session's pace (requests, pauses longer than the TTL), from its history and then this process's requests. */
  pace: Pace | undefined
  /** The scheduler's count of tool list changes when this process last saw a request for the session. */
  toolsSeen: number | undefined
  /** The instruction files of the system prompt as they were on disk at the latest request (`Instructions`). */
  instructionStamps: ReadonlyMap<string, Stamp> | undefined
  /** What keeping the waiting prunes in the requests so far cost (their tokens at the read price, summed). */
  waited: number
  /**
   * Automatic prunes and folds found but waiting for the cache, as of the latest request, each with the tokens it
   * would save, and why they wait (src/engine/figures.ts counts those not made since).
   */
  waiting: { readonly prunes: ReadonlyArray<WaitingPrune>; readonly why: Waiting } | undefined
  /**
   * Moves whenever prunes, restores or the nudge baseline change (`changed`): the request path's `viewState`, derived
   * from them, is rebuilt when it was made at another revision.
   */
  revision: number
  /** The revision the latest request was sent at: a different one means prunes changed since. */
  sentRevision: number
  /** What the request path derived from the tool calls of the session's latest request (src/engine/view.ts). */
  viewState: ViewState | undefined
  /** The plugin's own cache breakpoint, as of the latest request (src/engine/anchor.ts); not kept across restarts. */
  anchor: Anchor | undefined
  /**
   * Tokens the batches applied since the anchor last reached the frontier wrote again because it lagged behind it,
   * summed: when they reach what moving it at once would cost, it moves (src/hooks/transform.ts).
   */
  anchorLag: number
}

/** A prune (of the call `callID`) or a fold (of the turn `fold`, its first call `callID`) that waits. */
export interface WaitingPrune {
  readonly callID: string
  readonly tokens: number
  readonly fold?: string | undefined
}

export interface SessionModel {
  readonly providerID: string
  readonly modelID: string
  /** The AI SDK package OpenCode uses for it. */
  readonly npm: string | undefined
  readonly contextLimit: number | undefined
  /** Its output limit: OpenCode reserves up to 32,000 tokens of the window for the answer. */
  readonly outputLimit: number | undefined
}

export const fromFile = (file: SessionFile, isSubAgent: boolean): SessionState => {
  const undelivered = new Set(
    Object.entries(file.pruned).flatMap(([callID, record]) => (record.pending === true ? [callID] : []))
  )
  const folds = new TrackedMap(Object.entries(file.folds))
  const undeliveredFolds = new Set([...folds].flatMap(([key, record]) => (record.pending === true ? [key] : [])))
  const state: SessionState = {
    sessionID: file.sessionID,
    isSubAgent,
    ids: new TrackedMap(Object.entries(file.ids)),
    nextId: file.nextId,
    pruned: new TrackedMap(Object.entries(file.pruned)),
    folds,
    folded: foldedCalls(folds),
    stats: file.stats,
    summaryId: file.summaryId,
    findings: [...file.findings],
    restored: new TrackedSet(file.restored),
    reReads: new TrackedMap(Object.entries(file.reReads)),
    updatedAt: file.updatedAt,
    dirty: false,
    origin: {},
    compacting: false,
    compactionAsked: undefined,
    undelivered,
    undeliveredFolds,
    nudgeAfter: 0,
    systemTokens: undefined,
    systemTexts: undefined,
    systemParts: undefined,
    model: file.model === undefined ? undefined : {
      providerID: file.model.providerID,
      modelID: file.model.modelID,
      npm: file.model.npm,
      contextLimit: file.model.contextLimit,
      outputLimit: file.model.outputLimit
    },
    lastContext: undefined,
    sentLeft: file.sentLeft,
    lastRequestAt: undefined,
    pace: undefined,
    toolsSeen: undefined,
    instructionStamps: undefined,
    waited: 0,
    waiting: undefined,
    revision: 0,
    // Loaded in a new process: the prunes stored are those the latest request carried, unless one still waits for
    // its first request. So the provider's count for that request still describes what the next one sends.
    sentRevision: undelivered.size === 0 && undeliveredFolds.size === 0 ? 0 : -1,
    viewState: undefined,
    anchor: undefined,
    anchorLag: 0
  }
  findingsTaken.set(state, { list: state.findings, length: state.findings.length })
  return state
}

export const toFile = (state: SessionState): SessionFile => ({
  version: 1,
  sessionID: state.sessionID,
  updatedAt: state.updatedAt,
  nextId: state.nextId,
  ids: Object.fromEntries(state.ids),
  pruned: Object.fromEntries(state.pruned),
  stats: state.stats,
  ...(state.summaryId === undefined ? {} : { summaryId: state.summaryId }),
  findings: state.findings,
  restored: [...state.restored],
  reReads: Object.fromEntries(state.reReads),
  folds: Object.fromEntries(state.folds),
  ...(state.model === undefined ? {} : { model: { ...state.model } }),
  ...(state.sentLeft === undefined ? {} : { sentLeft: state.sentLeft })
})

/**
 * The findings list last written, and its length then: a change replaces the list or appends to it (its entries are
 * never changed in place).
 */
const findingsTaken = new WeakMap<SessionState, { readonly list: ReadonlyArray<Finding>; readonly length: number }>()

/** What changed in the persisted part since the state was loaded or last taken: the change to append to its journal. */
export const takeChange = (state: SessionState): SessionChange => {
  const taken = findingsTaken.get(state)
  const findingsChanged = taken === undefined || taken.list !== state.findings ||
    taken.length !== state.findings.length
  findingsTaken.set(state, { list: state.findings, length: state.findings.length })
  return {
    updatedAt: state.updatedAt,
    nextId: state.nextId,
    stats: state.stats,
    summaryId: state.summaryId ?? null,
    model: state.model === undefined ? null : { ...state.model },
    sentLeft: state.sentLeft ?? null,
    ...(findingsChanged ? { findings: [...state.findings] } : {}),
    ids: changedEntries(state.ids),
    pruned: changedEntries(state.pruned),
    folds: changedEntries(state.folds),
    reReads: changedEntries(state.reReads),
    restored: Object.fromEntries(
      [...state.restored.takeChanged()].map((callID) => [callID, state.restored.has(callID)])
    )
  }
}

/** The whole persisted part, as its file; what changed before is in it, so the changes recorded so far are forgotten. */
export const takeFile = (state: SessionState): SessionFile => {
  state.ids.takeChanged()
  state.pruned.takeChanged()
  state.folds.takeChanged()
  state.reReads.takeChanged()
  state.restored.takeChanged()
  findingsTaken.set(state, { list: state.findings, length: state.findings.length })
  return toFile(state)
}

/** The keys changed in `map`, with their value, or `null` for one deleted. */
const changedEntries = <V>(map: TrackedMap<string, V>): Record<string, V | null> =>
  Object.fromEntries([...map.takeChanged()].map((key) => [key, map.has(key) ? map.get(key)! : null]))

/** Entries of a state's persisted part, counted as a journal's changes are: what a whole write of it costs. */
export const persistedEntries = (state: SessionState): number =>
  state.ids.size + state.pruned.size + state.folds.size + state.reReads.size + state.restored.size

/** The call's stable ID, assigning the next one the first time the call is seen. */
export const stableId = (state: SessionState, callID: string): number => {
  const known = state.ids.get(callID)
  if (known !== undefined) return known
  const id = state.nextId++
  state.ids.set(callID, id)
  state.dirty = true
  return id
}

/** Marks a change to prunes, restores or the nudge baseline, and the state as needing a write. */
export const changed = (state: SessionState): void => {
  state.revision++
  state.dirty = true
}

/** The calls each fold stands for, by callID: the key of their turn. */
const foldedCalls = (folds: ReadonlyMap<string, FoldRecord>): Map<string, string> => {
  const folded = new Map<string, string>()
  for (const [key, record] of folds) for (const callID of record.calls) folded.set(callID, key)
  return folded
}

/** Records a fold of the turn `key` (or its removal, `record` undefined), keeping `folded` in step. */
export const setFold = (state: SessionState, key: string, record: FoldRecord | undefined): void => {
  const previous = state.folds.get(key)
  if (previous !== undefined) { for (const callID of previous.calls) state.folded.delete(callID) }
  state.undeliveredFolds.delete(key)
  if (record === undefined) {
    state.folds.delete(key)
  } else {
    state.folds.set(key, record)
    for (const callID of record.calls) state.folded.set(callID, key)
    if (record.pending === true) state.undeliveredFolds.add(key)
  }
  changed(state)
}

/** Unfolds the turns whose folds stand for any of `callIDs`; returns their keys. */
export const unfoldCalls = (state: SessionState, callIDs: Iterable<string>): Array<string> => {
  const keys = new Set<string>()
  for (const callID of callIDs) {
    const key = state.folded.get(callID)
    if (key !== undefined) keys.add(key)
  }
  for (const key of keys) setFold(state, key, undefined)
  return [...keys]
}

/** IDs are handed out in order, so the newest call seen so far has the highest. */
export const newestId = (state: SessionState): number => state.nextId - 1
