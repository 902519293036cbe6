import { Predicate } from "effect"
import type { ToolCall } from "./calls.ts"
import { type Handle, inputPlaceholder, outputPlaceholder, type Target, targetOf } from "./placeholders.ts"
import type { Reason } from "./strategies/candidate.ts"

export interface AppliedPrune {
  readonly call: ToolCall
  readonly reason: Reason
  readonly id: number
}

/** A prune's replacement texts for one call. */
export interface Rendered {
  readonly reason: Reason
  readonly id: number
  readonly handle: Handle
  readonly target: Target
  readonly output: string | undefined
  readonly inputs: ReadonlyArray<readonly [string, string]>
}

/** A pruned call's replacement texts, built on its first request and reused on every later one. */
const rendered = new WeakMap<ToolCall, Rendered>()

/** The replacement texts of a prune, or undefined when it has nothing to replace. */
export const render = (call: ToolCall, reason: Reason, id: number, handle: Handle): Rendered | undefined => {
  const known = rendered.get(call)
  if (known !== undefined && known.reason === reason && known.id === id && known.handle === handle) return known
  const target = targetOf(call, reason)
  if (target === undefined) return undefined
  const fresh: Rendered = target.kind === "output"
    ? { reason, id, handle, target, output: outputPlaceholder(call, reason, id, handle), inputs: [] }
    : {
      reason,
      id,
      handle,
      target,
      output: undefined,
      inputs: target.keys.map((key) => [key, inputPlaceholder(call, reason, key, id, handle)] as const)
    }
  rendered.set(call, fresh)
  return fresh
}

/**
 * Replaces the pruned content of each call in `messages`, in place (OpenCode reads the array it passed in, and
 * builds every message, part and state object afresh for each request). Only `state.output` or some
 * `state.input` values change; the input object is copied first, because the index may hold the same object.
 * Returns how many parts were changed.
 */
export const applyPrunes = (
  messages: ReadonlyArray<unknown>,
  prunes: Iterable<AppliedPrune>,
  handle: Handle
): number => {
  let changed = 0
  for (const { call, id, reason } of prunes) {
    const texts = render(call, reason, id, handle)
    if (texts !== undefined && applyRendered(messages, call, texts)) changed++
  }
  return changed
}

/** Writes one call's replacement texts into its part in `messages`; false when the part is not where the call says. */
export const applyRendered = (messages: ReadonlyArray<unknown>, call: ToolCall, texts: Rendered): boolean => {
  const state = stateAt(messages, call)
  if (state === undefined) return false
  if (texts.output !== undefined) {
    state.output = texts.output
    if ("attachments" in state) delete state.attachments
  } else {
    const input = Predicate.isObject(state.input) ? { ...(state.input as Record<string, unknown>) } : {}
    for (const [key, text] of texts.inputs) if (key in input) input[key] = text
    state.input = input
  }
  return true
}

const stateAt = (messages: ReadonlyArray<unknown>, call: ToolCall): Record<string, unknown> | undefined => {
  const message = messages[call.messageIndex]
  const parts = Predicate.isObject(message) && Array.isArray(message.parts) ? message.parts : undefined
  const part: unknown = parts?.[call.partIndex]
  return Predicate.isObject(part) && part.callID === call.callID && Predicate.isObject(part.state)
    ? (part.state as Record<string, unknown>)
    : undefined
}
