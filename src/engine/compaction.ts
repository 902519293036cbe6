import type { PricingKind } from "../pricing/profiles.ts"

/**
 * Compaction between turns. What a long session costs is set less by how fast its context grows than by how large it
 * grows before it is compacted: OpenCode alone compacts when a request fills the model's usable window, so its
 * requests carry from a summary up to nearly the whole window, half of it on average. Pruning slows the growth, but a
 * session that goes on still reaches the window, later, and carries as much on average from then on. So when a turn
 * ends with the context at `atTokens` or more, the plugin asks OpenCode to compact the session, as `/compact` does,
 * before the user's next prompt: the requests after it start again from the summary. With pruning, a session reaches
 * `atTokens` less often than OpenCode alone fills the window, so it is compacted less often than without the plugin
 * (BENCHMARKS.md, "The plugin compacts between turns", at the top of "Results").
 */

export interface TurnEnd {
  readonly enabled: boolean
  /**
   * How the provider bills input. Only a per-token bill gets smaller with the context: billed per request, a
   * compaction is one more request to pay for; with no cache cost (a local server), it saves nothing but time.
   */
  readonly pricing: PricingKind
  /** The threshold (`thresholdFor`). */
  readonly atTokens: number
  /** OpenCode's own `compaction.auto`: false, and the user wants no compaction they did not ask for. */
  readonly hostAuto: boolean | undefined
  readonly isSubAgent: boolean
  /** Tokens of the turn's last request, as the plugin sent it; undefined when none was seen since the last ask. */
  readonly lastContext: number | undefined
  /** The model of the session's latest request. */
  readonly model: { readonly providerID: string; readonly modelID: string } | undefined
}

/**
 * The tokens at which a turn's end compacts: `atTokens` itself, or for "auto" 30% of the window OpenCode compacts at
 * (the model's window less what it reserves for the answer, its output limit up to 32,000 tokens), and at least
 * 25,000: 50,400 tokens of a 200k window, chosen by measurement (BENCHMARKS.md). Relative to the window so that a model with a larger one, whose
 * user chose to keep more history, is compacted about as rarely against OpenCode alone as a 200k one is.
 */
export const thresholdFor = (
  atTokens: "auto" | number,
  model: { readonly contextLimit: number | undefined; readonly outputLimit: number | undefined } | undefined
): number => {
  if (atTokens !== "auto") return atTokens
  const window = model?.contextLimit
  if (window === undefined) return 50_000
  const share = Math.round(0.3 * Math.max(0, window - Math.min(model?.outputLimit ?? 32_000, 32_000)))
  return Math.max(leastWorthCompacting, share)
}

/**
 * OpenCode keeps the newest messages that fit in ~15,000 tokens after a summary of ~2,000: a context much smaller than
 * this would come out of a compaction little smaller, or larger.
 */
const leastWorthCompacting = 25_000

export type Verdict =
  | { readonly compact: true; readonly model: { readonly providerID: string; readonly modelID: string } }
  | { readonly compact: false }

/**
 * Whether a session whose turn just ended is compacted now. Sub-agents' sessions are not: the `task` tool that runs
 * one returns its last answer, and the session rarely goes on.
 */
export const compactionAtTurnEnd = (turn: TurnEnd): Verdict =>
  turn.enabled && (turn.pricing === "anthropic" || turn.pricing === "openai") && turn.hostAuto !== false &&
    !turn.isSubAgent && turn.model !== undefined &&
    turn.lastContext !== undefined && turn.lastContext >= turn.atTokens
    ? { compact: true, model: { providerID: turn.model.providerID, modelID: turn.model.modelID } }
    : { compact: false }

/** Why the plugin compacts a session, as a note and a toast say it: the figure OpenCode shows, and the setting. */
export const compactionReason = (tokens: number, threshold: number): string =>
  `its context had reached ${
    tokens.toLocaleString("en-US")
  } tokens as OpenCode counts them, over compaction.atTokens ` +
  `(${threshold.toLocaleString("en-US")}) in dcp.jsonc; compaction.enabled: false turns this off`
