import type { ToolCall } from "../calls.ts"
import type { Protection } from "../protection.ts"
import type { Candidate } from "./candidate.ts"

export interface StaleOptions {
  /** Context tokens from which masking starts. */
  readonly trigger: number
  /** The most recent tool outputs that are never masked. */
  readonly keepRecent: number
  /** Masking happens in batches of at least this many tokens. */
  readonly clearAtLeast: number
  readonly protectedTools: ReadonlyArray<string>
}

/**
 * Observation masking: once the context passes the trigger, completed outputs older than the most recent
 * `keepRecent` calls are masked, oldest first, but only as a batch worth at least `clearAtLeast` tokens, so the
 * prompt cache is rebuilt for a real saving, not for every call that ages out of the window.
 */
export const staleOutputs = (
  calls: ReadonlyArray<ToolCall>,
  protection: Protection,
  options: StaleOptions & {
    readonly contextTokens: number
    /** Calls already pruned, restored by the user, or claimed by another rule. */
    readonly taken: (callID: string) => boolean
  }
): Array<Candidate> => {
  if (options.contextTokens < options.trigger) return []
  const found: Array<Candidate> = []
  let tokens = 0
  for (let i = 0; i < calls.length - options.keepRecent; i++) {
    const call = calls[i]!
    if (call.status !== "completed" || !call.hasTextOutput || call.compacted || call.outputTokens === 0) continue
    if (options.taken(call.callID)) continue
    if (protection.tool(call.tool, options.protectedTools) || protection.file(call) || protection.recent(call)) continue
    found.push({ callID: call.callID, reason: "staleOutputs" })
    tokens += call.outputTokens
  }
  return tokens >= options.clearAtLeast ? found : []
}
