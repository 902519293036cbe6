import type { ToolCall } from "../calls.ts"
import type { Protection } from "../protection.ts"
import type { Candidate } from "./candidate.ts"

/** String inputs smaller than this stay: a placeholder would cost about as much as it removes. */
export const minInputTokens = 24

/**
 * A failed call's input (a rejected edit, a malformed command) stops mattering a few turns later; its error text
 * is what the model learns from, so the error stays and only the large string inputs go.
 */
export const purgeErrors = (
  calls: ReadonlyArray<ToolCall>,
  protection: Protection,
  options: { readonly turns: number; readonly currentTurn: number; readonly protectedTools: ReadonlyArray<string> }
): Array<Candidate> => {
  const found: Array<Candidate> = []
  for (const call of calls) {
    if (call.status !== "error") continue
    if (options.currentTurn - call.turn < options.turns) continue
    if (!Object.values(call.inputTokens).some((tokens) => tokens >= minInputTokens)) continue
    if (protection.tool(call.tool, options.protectedTools) || protection.file(call) || protection.recent(call)) continue
    found.push({ callID: call.callID, reason: "purgeErrors" })
  }
  return found
}
