import { Predicate } from "effect"
import { partsOf } from "../host/messages.ts"
import { diagnosticsOf } from "./diagnostics.ts"
import { contentInputs, prunesContent } from "./strategies/supersedeWrites.ts"

/** The tool parts of a stored session, by callID: where recall finds what was sent before pruning. */
export const storedToolParts = (messages: ReadonlyArray<unknown>): Map<string, Record<string, unknown>> => {
  const parts = new Map<string, Record<string, unknown>>()
  for (const message of messages) {
    for (const part of partsOf(message)) {
      if (Predicate.isObject(part) && part.type === "tool" && typeof part.callID === "string")
        parts.set(part.callID, part)
    }
  }
  return parts
}

/**
 * The original content a prune removed from a stored tool part: the written content of a superseded write or an old
 * change (with the language server's errors its output reported), the string inputs of a failed call, the output
 * otherwise.
 */
export const originalContent = (part: Record<string, unknown>, reason: string): string => {
  const state = Predicate.isObject(part.state) ? part.state : {}
  const input = Predicate.isObject(state.input) ? state.input : {}
  const tool = typeof part.tool === "string" ? part.tool : ""
  const keys = prunesContent(tool, reason)
    ? (contentInputs[tool] ?? [])
    : state.status === "error"
    ? Object.keys(input).filter((key) => typeof input[key] === "string")
    : tool === "question"
    ? ["questions"]
    : []
  if (keys.length === 0) return typeof state.output === "string" ? state.output : JSON.stringify(state.output ?? "")
  const errors = prunesContent(tool, reason) && typeof state.output === "string"
    ? diagnosticsOf(state.output)
    : undefined
  return [
    ...keys
      .filter((key) => key in input)
      .map((key) => `${key}:\n${typeof input[key] === "string" ? input[key] : JSON.stringify(input[key], null, 2)}`),
    ...(errors === undefined ? [] : [errors])
  ].join("\n\n")
}

export const formatRecall = (
  entries: ReadonlyArray<{ readonly id: number; readonly label: string; readonly content: string | undefined }>
): string =>
  entries.map(({ content, id, label }) =>
    content === undefined
      ? `id ${id} (${label}): the original is no longer in the stored session (compacted or deleted).`
      : `Original content of id ${id} (${label}), as stored:\n${content}`
  ).join("\n\n")
