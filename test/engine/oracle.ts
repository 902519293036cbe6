import type { ToolCall } from "../../src/engine/calls.ts"
import { contextTokens } from "../../src/engine/context.ts"

/**
 * From-scratch oracles the request path's incremental computations are checked against (test/engine/view.test.ts).
 * They are not run in production: the request path keeps the same figures in its view and updates them with what
 * each request adds.
 */

/**
 * The size of what a request sends, summed afresh over every call: the system prompt, text by length, and every
 * tool call's counted input, output and framing, less what applied prunes take out. The view's `viewContext` must agree.
 */
export const estimateContext = (input: {
  readonly calls: ReadonlyArray<ToolCall>
  readonly textChars: number
  readonly systemTokens: number
  readonly pruned: ReadonlyMap<string, { readonly tokens: number }>
}): number => {
  let callTokens = 0
  for (const call of input.calls) {
    callTokens += call.totalTokens + call.frameTokens - (input.pruned.get(call.callID)?.tokens ?? 0)
  }
  return contextTokens(input.systemTokens, input.textChars, callTokens)
}
