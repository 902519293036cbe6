import type { ToolCall } from "./calls.ts"
import { targetOf, targetTokens } from "./placeholders.ts"
import type { Protection } from "./protection.ts"
import { minListedTokens, type Listed } from "./prunable.ts"

/** Why the model may not prune a call, or undefined when it may. The same rules decide the list and the tools. */
export const whyNotPrunable = (
  call: ToolCall,
  input: {
    readonly pruned: ReadonlyMap<string, unknown>
    readonly protection: Protection
    readonly protectedTools: ReadonlyArray<string>
  }
): "pruned" | "protected-tool" | "protected-file" | "recent" | "unfinished" | "empty" | undefined => {
  if (input.pruned.has(call.callID)) return "pruned"
  if (input.protection.tool(call.tool, input.protectedTools)) return "protected-tool"
  if (input.protection.file(call)) return "protected-file"
  if (input.protection.recent(call)) return "recent"
  if (call.status === "pending" || call.status === "running") return "unfinished"
  if (targetOf(call, "discard") === undefined) return "empty"
  return undefined
}

/** The calls the model is offered, in stable-ID order: prunable, and large enough to be worth a placeholder. */
export const listPrunable = (
  calls: ReadonlyArray<ToolCall>,
  idOf: (call: ToolCall) => number,
  input: Parameters<typeof whyNotPrunable>[1]
): Array<Listed> => {
  const listed: Array<Listed> = []
  for (const call of calls) {
    if (whyNotPrunable(call, input) !== undefined) continue
    const tokens = targetTokens(call, targetOf(call, "discard")!)
    if (tokens < minListedTokens) continue
    listed.push({ id: idOf(call), call, tokens })
  }
  return listed.sort((a, b) => a.id - b.id)
}

/**
 * A nudge is due when enough tool results arrived since the last prune or nudge, and enough is prunable to be worth
 * the model's attention. Otherwise the list stays silent about pruning.
 */
export const nudgeDue = (input: {
  readonly enabled: boolean
  readonly frequency: number
  readonly minTokens: number
  readonly resultsSince: number
  readonly listed: ReadonlyArray<Listed>
}): boolean =>
  input.enabled && input.resultsSince >= input.frequency &&
  input.listed.reduce((sum, entry) => sum + entry.tokens, 0) >= input.minTokens
