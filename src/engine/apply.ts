import { Predicate } from "effect"
import type { ToolCall } from "./calls.ts"
import { type Handle, inputPlaceholder, outputPlaceholder, type Target, targetOf } from "./placeholders.ts"
import type { Reason } from "./strategies/candidate.ts"

export interface AppliedPrune {
  readonly call: ToolCall
  readonly reason: Reason
  readonly id: number
}

/**
 * Replaces the pruned content of each call in `messages`, in place (OpenCode reads the array it passed in). Only
 * `state.output` or some `state.input` values change, and only on a fresh `state` object, so nothing shared with
 * the stored session is touched. Returns how many parts were changed.
 */
export const applyPrunes = (
  messages: ReadonlyArray<unknown>,
  prunes: Iterable<AppliedPrune>,
  handle: Handle
): number => {
  let changed = 0
  for (const { call, id, reason } of prunes) {
    const target = targetOf(call, reason)
    if (target === undefined) continue
    const part = partAt(messages, call)
    if (part === undefined) continue
    part.state = replaced(part.state, call, target, reason, id, handle)
    changed++
  }
  return changed
}

const partAt = (messages: ReadonlyArray<unknown>, call: ToolCall): { state: Record<string, unknown> } | undefined => {
  const message = messages[call.messageIndex]
  const parts = Predicate.isObject(message) && Array.isArray(message.parts) ? message.parts : undefined
  const part: unknown = parts?.[call.partIndex]
  return Predicate.isObject(part) && part.callID === call.callID && Predicate.isObject(part.state)
    ? (part as { state: Record<string, unknown> })
    : undefined
}

const replaced = (
  state: Record<string, unknown>,
  call: ToolCall,
  target: Target,
  reason: Reason,
  id: number,
  handle: Handle
): Record<string, unknown> => {
  if (target.kind === "output") {
    const { attachments: _attachments, ...rest } = state
    return { ...rest, output: outputPlaceholder(call, reason, id, handle) }
  }
  const input = Predicate.isObject(state.input) ? { ...(state.input as Record<string, unknown>) } : {}
  for (const key of target.keys) {
    if (key in input) input[key] = inputPlaceholder(call, reason, key, id, handle)
  }
  return { ...state, input }
}
