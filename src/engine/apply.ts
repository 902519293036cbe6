import { Predicate } from "effect"
import type { CopyOf } from "../state/schema.ts"
import type { ToolCall } from "./calls.ts"
import {
  diagnosticsPlaceholder,
  type RecallHint,
  inputPlaceholder,
  noHint,
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
  const fresh = build(call, reason, of, id, recallHint)
  if (fresh !== undefined) rendered.set(call, fresh)
  return fresh
}

const build = (
  call: ToolCall,
  reason: Reason,
  of: CopyOf | undefined,
  id: number,
  recallHint: RecallHint
): Rendered | undefined => {
  const target = targetOf(call, reason)
  if (target === undefined) return undefined
  return target.kind === "output"
    ? {
      reason,
      of,
      id,
      recallHint,
      target,
      output: outputPlaceholder(call, reason, id, recallHint, of),
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
  applyTo(state, texts)
  return true
}

const applyTo = (state: Record<string, unknown>, texts: Pick<Rendered, "output" | "inputs" | "diagnostics">) => {
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
}

/** OpenCode's words for a tool result its own pruning cleared, as its compaction summariser reads them. */
const clearedOutput = "[Old tool result content cleared]"

/**
 * Gives OpenCode's compaction summariser what the model sees. OpenCode 1.18.33 sends it the history as one text (each
 * tool input whole, each result cut to 2,000 characters) in a request that has to fit the model's window; a history
 * the plugin kept under the window for longer than OpenCode alone would have does not, whole, and the compaction
 * fails ("Session too large to compact"). A pruned output reads as OpenCode's own cleared result, a pruned input as
 * its placeholder without a recall handle: the summarised calls leave the view, and their IDs with them. The
 * summariser's messages are found by call ID: they are the history before the kept tail, without earlier summaries.
 */
export const applyForSummary = (
  messages: ReadonlyArray<unknown>,
  prunes: ReadonlyArray<{ readonly call: ToolCall; readonly reason: string }>
): void => {
  const states = new Map<string, Record<string, unknown>>()
  for (const message of messages) {
    const parts = Predicate.isObject(message) && Array.isArray(message.parts) ? message.parts : []
    for (const part of parts) {
      if (Predicate.isObject(part) && typeof part.callID === "string" && Predicate.isObject(part.state)) {
        states.set(part.callID, part.state as Record<string, unknown>)
      }
    }
  }
  for (const { call, reason } of prunes) {
    const state = states.get(call.callID)
    const texts = state === undefined ? undefined : build(call, reason as Reason, undefined, 0, noHint)
    if (state === undefined || texts === undefined) continue
    applyTo(state, texts.output === undefined ? texts : { ...texts, output: clearedOutput })
  }
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
