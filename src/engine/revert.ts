import type { PluginConfig } from "../config/schema.ts"
import type { PruneRecord } from "../state/schema.ts"
import type { Rules } from "./automatic.ts"
import type { ToolCall } from "./calls.ts"
import type { Protection } from "./protection.ts"
import { purgeDue } from "./strategies/purgeErrors.ts"
import { staleAmong } from "./strategies/staleOutputs.ts"

/**
 * OpenCode's undo (`/undo`, `session.revert`) takes the newest messages out of the session, and the next request sends
 * the history as it was before them. The prunes made in what was taken out go with it, as the user expects of an undo:
 *
 * - the model's discard or extract whose call was in a removed message;
 * - an automatic rule's prune that the rule would no longer make: what it stood on was removed (the newer duplicate,
 *   the later read of a written file, the newer calls that made an output stale or a failed call old).
 *
 * An automatic prune the remaining history still calls for stays: the requests before the undo sent it, so the
 * provider's cache holds the history with it. So do repeats (their earlier copy comes before them) and the user's
 * sweeps, which `/dcp restore` undoes.
 */
export interface RevertInput {
  /** The view's calls, oldest first. */
  readonly calls: ReadonlyArray<ToolCall>
  /**
   * The automatic rules built from the whole view, their lists still holding the pruned calls; none when no undo was
   * seen but one may have happened unseen (OpenCode restarted): automatic prunes then stand, the model's are checked.
   */
  readonly rules: Rules | undefined
  readonly pruned: ReadonlyMap<string, PruneRecord>
  readonly protection: Protection
  readonly strategies: PluginConfig["strategies"]
  readonly currentTurn: number
  /** Whether a message is still in the view. */
  readonly present: (messageID: string) => boolean
}

/** The calls in the view whose prune no longer stands, oldest first. */
export const unfounded = (input: RevertInput): Array<string> => {
  const { calls, pruned, protection, strategies } = input
  const rules = input.rules ?? judgeNothing
  const shadowed = new Set(rules.shadowing?.shadowed)
  const superseded = new Set(rules.superseding?.superseded)
  const failed = new Set(rules.failed)
  const stale = rules.maskable === undefined ? undefined : staleNow(input, rules.maskable)
  const found: Array<string> = []
  for (const call of calls) {
    const record = pruned.get(call.callID)
    if (record === undefined) continue
    const stands = record.message !== undefined
      ? input.present(record.message)
      : record.reason === "deduplication"
      ? rules.shadowing === undefined || shadowed.has(call.position) && !protection.recent(call)
      : record.reason === "supersedeWrites"
      ? rules.superseding === undefined || superseded.has(call.position) && !protection.recent(call)
      : record.reason === "purgeErrors"
      ? rules.failed === undefined || failed.has(call.position) && purgeDue(call, protection, {
            turns: strategies.purgeErrors.turns,
            currentTurn: input.currentTurn,
            protectedTools: strategies.purgeErrors.protectedTools
          })
      : record.reason === "staleOutputs"
      ? stale === undefined || stale.has(call.callID)
      : true
    if (!stands) found.push(call.callID)
  }
  return found
}

/** No automatic rule to judge by: their prunes stand. */
const judgeNothing: Pick<Rules, "shadowing" | "superseding" | "failed" | "maskable"> = {
  shadowing: undefined,
  superseding: undefined,
  failed: undefined,
  maskable: undefined
}

/**
 * The calls masking would take now, whatever the context's size or the batch's: an applied mask is not weighed again.
 * Masked outputs count as sent in full, so that a file's newest copy is kept even when it was masked; other prunes
 * leave no copy.
 */
const staleNow = (input: RevertInput, maskable: ReadonlyArray<number>): ReadonlySet<string> => {
  const unpruned = maskable.filter((position) => {
    const reason = input.pruned.get(input.calls[position]!.callID)?.reason
    return reason === undefined || reason === "staleOutputs"
  })
  const candidates = staleAmong(input.calls, unpruned, input.protection, {
    ...input.strategies.staleOutputs,
    contextTokens: Infinity,
    clearAtLeast: 0,
    taken: () => false
  })
  return new Set(candidates.map(({ callID }) => callID))
}
