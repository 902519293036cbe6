import type { ToolCall } from "../engine/calls.ts"
import { targetOf } from "../engine/placeholders.ts"
import type { Protection } from "../engine/protection.ts"

/**
 * What `/dcp sweep` prunes: every finished call since the user's latest message, or the last `count` calls, that
 * is not already pruned, protected (always-protected tools, `commands.protectedTools`, protected files) or empty.
 * Turn protection does not apply: the user asked for this explicitly.
 */
export const sweepSelection = (input: {
  readonly calls: ReadonlyArray<ToolCall>
  readonly lastUserMessage: number
  readonly count: number | undefined
  readonly pruned: ReadonlyMap<string, unknown>
  readonly protection: Protection
  readonly protectedTools: ReadonlyArray<string>
}): Array<ToolCall> => {
  const eligible = input.calls.filter((call) =>
    (call.status === "completed" || call.status === "error") &&
    !input.pruned.has(call.callID) &&
    !input.protection.tool(call.tool, input.protectedTools) &&
    !input.protection.file(call) &&
    targetOf(call, "sweep") !== undefined
  )
  return input.count === undefined
    ? eligible.filter((call) => call.messageIndex > input.lastUserMessage)
    : eligible.slice(Math.max(0, eligible.length - input.count))
}
