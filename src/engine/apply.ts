import { Predicate } from "effect"
import type { CopyOf } from "../state/schema.ts"
import type { ToolCall } from "./calls.ts"
import {
  diagnosticsPlaceholder,
  type RecallHint,
  inputPlaceholder,
  outputPlaceholder,
  type Target,
  targetOf
} from "./placeholders.ts"
import { withoutDiagnostics } from "./diagnostics.ts"
import type { Reason } from "./reasons.ts"

/** A prune's replacement texts for one call. */
export interface Rendered {
  readonly reason: Reason
  readonly of: CopyOf | undefined
  readonly id: number
  readonly recallHint: RecallHint
  readonly target: Target
  readonly output: string | undefined
  readonly inputs: ReadonlyArray<readonly [string, string]>
  /** What replaces the language server's errors in a file change's output (`Target.diagnostics`). */
  readonly diagnostics: string | undefined
}

/** A pruned call's replacement texts, built on its first request and reused on every later one. */
const rendered = new WeakMap<ToolCall, Rendered>()

/** The replacement texts of a prune, or undefined when it has nothing to replace. */
export const render = (
  call: ToolCall,
  prune: { readonly reason: string; readonly of?: CopyOf | undefined },
  id: number,
  recallHint: RecallHint
): Rendered | undefined => {
  const reason = prune.reason as Reason
  const of = prune.of
  const known = rendered.get(call)
  if (
    known !== undefined && known.reason === reason && known.id === id && known.recallHint === recallHint &&
    known.of === of
  ) {
    return known
  }
  const target = targetOf(call, reason)
  if (target === undefined) return undefined
  const fresh: Rendered = target.kind === "output"
    ? {
      reason,
      of,
      id,
      recallHint,
      target,
      output: outputPlaceholder(reason, id, recallHint, of),
      inputs: [],
      diagnostics: undefined
    }
    : {
      reason,
      of,
      id,
      recallHint,
      target,
      output: undefined,
      inputs: target.keys.map((key) => [key, inputPlaceholder(call, reason, key, id, recallHint)] as const),
      diagnostics: target.diagnostics === true ? diagnosticsPlaceholder(call, reason, id, recallHint) : undefined
    }
  rendered.set(call, fresh)
  return fresh
}

/**
 * Writes one call's replacement texts into its part in `messages`, in place (OpenCode reads the array it passed in,
 * and builds every message, part and state object afresh for each request). Only `state.output` or some
 * `state.input` values (and then the errors in a file change's output) change; the input object is copied first,
 * because the index may hold the same object. False when the part is not where the call says.
 */
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
    if (texts.diagnostics !== undefined && typeof state.output === "string") {
      state.output = withoutDiagnostics(state.output, texts.diagnostics)
    }
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

/** The ID a prunable call carries at the head of what it sends: the handle discard and extract take. */
export const tagFor = (id: number): string => `[id ${id}]\n`

/** Puts a call's tag at the head of its output (a failed call: of its error, what is sent in its place). */
export const applyTag = (messages: ReadonlyArray<unknown>, call: ToolCall, tag: string): boolean => {
  const state = stateAt(messages, call)
  if (state === undefined) return false
  const key = call.status === "error" ? "error" : "output"
  const text = state[key]
  if (typeof text !== "string" || text.startsWith(tag)) return false
  state[key] = tag + text
  return true
}
