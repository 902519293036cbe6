import type { PluginConfig } from "../config/schema.ts"
import type { ToolCall } from "./calls.ts"
import { minTaggedTokens } from "./listing.ts"
import type { Protection } from "./protection.ts"
import type { Candidate } from "./strategies/candidate.ts"
import { dedupPrunable, shadow, type Shadowing, shadowing } from "./strategies/deduplication.ts"
import { isPurgeable, purgeDue, purgePrunable } from "./strategies/purgeErrors.ts"
import { type Copy, repeat, type Repeating, repeating, type RepeatOptions } from "./strategies/repeats.ts"
import { isMaskable, staleAmong, stalePrunable } from "./strategies/staleOutputs.ts"
import { supersede, supersedePrunable, type Superseding, superseding } from "./strategies/supersedeWrites.ts"

type Strategies = PluginConfig["strategies"]

/**
 * What the automatic rules know about a view, built call by call in view order: a request whose view only adds
 * calls updates it with those calls alone. Lists hold positions in the view, ascending. Calls found pruned or
 * restored are dropped from the lists as they are met (they never become candidates again while the view lasts).
 */
export interface Rules {
  readonly repeating: Repeating | undefined
  readonly shadowing: Shadowing | undefined
  readonly superseding: Superseding | undefined
  /** Failed calls with large inputs (purge-errors). */
  readonly failed: Array<number> | undefined
  /** Calls with an output masking could replace (stale outputs). */
  readonly maskable: Array<number> | undefined
  readonly prunable: {
    readonly repeat: (call: ToolCall) => boolean
    readonly dedup: (call: ToolCall) => boolean
    readonly supersede: (call: ToolCall) => boolean
    readonly purge: (call: ToolCall) => boolean
    readonly stale: (call: ToolCall) => boolean
  }
}

/** Empty rule state for the enabled strategies. Protection's tool and file rules must not change while it is used. */
export const emptyRules = (strategies: Strategies, protection: Protection): Rules => ({
  repeating: strategies.repeats.enabled ? repeating() : undefined,
  shadowing: strategies.deduplication.enabled ? shadowing() : undefined,
  superseding: strategies.supersedeWrites.enabled ? superseding() : undefined,
  failed: strategies.purgeErrors.enabled ? [] : undefined,
  maskable: strategies.staleOutputs.enabled ? [] : undefined,
  prunable: {
    repeat: (call) => call.outputTokens >= minTaggedTokens && dedupPrunable(protection, [])(call),
    dedup: dedupPrunable(protection, strategies.deduplication.protectedTools),
    supersede: supersedePrunable(protection),
    purge: purgePrunable(protection, strategies.purgeErrors.protectedTools),
    stale: stalePrunable(protection, strategies.staleOutputs.protectedTools)
  }
})

/** What the repeats rule needs to know about the request being built (see RepeatOptions), and the call's own record. */
export interface AddContext extends Omit<RepeatOptions, "prunable"> {
  /** The call is already pruned as a repeat. */
  readonly repeated: boolean
}

/**
 * Adds the call at `position`; positions must come in ascending order. Returns the earlier copy the call repeats,
 * when it is sent for the first time and is a repeat: the request path prunes it at once. A repeat never counts as a
 * newer copy of what it repeats, so deduplication and supersede-writes keep the copy it points to.
 */
export const addToRules = (
  rules: Rules,
  calls: ReadonlyArray<ToolCall>,
  position: number,
  context: AddContext
): Copy | undefined => {
  const call = calls[position]!
  const copy = rules.repeating === undefined || context.repeated
    ? undefined
    : repeat(rules.repeating, calls, position, { ...context, prunable: rules.prunable.repeat })
  if (copy === undefined && !context.repeated) {
    if (rules.shadowing !== undefined) shadow(rules.shadowing, calls, position, rules.prunable.dedup)
    if (rules.superseding !== undefined) supersede(rules.superseding, calls, position, rules.prunable.supersede)
  }
  if (rules.failed !== undefined && isPurgeable(call, rules.prunable.purge)) rules.failed.push(position)
  if (rules.maskable !== undefined && isMaskable(call, rules.prunable.stale)) rules.maskable.push(position)
  return copy
}

export interface CandidateInput {
  readonly calls: ReadonlyArray<ToolCall>
  readonly pruned: ReadonlySet<string> | ReadonlyMap<string, unknown>
  /** Calls the user restored: never pruned again automatically. */
  readonly restored?: ReadonlySet<string>
  readonly protection: Protection
  readonly strategies: Strategies
  readonly currentTurn: number
  /** The estimated size of this request, which decides whether stale outputs are masked. */
  readonly contextTokens?: number
}

/**
 * What the enabled automatic rules would prune in the current view, one candidate per call (the first rule to
 * claim a call names the reason), skipping calls already pruned or restored by the user. Candidates come rule by
 * rule, each rule's in view order.
 */
export const candidatesFrom = (rules: Rules, input: CandidateInput): Array<Candidate> => {
  const { calls, protection, strategies } = input
  const gone = (callID: string) => input.pruned.has(callID) || input.restored?.has(callID) === true
  const found: Array<Candidate> = []
  let claimed: Set<string> | undefined
  const take = (position: number, reason: Candidate["reason"]) => {
    const callID = calls[position]!.callID
    if (claimed?.has(callID) === true) return
    ;(claimed ??= new Set()).add(callID)
    found.push({ callID, reason })
  }
  if (rules.shadowing !== undefined) {
    for (const position of forgetGone(rules.shadowing.shadowed, calls, gone)) {
      if (!protection.recent(calls[position]!)) take(position, "deduplication")
    }
  }
  if (rules.superseding !== undefined) {
    for (const position of forgetGone(rules.superseding.superseded, calls, gone)) {
      if (!protection.recent(calls[position]!)) take(position, "supersedeWrites")
    }
  }
  if (rules.failed !== undefined) {
    const options = {
      turns: strategies.purgeErrors.turns,
      currentTurn: input.currentTurn,
      protectedTools: strategies.purgeErrors.protectedTools
    }
    for (const position of forgetGone(rules.failed, calls, gone)) {
      if (purgeDue(calls[position]!, protection, options)) take(position, "purgeErrors")
    }
  }
  if (rules.maskable !== undefined) {
    const stale = staleAmong(calls, forgetGone(rules.maskable, calls, gone), protection, {
      ...strategies.staleOutputs,
      contextTokens: input.contextTokens ?? 0,
      taken: (callID) => claimed?.has(callID) === true
    })
    for (const candidate of stale) found.push(candidate)
  }
  return found
}

/**
 * The position of the oldest call an automatic rule has found, or may still find, something to prune in (worth at
 * least a token under the rule that claims it, in `candidatesFrom`'s order: `worth`), among calls not pruned or
 * restored; the number of calls if there is none. What comes before it stays as it is sent now, unless the model or
 * the user prunes it, or a later call makes an earlier one a duplicate. Read after `candidatesFrom`, whose pass keeps
 * the lists short.
 */
export const openFrom = (
  rules: Rules,
  calls: ReadonlyArray<ToolCall>,
  gone: (callID: string) => boolean,
  worth: (call: ToolCall, reason: Candidate["reason"]) => boolean
): number => {
  let first = calls.length
  const claimed = new Set<number>()
  const claim = (positions: ReadonlyArray<number> | undefined, reason: Candidate["reason"]) => {
    for (const position of positions ?? []) {
      const call = calls[position]!
      if (claimed.has(position) || gone(call.callID)) continue
      claimed.add(position)
      if (position < first && worth(call, reason)) first = position
    }
  }
  claim(rules.shadowing?.shadowed, "deduplication")
  claim(rules.superseding?.superseded, "supersedeWrites")
  claim(rules.failed, "purgeErrors")
  for (const position of rules.maskable ?? []) {
    if (position >= first) break
    const call = calls[position]!
    if (claimed.has(position) || gone(call.callID) || !worth(call, "staleOutputs")) continue
    first = position
  }
  return first
}

/** Drops, in place, the positions of calls that are pruned or restored; returns the list. */
const forgetGone = (
  positions: Array<number>,
  calls: ReadonlyArray<ToolCall>,
  gone: (callID: string) => boolean
): Array<number> => {
  let kept = 0
  for (let i = 0; i < positions.length; i++) {
    const position = positions[i]!
    if (gone(calls[position]!.callID)) continue
    positions[kept++] = position
  }
  positions.length = kept
  return positions
}
