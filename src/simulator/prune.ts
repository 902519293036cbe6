/**
 * OpenCode 1.18.33's own pruning (`compaction.prune: true`), run at the end of each turn on the stored history:
 * outputs of completed calls older than the last two turns and the newest 40,000 tokens of tool output are cleared,
 * once at least 20,000 tokens can go; a cleared output is sent as `[Old tool result content cleared]` from then on.
 */
import type { Msg } from "../host/schema.ts"
import { estimate, isSummary } from "./opencode.ts"

const pruneProtect = 40_000
const pruneMinimum = 20_000
const pruneProtectedTools: ReadonlySet<string> = new Set(["skill"])

/** Adds the calls it clears to `cleared` (call ID -> when). */
export const openCodePrune = (history: ReadonlyArray<Msg>, cleared: Map<string, number>, time: number) => {
  let total = 0
  let pruned = 0
  let users = 0
  const found: Array<string> = []
  scan: for (let m = history.length - 1; m >= 0; m--) {
    const message = history[m]!
    if (message.info.role === "user") users++
    if (users < 2) continue
    if (isSummary(message)) break
    for (let p = message.parts.length - 1; p >= 0; p--) {
      const part = message.parts[p]!
      if (part.type !== "tool" || part.state?.status !== "completed" || pruneProtectedTools.has(part.tool)) continue
      if (cleared.has(part.callID)) break scan
      const tokens = estimate(typeof part.state.output === "string" ? part.state.output : "")
      total += tokens
      if (total <= pruneProtect) continue
      pruned += tokens
      found.push(part.callID)
    }
  }
  if (pruned > pruneMinimum) { for (const callID of found) cleared.set(callID, time) }
}
