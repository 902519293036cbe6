import type { ToolCall } from "./calls.ts"
import { formatTokens, targetOf, targetTokens } from "./placeholders.ts"
import type { Protection } from "./protection.ts"

/**
 * Which calls the model may prune with discard and extract: one set of rules for the ID tags on what is sent, the
 * tools' validation and the nudge.
 */

/** Outputs smaller than this carry no tag and cannot be discarded: a placeholder would save less than it costs. */
export const minTaggedTokens = 100

export type NotPrunable = "pruned" | "protected-tool" | "protected-file" | "recent" | "unfinished" | "empty"

/**
 * The tokens a discard of the call would free, when the rules that never change for a call allow it (its tool and
 * file are not protected, it finished, it has something worth replacing): such a call carries its stable ID from its
 * first send. Undefined otherwise.
 */
export const taggable = (
  call: ToolCall,
  protection: Protection,
  protectedTools: ReadonlyArray<string>
): number | undefined =>
  fixedReason(call, protection, protectedTools) === undefined
    ? targetTokens(call, targetOf(call, "discard")!)
    : undefined

const fixedReason = (
  call: ToolCall,
  protection: Protection,
  protectedTools: ReadonlyArray<string>
): NotPrunable | undefined => {
  if (protection.tool(call.tool, protectedTools)) return "protected-tool"
  if (protection.file(call)) return "protected-file"
  if (call.status === "pending" || call.status === "running") return "unfinished"
  const target = targetOf(call, "discard")
  if (target === undefined || targetTokens(call, target) < minTaggedTokens) return "empty"
  return undefined
}

interface Now {
  readonly pruned: ReadonlyMap<string, unknown>
  readonly protection: Protection
}

/** The rules that change as the session goes on: a call gets pruned, or ages out of turn protection. */
const changingReason = (call: ToolCall, now: Now): "pruned" | "recent" | undefined =>
  now.pruned.has(call.callID) ? "pruned" : now.protection.recent(call) ? "recent" : undefined

/** Why the model may not prune a call now, or undefined when it may. */
export const whyNotPrunable = (
  call: ToolCall,
  input: Now & { readonly protectedTools: ReadonlyArray<string> }
): NotPrunable | undefined => {
  const changing = changingReason(call, input)
  if (changing === "pruned") return changing
  return fixedReason(call, input.protection, input.protectedTools) ?? changing
}

/**
 * Whether the model may prune a `taggable` call now: `whyNotPrunable` for a call the rules that never change already
 * allow, without checking them again.
 */
export const prunableNow = (call: ToolCall, now: Now): boolean => changingReason(call, now) === undefined

/**
 * The nudge, sent in the trailing note of the request where it is due: neutral, quantified, naming the largest
 * outputs the model may prune. Due when the tool results since the model's last prune reach a multiple of
 * `frequency` on this request (so a request sent again unchanged gets the same bytes, and a nudge comes at most once
 * per interval), and at least `minTokens` could go.
 */
export const nudge = (input: {
  readonly enabled: boolean
  readonly frequency: number
  readonly minTokens: number
  /** Results since the last prune by the model, including those this request adds (`arrived`). */
  readonly resultsSince: number
  readonly arrived: number
  /** The calls the model may prune now, with the tokens each would free. */
  readonly prunable: () => ReadonlyArray<{ readonly id: number; readonly tokens: number }>
  /** Whether discarding that many tokens now is worth a cache rebuild. */
  readonly worth: (tokens: number) => boolean
}): string | undefined => {
  if (!input.enabled || input.arrived === 0) return undefined
  const { frequency, resultsSince } = input
  if (Math.floor(resultsSince / frequency) <= Math.floor((resultsSince - input.arrived) / frequency)) return undefined
  const prunable = input.prunable()
  const tokens = prunable.reduce((sum, entry) => sum + entry.tokens, 0)
  if (tokens < input.minTokens || !input.worth(tokens)) return undefined
  const largest = [...prunable].sort((a, b) => b.tokens - a.tokens).slice(0, 6).map((entry) => entry.id).sort((a, b) =>
    a - b
  )
  const more = prunable.length > largest.length ? ", ..." : ""
  return `[Context note, not from the user: ${
    formatTokens(tokens)
  } tokens in ${prunable.length} earlier tool outputs ` +
    `could be discarded or extracted if you no longer need them (largest: ids ${largest.join(", ")}${more}).]`
}
