import type { ToolCall } from "../calls.ts"
import type { Protection } from "../protection.ts"

/**
 * Purge-errors: a failed call's input (a rejected edit, a malformed command) stops mattering a few turns later; its
 * error text is what the model learns from, so the error stays and only the large string inputs go.
 */

/** String inputs smaller than this stay: a placeholder would cost about as much as it removes. */
export const minInputTokens = 24

export interface PurgeOptions {
  readonly turns: number
  readonly currentTurn: number
  readonly protectedTools: ReadonlyArray<string>
}

/** Whether a call failed with an input worth purging, and fixed protection (tools, files) leaves it to the rule. */
export const isPurgeable = (call: ToolCall, prunable: (call: ToolCall) => boolean): boolean => {
  if (call.status !== "error") return false
  let large = false
  for (const key in call.inputTokens) {
    if (call.inputTokens[key]! >= minInputTokens) {
      large = true
      break
    }
  }
  return large && prunable(call)
}

export const purgePrunable = (protection: Protection, protectedTools: ReadonlyArray<string>) => (call: ToolCall) =>
  !protection.tool(call.tool, protectedTools) && !protection.file(call)

/** Whether a purgeable call is old enough now, and not turn-protected. */
export const purgeDue = (call: ToolCall, protection: Protection, options: PurgeOptions): boolean =>
  options.currentTurn - call.turn >= options.turns && !protection.recent(call)
