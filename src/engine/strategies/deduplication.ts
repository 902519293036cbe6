import type { ToolCall } from "../calls.ts"
import type { Protection } from "../protection.ts"
import { insertSorted } from "../../data/sorted.ts"

/**
 * Deduplication: calls with the same tool and the same normalised input return the same thing, so only the newest is
 * kept and every older copy is pruned. Only completed calls with text output count as copies.
 */

/**
 * What deduplication knows about a view, built call by call in view order, so a request that only adds calls only
 * looks at those.
 */
export interface Shadowing {
  /** Signature -> position of the newest completed text output with it. */
  readonly newest: Map<string, number>
  /** Positions of calls a newer identical call shadows and that no fixed protection keeps, ascending. */
  readonly shadowed: Array<number>
}

export const shadowing = (): Shadowing => ({ newest: new Map(), shadowed: [] })

/**
 * Adds the call at `position` (positions come in ascending order). Only completed calls with text output count as
 * copies; `prunable` says whether fixed protection (tools, files) leaves a call to the rule.
 */
export const shadow = (
  state: Shadowing,
  calls: ReadonlyArray<ToolCall>,
  position: number,
  prunable: (call: ToolCall) => boolean
): void => {
  const call = calls[position]!
  if (call.status !== "completed" || !call.hasTextOutput || call.compacted) return
  const previous = state.newest.get(call.signature)
  state.newest.set(call.signature, position)
  if (previous !== undefined && prunable(calls[previous]!)) insertSorted(state.shadowed, previous)
}

/** The fixed protection deduplication honours. */
export const dedupPrunable = (protection: Protection, protectedTools: ReadonlyArray<string>) => (call: ToolCall) =>
  !protection.tool(call.tool, protectedTools) && !protection.file(call)
