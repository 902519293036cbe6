import type { PluginConfig } from "../config/schema.ts"
import type { ToolCall } from "./calls.ts"
import type { Protection } from "./protection.ts"
import type { Candidate } from "./strategies/candidate.ts"
import { deduplication } from "./strategies/deduplication.ts"
import { purgeErrors } from "./strategies/purgeErrors.ts"
import { staleOutputs } from "./strategies/staleOutputs.ts"
import { supersedeWrites } from "./strategies/supersedeWrites.ts"

/**
 * What the enabled automatic rules would prune in the current view, one candidate per call (the first rule to
 * claim a call names the reason), skipping calls already pruned or restored by the user. Pure: no model call,
 * no state change.
 */
export const automaticCandidates = (input: {
  readonly calls: ReadonlyArray<ToolCall>
  readonly pruned: ReadonlySet<string> | ReadonlyMap<string, unknown>
  /** Calls the user restored: never pruned again automatically. */
  readonly restored?: ReadonlySet<string>
  readonly protection: Protection
  readonly strategies: PluginConfig["strategies"]
  readonly currentTurn: number
  /** The estimated size of this request, which decides whether stale outputs are masked. */
  readonly contextTokens?: number
}): Array<Candidate> => {
  const { calls, protection, strategies } = input
  const found: Array<Candidate> = []
  const claimed = new Set<string>()
  const take = (candidates: ReadonlyArray<Candidate>) => {
    for (const candidate of candidates) {
      if (claimed.has(candidate.callID) || input.pruned.has(candidate.callID)) continue
      if (input.restored?.has(candidate.callID) === true) continue
      claimed.add(candidate.callID)
      found.push(candidate)
    }
  }
  if (strategies.deduplication.enabled) take(deduplication(calls, protection, strategies.deduplication.protectedTools))
  if (strategies.supersedeWrites.enabled) take(supersedeWrites(calls, protection))
  if (strategies.purgeErrors.enabled) {
    take(purgeErrors(calls, protection, {
      turns: strategies.purgeErrors.turns,
      currentTurn: input.currentTurn,
      protectedTools: strategies.purgeErrors.protectedTools
    }))
  }
  if (strategies.staleOutputs.enabled) {
    take(staleOutputs(calls, protection, {
      ...strategies.staleOutputs,
      contextTokens: input.contextTokens ?? 0,
      taken: (callID) => claimed.has(callID) || input.pruned.has(callID) || input.restored?.has(callID) === true
    }))
  }
  return found
}

