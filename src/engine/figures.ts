import type { Tally } from "../state/schema.ts"
import type { ToolIndex } from "./calls.ts"
import { contextTokens, textTokens } from "./context.ts"
import type { Waiting } from "./schedule.ts"
import type { SessionState } from "./session.ts"

/**
 * What every report shows of a session's pruning (the sidebar panel, the `/dcp` dialog, `/dcp context`, `/dcp stats`):
 * derived from the session's state as it is now, so that what a sweep, a restore, a discard or a fold did shows at
 * once, not from the next request on, and the same everywhere.
 */
export interface Figures {
  /** Prunes in effect: what the next request leaves out, those made since the latest request included. */
  readonly inEffect: Tally
  /** Old turns folded (src/engine/fold.ts): the turns, the calls their digests stand for, the tokens they save. */
  readonly folded: { readonly turns: number; readonly calls: number; readonly tokens: number }
  /** Prunes and folds made since the latest request, which the next one carries (part of `inEffect`, `folded`). */
  readonly queued: Tally
  /** Automatic prunes found and waiting for the prompt cache, and why (none pruned since). */
  readonly waiting: (Tally & { readonly why: Waiting }) | undefined
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

export const figuresOf = (state: SessionState, index: ToolIndex | undefined): Figures => {
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
      queuedCalls += record.calls.length
      queuedTokens += record.tokens
    }
  }
  const folded = { turns: state.folds.size, calls: foldedCalls, tokens: foldedTokens }
  return {
    inEffect: { calls, tokens },
    folded,
    queued: { calls: queuedCalls, tokens: queuedTokens },
    waiting: waitingNow(state),
    restored: state.restored.size,
    changedSinceSent: state.revision !== state.sentRevision,
    context: index === undefined ? undefined : contextNow(state, index, tokens + folded.tokens, queuedTokens)
  }
}

/** The automatic prunes still waiting: those the user or the model pruned since no longer count. */
const waitingNow = (state: SessionState): Figures["waiting"] => {
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
  return calls === 0 ? undefined : { calls, tokens, why: waiting.why }
}

const contextNow = (state: SessionState, index: ToolIndex, left: number, queued: number): ContextFigures => {
  const callTokens = index.callTokens
  const system = state.systemTokens ?? 0
  const tools = Math.max(0, callTokens - left)
  return {
    tokens: contextTokens(system, index.textChars, tools),
    system,
    text: textTokens(index.textChars),
    tools,
    calls: index.calls.length,
    left,
    // Not sent by this process yet (OpenCode started again since): what is in effect less what waits for the next
    // request, as the stored state says; a restore since the restart is not in it.
    leftAtLatest: state.sentLeft ?? Math.max(0, left - queued)
  }
}
