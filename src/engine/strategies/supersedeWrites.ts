import type { ToolCall } from "../calls.ts"
import type { Protection } from "../protection.ts"
import type { Candidate } from "./candidate.ts"

/** Tools that change a file, and the inputs that carry the file's content. */
export const contentInputs: Readonly<Record<string, ReadonlyArray<string>>> = {
  write: ["content"],
  edit: ["oldString", "newString"],
  multiedit: ["edits"]
}

/**
 * A write or edit whose file is read again later: the read shows the file as it is now, so the content the model
 * sent (often the largest thing in a coding session) is replaced. The call itself, its path and its result stay.
 * Only a whole-file read supersedes: a read from an offset, or limited to fewer lines than OpenCode reads by
 * default, may not cover what was written. Paths are compared resolved against the project root
 * (`ToolCall.absolutePath`), so a relative and an absolute path to one file match.
 */
export const supersedeWrites = (
  calls: ReadonlyArray<ToolCall>,
  protection: Protection
): Array<Candidate> => {
  const readLater = new Set<string>()
  const found: Array<Candidate> = []
  for (let i = calls.length - 1; i >= 0; i--) {
    const call = calls[i]!
    const file = call.absolutePath
    if (file === undefined) continue
    if (call.tool === "read") {
      if (call.status === "completed" && isWholeFile(call.input)) readLater.add(file)
      continue
    }
    const inputs = contentInputs[call.tool]
    if (inputs === undefined || !readLater.has(file)) continue
    if (!inputs.some((key) => (call.inputTokens[key] ?? 0) > 0 || Array.isArray(call.input[key]))) continue
    if (protection.file(call) || protection.recent(call)) continue
    found.push({ callID: call.callID, reason: "supersedeWrites" })
  }
  return found.reverse()
}

/** OpenCode's read tool returns this many lines when no limit is given. */
const defaultReadLines = 2000

const isWholeFile = (input: Readonly<Record<string, unknown>>): boolean => {
  const { limit, offset } = input
  const fromStart = offset === undefined || offset === null || (typeof offset === "number" && offset <= 1)
  const unlimited = limit === undefined || limit === null || (typeof limit === "number" && limit >= defaultReadLines)
  return fromStart && unlimited
}
