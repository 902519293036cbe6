import type { FoldRecord, Tally } from "../state/schema.ts"
import type { ToolCall, ToolIndex } from "./calls.ts"
import { contextTokens, textTokens } from "./context.ts"
import type { Waiting } from "./schedule.ts"
import type { SessionState } from "./session.ts"

/**
 * What every report shows of a session's pruning (the sidebar panel, the `/dcp` dialog, `/dcp context`, `/dcp stats`):
 * derived from the session's state as it is now, so that what a sweep, a restore, a discard or a fold did shows at
 * once, not from the next request on, and the same everywhere.
 */
export interface Figures {
  /**
   * What the next request leaves out, those made since the latest request included: the calls pruned or folded, each
   * counted once (a folded call pruned of its own too is one call), and the tokens the prunes and the folds take out.
   */
  readonly inEffect: Tally
  /**
   * Old turns folded (src/engine/fold.ts): the turns, the calls their digests stand for (pruned of their own or not),
   * the tokens the folds take out beyond the prunes (part of `inEffect`).
   */
  readonly folded: { readonly turns: number; readonly calls: number; readonly tokens: number }
  /** Prunes and folds made since the latest request, which the next one carries (part of `inEffect`). */
  readonly queued: Tally
  /**
   * Automatic prunes found and waiting for the prompt cache, and why (none pruned since); `expiresAt`: when the cache
   * goes cold without another request, and the reason they wait with it (they apply with the next request then).
   */
  readonly waiting: (Tally & { readonly why: Waiting; readonly expiresAt?: number | undefined }) | undefined
  /** Calls the user restored: automatic rules leave them alone. */
  readonly restored: number
  /**
   * Prunes changed since the latest request (a sweep, a restore, a discard): the provider's count of that request no
   * longer describes the next one.
   */
  readonly changedSinceSent: boolean
  /** The next request's size as things stand, estimated; none before this process saw the session's calls. */
  readonly context: ContextFigures | undefined
}

interface ContextFigures {
  /** System prompt, conversation text and what the tool calls still send. */
  readonly tokens: number
  readonly system: number
  /**
   * Whether this process saw the system prompt: OpenCode hands it over with each request, after the request path ran
   * for it (`system` is 0 until then).
   */
  readonly systemKnown: boolean
  /** User and assistant text, and signed reasoning. */
  readonly text: number
  /** What the tool calls still send: inputs, outputs and their framing, less prunes and folds. */
  readonly tools: number
  readonly calls: number
  /** What prunes and folds leave out. */
  readonly left: number
  /** What they left out of the latest request this process sent, if any (`SessionState.sentLeft`). */
  readonly leftAtLatest: number | undefined
}

/**
 * The next request as the figures say it (`Figures.context`, the status file's `context`): the one breakdown the
 * `/dcp` dialog and `/dcp context` both show (src/commands/format.ts, `contextBreakdown`).
 */
export interface ContextParts {
  readonly system: number
  /** The system prompt is not known in this process yet: `system` is 0. */
  readonly systemUnknown?: boolean | undefined
  /** User and assistant text, and reasoning. */
  readonly text: number
  /** What the tool calls still send. */
  readonly tools: number
  readonly calls: number
  /** What the prunes and folds in effect leave out. */
  readonly pruned: number
  readonly limit?: number | undefined
  /** Prunes changed since the latest request: the provider's count of it no longer describes the next one. */
  readonly changed?: boolean | undefined
}

/** The breakdown's parts of `figures.context`, with the model's window. */
export const contextParts = (
  context: NonNullable<Figures["context"]>,
  options: { readonly limit: number | undefined; readonly changed: boolean }
): ContextParts => ({
  system: context.system,
  ...(context.systemKnown ? {} : { systemUnknown: true }),
  text: context.text,
  tools: context.tools,
  calls: context.calls,
  pruned: context.left,
  ...(options.limit === undefined ? {} : { limit: options.limit }),
  changed: options.changed
})

/**
 * The next request's size in the provider's terms: its count of the latest request, less what the prunes and folds made
 * since leave out, plus what the restores since bring back; undefined when there is no such count, or the change since
 * is not known (OpenCode started again since).
 */
export const reportedNext = (
  reported: number | undefined,
  context: { readonly left: number; readonly leftAtLatest?: number | undefined } | undefined,
  changed: boolean
): number | undefined => {
  if (reported === undefined || !changed) return reported
  if (context?.leftAtLatest === undefined) return undefined
  return Math.max(0, reported - (context.left - context.leftAtLatest))
}

export const figuresOf = (
  state: SessionState,
  index: ToolIndex | undefined,
  /** The prompt cache's life without a request (`cache.ttlSeconds`): when a waiting reason expires. */
  ttlSeconds?: number
): Figures => {
  const present = index === undefined ? undefined : index.byCallId
  let calls = 0
  let tokens = 0
  let queuedCalls = 0
  let queuedTokens = 0
  const view = state.viewState
  // The request path's view holds the prunes of the calls in it while it is in step with the state (src/engine/view.ts):
  // read there, the figures of a long session cost nothing per request.
  if (index !== undefined && view !== undefined && view.pass === index.pass && view.revision === state.revision) {
    calls = view.applied.length
    tokens = view.prunedTokens
  } else {
    for (const [callID, record] of state.pruned) {
      if (present !== undefined && !present.has(callID)) continue
      calls++
      tokens += record.tokens
    }
  }
  for (const callID of state.undelivered) {
    const record = state.pruned.get(callID)
    if (record === undefined || (present !== undefined && !present.has(callID))) continue
    queuedCalls++
    queuedTokens += record.tokens
  }
  let foldedCalls = 0
  let foldedTokens = 0
  for (const [key, record] of state.folds) {
    foldedCalls += record.calls.length
    foldedTokens += record.tokens
    if (state.undeliveredFolds.has(key)) {
      queuedCalls += foldOnly(state, record, present)
      queuedTokens += record.tokens
    }
  }
  const folded = { turns: state.folds.size, calls: foldedCalls, tokens: foldedTokens }
  const inEffect = { calls: calls + foldOnlyCalls(state, index), tokens: tokens + foldedTokens }
  return {
    inEffect,
    folded,
    queued: { calls: queuedCalls, tokens: queuedTokens },
    waiting: waitingNow(state, ttlSeconds),
    restored: state.restored.size,
    // In a process that has sent no request of the session yet, the stored state tells what the latest one left out:
    // a sweep or a restore made after it, before OpenCode started again, is a change too.
    changedSinceSent: state.revision !== state.sentRevision ||
      (state.lastRequestAt === undefined && state.sentLeft !== undefined && state.sentLeft !== inEffect.tokens),
    context: index === undefined ? undefined : contextNow(state, index, inEffect.tokens, queuedTokens)
  }
}

/** The calls of a fold that no prune of their own takes: the fold alone keeps them out. */
const foldOnly = (
  state: SessionState,
  record: FoldRecord,
  present: ReadonlyMap<string, unknown> | undefined
): number => {
  let count = 0
  for (const callID of record.calls) {
    if (!state.pruned.has(callID) && (present === undefined || present.has(callID))) count++
  }
  return count
}

/** Fold-only calls of every fold, counted again only when the prunes or folds changed (a walk over the folded calls). */
const foldOnlyCounts = new WeakMap<
  SessionState,
  { readonly revision: number; readonly pass: number | undefined; readonly count: number }
>()

const foldOnlyCalls = (state: SessionState, index: ToolIndex | undefined): number => {
  if (state.folds.size === 0) return 0
  const known = foldOnlyCounts.get(state)
  const pass = index?.pass
  if (known !== undefined && known.revision === state.revision && known.pass === pass) return known.count
  let count = 0
  for (const record of state.folds.values()) count += foldOnly(state, record, index?.byCallId)
  foldOnlyCounts.set(state, { revision: state.revision, pass, count })
  return count
}

/** One call the next request leaves out, as the restore list and the notes show it. */
export interface CallInEffect {
  readonly callID: string
  readonly id: number
  readonly tool: string
  /** The call's key argument (a path, a command), possibly empty. */
  readonly target: string
  /** Its prune's reason; "fold" for a call only its turn's fold keeps out. */
  readonly reason: string
  /** Its turn is folded (whatever its own prune). */
  readonly folded: boolean
  /** What it takes out of every request: its prune's tokens and its share of its fold's (`foldShares`). */
  readonly tokens: number
}

/**
 * A fold's tokens shared among its calls, in proportion to what each sends before folding (its framing and what its
 * own prune leaves of its content): whole tokens that add up to the fold's. A fold is counted per call this way in the
 * restore list, the notes and the statistics by tool, so their parts add up to the totals.
 */
export const foldShares = (
  calls: ReadonlyArray<string>,
  foldTokens: number,
  sends: (callID: string) => number
): Map<string, number> => {
  const weights = calls.map((callID) => Math.max(0, sends(callID)))
  const whole = weights.reduce((sum, weight) => sum + weight, 0)
  const exact = weights.map((weight) => (whole === 0 ? foldTokens / calls.length : (foldTokens * weight) / whole))
  const shares = exact.map(Math.floor)
  let left = foldTokens - shares.reduce((sum, share) => sum + share, 0)
  // What rounding down left goes to the largest remainders, so the shares add up to the fold's tokens exactly.
  const order = exact.map((value, i) => ({ i, rest: value - shares[i]! })).sort((a, b) => b.rest - a.rest || a.i - b.i)
  for (const { i } of order) {
    if (left <= 0) break
    shares[i]!++
    left--
  }
  return new Map(calls.map((callID, i) => [callID, shares[i]!]))
}

/** What a call sends before its turn is folded: its framing, and its content less its own prune. */
export const sendsBeforeFold = (call: Pick<ToolCall, "frameTokens" | "totalTokens">, pruned: number): number =>
  call.frameTokens + call.totalTokens - pruned

/**
 * Every call the next request leaves out, newest (highest ID) first: pruned calls and the calls of folded turns. Calls
 * not in `index` (gone from the view) are left out, as `figuresOf` leaves them out of its counts.
 */
export const callsInEffect = (state: SessionState, index: ToolIndex | undefined): Array<CallInEffect> => {
  const present = index?.byCallId
  const entries = new Map<string, CallInEffect>()
  const describe = (callID: string, reason: string, folded: boolean, tokens: number) => {
    const id = state.ids.get(callID)
    if (id === undefined || (present !== undefined && !present.has(callID))) return
    const call = present?.get(callID)
    entries.set(callID, {
      callID,
      id,
      tool: call?.tool ?? "call",
      target: call?.keyParameter ?? "",
      reason,
      folded,
      tokens
    })
  }
  for (const [callID, record] of state.pruned) describe(callID, record.reason, state.folded.has(callID), record.tokens)
  for (const record of state.folds.values()) {
    const shares = foldShares(record.calls, record.tokens, (callID) => {
      const call = present?.get(callID)
      return call === undefined ? 0 : sendsBeforeFold(call, state.pruned.get(callID)?.tokens ?? 0)
    })
    for (const callID of record.calls) {
      const share = shares.get(callID) ?? 0
      const pruned = entries.get(callID)
      if (pruned !== undefined) entries.set(callID, { ...pruned, tokens: pruned.tokens + share })
      else describe(callID, "fold", true, share)
    }
  }
  return [...entries.values()].sort((a, b) => b.id - a.id)
}

/** The automatic prunes still waiting: those the user or the model pruned since no longer count. */
const waitingNow = (state: SessionState, ttlSeconds: number | undefined): Figures["waiting"] => {
  const waiting = state.waiting
  if (waiting === undefined) return undefined
  let calls = 0
  let tokens = 0
  for (const { callID, fold, tokens: saved } of waiting.prunes) {
    const made = fold === undefined
      ? state.pruned.has(callID) || state.restored.has(callID) || state.folded.has(callID)
      : state.folds.has(fold)
    if (made) continue
    calls++
    tokens += saved
  }
  // Every reason to wait holds while the cache is warm: once it expires, the next request applies them.
  const expiresAt = ttlSeconds === undefined || state.lastRequestAt === undefined
    ? undefined
    : state.lastRequestAt + ttlSeconds * 1000
  if (calls === 0) return undefined
  return expiresAt === undefined ? { calls, tokens, why: waiting.why } : { calls, tokens, why: waiting.why, expiresAt }
}

/** Whether the waiting prunes' reason expired with the cache at `now`: they apply with the next request. */
export const waitingExpired = (waiting: { readonly expiresAt?: number | undefined }, now: number): boolean =>
  waiting.expiresAt !== undefined && now >= waiting.expiresAt

const contextNow = (state: SessionState, index: ToolIndex, left: number, queued: number): ContextFigures => {
  const callTokens = index.callTokens
  const system = state.systemTokens ?? 0
  const tools = Math.max(0, callTokens - left)
  return {
    tokens: contextTokens(system, index.textChars, tools),
    system,
    systemKnown: state.systemTokens !== undefined,
    text: textTokens(index.textChars),
    tools,
    calls: index.calls.length,
    left,
    // Not sent by this process yet (OpenCode started again since): what is in effect less what waits for the next
    // request, as the stored state says; a restore since the restart is not in it.
    leftAtLatest: state.sentLeft ?? Math.max(0, left - queued)
  }
}
