import { formatTokens } from "./placeholders.ts"
import type { Reason } from "./strategies/candidate.ts"

/** One pruned call, as reported to the user. */
export interface PrunedCall {
  readonly id: number
  readonly tool: string
  readonly keyParameter: string
  readonly reason: Reason
  readonly tokens: number
  readonly distillation?: string | undefined
}

export type NotificationMode = "off" | "minimal" | "detailed"

const reasonNames: Readonly<Record<Reason, string>> = {
  repeat: "repeat",
  deduplication: "duplicate",
  supersedeWrites: "superseded write",
  purgeErrors: "failed call input",
  staleOutputs: "stale output",
  discard: "discarded",
  extract: "extracted",
  sweep: "swept"
}

export const reasonName = (reason: Reason): string => reasonNames[reason]

/**
 * The note shown after an agent run (or a command) that pruned something: one line with the tokens saved now and
 * in the session, then, in detailed mode, one line per call with paths relative to the project.
 */
export const formatNote = (
  calls: ReadonlyArray<PrunedCall>,
  options: { readonly mode: NotificationMode; readonly sessionTokens: number; readonly showDistillation: boolean }
): string | undefined => {
  if (options.mode === "off" || calls.length === 0) return undefined
  const tokens = calls.reduce((sum, call) => sum + call.tokens, 0)
  const reasons = new Map<Reason, number>()
  for (const call of calls) reasons.set(call.reason, (reasons.get(call.reason) ?? 0) + 1)
  const why = [...reasons].map(([reason, count]) => `${count} ${reasonName(reason)}`).join(", ")
  const plural = calls.length === 1 ? "call" : "calls"
  const head = `Context pruned: ${formatTokens(tokens)} tokens from ${calls.length} ${plural} (${why}); ` +
    `${formatTokens(options.sessionTokens)} saved in this session.`
  if (options.mode === "minimal") return head
  const lines = [head]
  for (const call of calls) {
    const what = call.keyParameter === "" ? call.tool : `${call.tool} ${call.keyParameter}`
    lines.push(`  ${call.id}  ${what}  ${reasonName(call.reason)}, ${formatTokens(call.tokens)}`)
    if (options.showDistillation && call.distillation !== undefined) lines.push(`      ↳ ${call.distillation}`)
  }
  return lines.join("\n")
}
