import type { CopyOf } from "../state/schema.ts"
import type { ToolCall } from "./calls.ts"
import {
  diagnosticsPlaceholder,
  inputPlaceholder,
  outputPlaceholder,
  type RecallHint,
  type Target,
  targetOf,
  targetTokens
} from "./placeholders.ts"
import type { Reason } from "./reasons.ts"

/** The request path's token estimate (the Tokenizer's `estimate`): computed once per content. */
export type Estimate = (text: string) => number

const placeholderTokens = (
  call: ToolCall,
  reason: Reason,
  target: Target,
  id: number,
  recallHint: RecallHint,
  estimate: Estimate,
  of?: CopyOf
) => {
  if (target.kind === "output") return estimate(outputPlaceholder(call, reason, id, recallHint, of))
  let tokens = target.diagnostics === true ? estimate(diagnosticsPlaceholder(call, reason, id, recallHint)) : 0
  for (const key of target.keys) tokens += estimate(inputPlaceholder(call, reason, key, id, recallHint))
  return tokens
}

// A waiting prune is weighed on every request until it is applied; its saving never changes, so it is computed once
// per call.
const savings = new WeakMap<
  ToolCall,
  { reason: Reason; id: number; recallHint: RecallHint; estimate: Estimate; tokens: number }
>()

/**
 * Tokens a prune takes out of every request: what it removes less the placeholder left in its place (estimated, like
 * every count on the request path). Zero when the call has nothing the reason replaces.
 */
export const savingOf = (
  call: ToolCall,
  reason: Reason,
  id: number,
  recallHint: RecallHint,
  estimate: Estimate,
  of?: CopyOf
): number => {
  const known = savings.get(call)
  if (
    known !== undefined && known.reason === reason && known.id === id && known.recallHint === recallHint &&
    known.estimate === estimate
  ) {
    return known.tokens
  }
  const target = targetOf(call, reason)
  if (target === undefined) return 0
  const tokens = Math.max(
    0,
    targetTokens(call, target) - placeholderTokens(call, reason, target, id, recallHint, estimate, of)
  )
  savings.set(call, { reason, id, recallHint, estimate, tokens })
  return tokens
}
