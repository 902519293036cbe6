import type { ToolCall } from "../calls.ts"
import type { Protection } from "../protection.ts"
import { type Candidate, insertSorted } from "./candidate.ts"

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

/**
 * Calls with the same tool and the same normalised input return the same thing: only the newest is kept, every
 * older copy is pruned. Only completed calls with text output count as copies.
 */
export const deduplication = (
  calls: ReadonlyArray<ToolCall>,
  protection: Protection,
  protectedTools: ReadonlyArray<string>
): Array<Candidate> => {
  const state = shadowing()
  const prunable = dedupPrunable(protection, protectedTools)
  for (let i = 0; i < calls.length; i++) shadow(state, calls, i, prunable)
  const found: Array<Candidate> = []
  for (const position of state.shadowed) {
    const call = calls[position]!
    if (!protection.recent(call)) found.push({ callID: call.callID, reason: "deduplication" })
  }
  return found
}
