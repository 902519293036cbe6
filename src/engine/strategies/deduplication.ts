import type { ToolCall } from "../calls.ts"
import type { Protection } from "../protection.ts"
import type { Candidate } from "./candidate.ts"

/**
 * Calls with the same tool and the same normalised input return the same thing: only the newest is kept, every
 * older copy is pruned. Only completed calls with text output count as copies.
 */
export const deduplication = (
  calls: ReadonlyArray<ToolCall>,
  protection: Protection,
  protectedTools: ReadonlyArray<string>
): Array<Candidate> => {
  const newer = new Set<string>()
  const found: Array<Candidate> = []
  for (let i = calls.length - 1; i >= 0; i--) {
    const call = calls[i]!
    if (call.status !== "completed" || !call.hasTextOutput || call.compacted) continue
    if (!newer.has(call.signature)) {
      newer.add(call.signature)
      continue
    }
    if (protection.tool(call.tool, protectedTools) || protection.file(call) || protection.recent(call)) continue
    found.push({ callID: call.callID, reason: "deduplication" })
  }
  return found.reverse()
}
