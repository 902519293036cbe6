import type { ToolCall } from "./calls.ts"

/** Text is estimated at four characters a token: counting it exactly on every request would cost more than it tells. */
const charsPerToken = 4

/** A request's size from its parts: the system prompt, its text (by length), and the tool calls' tokens left in it. */
export const contextTokens = (systemTokens: number, textChars: number, callTokens: number): number =>
  Math.max(0, systemTokens + Math.ceil(textChars / charsPerToken) + callTokens)

/**
 * The size of what this request sends, estimated from counts already made: the system prompt, text by length,
 * and every tool call's counted input and output, less what applied prunes take out.
 */
export const estimateContext = (input: {
  readonly calls: ReadonlyArray<ToolCall>
  readonly textChars: number
  readonly systemTokens: number
  readonly pruned: ReadonlyMap<string, { readonly tokens: number }>
}): number => {
  let callTokens = 0
  for (const call of input.calls) {
    callTokens += call.totalTokens - (input.pruned.get(call.callID)?.tokens ?? 0)
  }
  return contextTokens(input.systemTokens, input.textChars, callTokens)
}

/**
 * What the provider must write to its cache again when prunes change these calls: everything from the earliest
 * changed call to the end of the request. Text is assumed spread evenly over the calls.
 */
export const rebuildEstimate = (input: {
  readonly calls: ReadonlyArray<ToolCall>
  readonly changed: ReadonlySet<string>
  readonly contextTokens: number
}): number => {
  const first = input.calls.findIndex((call) => input.changed.has(call.callID))
  return first < 0 ? 0 : rebuildFrom(first, input.calls.length, input.contextTokens)
}

/** `rebuildEstimate` when the position of the earliest changed call (of `count` calls in the view) is known. */
const rebuildFrom = (first: number, count: number, contextTokens: number): number =>
  Math.round(contextTokens * (count - first) / count)
