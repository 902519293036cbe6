/**
 * Compaction between turns. What a long session costs is set less by how fast its context grows than by how large it
 * grows before it is compacted: OpenCode alone compacts when a request fills the model's usable window, so its
 * requests carry from a summary up to nearly the whole window, half of it on average. Pruning slows the growth, but a
 * session that goes on still reaches the window, later, and carries as much on average from then on. So when a turn
 * ends with the context at `atTokens` or more, the plugin asks OpenCode to compact the session, as `/compact` does,
 * before the user's next prompt: the requests after it start again from the summary. With pruning, a session reaches
 * `atTokens` less often than OpenCode alone fills the window, so it is compacted less often than without the plugin
 * (BENCHMARKS.md, "Compaction between turns").
 */

export interface TurnEnd {
  readonly enabled: boolean
  readonly atTokens: number
  /** OpenCode's own `compaction.auto`: false, and the user wants no compaction they did not ask for. */
  readonly hostAuto: boolean | undefined
  readonly isSubAgent: boolean
  /** Tokens of the turn's last request, as the plugin sent it; undefined when none was seen since the last ask. */
  readonly lastContext: number | undefined
  /** The model of the session's latest request. */
  readonly model: { readonly providerID: string; readonly modelID: string } | undefined
}

export type Verdict =
  | { readonly compact: true; readonly model: { readonly providerID: string; readonly modelID: string } }
  | { readonly compact: false }

/**
 * Whether a session whose turn just ended is compacted now. Sub-agents' sessions are not: the `task` tool that runs
 * one returns its last answer, and the session rarely goes on.
 */
export const compactionAtTurnEnd = (turn: TurnEnd): Verdict =>
  turn.enabled && turn.hostAuto !== false && !turn.isSubAgent && turn.model !== undefined &&
    turn.lastContext !== undefined && turn.lastContext >= turn.atTokens
    ? { compact: true, model: { providerID: turn.model.providerID, modelID: turn.model.modelID } }
    : { compact: false }
