import { Result } from "effect"
import { describe, expect, it } from "vitest"
import type { ToolCall } from "../../src/engine/calls.ts"
import { validateDiscard, validateExtract, type ValidationContext } from "../../src/engine/validate.ts"
import { call, protect, worktree } from "./support.ts"

const at = (path: string) => ({ filePath: `${worktree}/${path}` })

/** The calls the model could see, by stable ID. */
const calls: ReadonlyArray<readonly [number, ToolCall]> = [
  [10, call({ tool: "read", callID: "a", input: at("src/a.ts"), turn: 1 })],
  [11, call({ tool: "bash", callID: "b", input: { command: "npm test" }, turn: 1 })],
  [12, call({ tool: "task", callID: "t", input: { description: "explore the repo" }, turn: 1 })],
  [13, call({ tool: "read", callID: "e", input: at(".env"), turn: 1 })],
  [14, call({ tool: "read", callID: "r", input: at("src/new.ts"), turn: 9 })],
  [15, call({ tool: "read", callID: "p", input: at("src/old.ts"), turn: 1 })],
  [16, call({ tool: "bash", callID: "u", input: { command: "npm run dev" }, status: "running", turn: 1 })],
  [17, call({ tool: "webfetch", callID: "w", input: { url: "https://example.com" }, turn: 1 })],
  [18, call({ tool: "mcp_image", callID: "i", input: { name: "logo" }, hasTextOutput: false, turn: 1 })]
]

const context: ValidationContext = {
  byId: new Map(calls),
  pruned: new Map([["p", { reason: "discard" }]]),
  protection: protect({ patterns: ["*.env"], turnProtection: { enabled: true, turns: 3 }, currentTurn: 10 }),
  protectedTools: ["webfetch"],
  turnProtection: 3
}

const failure = <A>(result: Result.Result<A, string>): string => {
  if (Result.isSuccess(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.success)}`)
  return result.failure
}
const selected = <A extends { calls: ReadonlyArray<{ id: number; call: ToolCall }> }>(
  result: Result.Result<A, string>
) => {
  if (Result.isFailure(result)) throw new Error(`expected a success, got ${result.failure}`)
  return result.success.calls.map(({ call, id }) => [id, call.callID])
}

describe("validateDiscard", () => {
  it("selects the calls named after a valid reason", () => {
    const result = validateDiscard(["noise", "10", "11"], context)
    expect(selected(result)).toEqual([[10, "a"], [11, "b"]])
    expect(Result.isSuccess(result) && result.success.reason).toBe("noise")
  })

  it("accepts ids given as numbers, and surrounding spaces", () => {
    expect(selected(validateDiscard(["completion", 10, " 11 "], context))).toEqual([[10, "a"], [11, "b"]])
  })

  it("rejects an empty list with an example", () => {
    const message = failure(validateDiscard([], context))
    expect(message).toMatch(/ids is empty/)
    expect(message).toContain('["noise", "12", "15"]')
  })

  it("says the reason is missing when the first entry is an id", () => {
    const message = failure(validateDiscard(["10", "11"], context))
    expect(message).toMatch(/reason is missing/)
    expect(message).toContain('"completion" or "noise"')
    expect(message).toContain('["completion", "10"]')
  })

  it("treats a numeric first entry given as a number as a missing reason too", () => {
    expect(failure(validateDiscard([10, 11], context))).toMatch(/reason is missing/)
  })

  it("names an unknown reason and the valid ones", () => {
    const message = failure(validateDiscard(["cleanup", "10"], context))
    expect(message).toContain('Unknown reason "cleanup"')
    expect(message).toContain('"completion"')
    expect(message).toContain('"noise"')
  })

  it("accepts the reason in any letter case", () => {
    expect(validateDiscard(["Noise", "10"], context)._tag).toBe("Success")
  })

  it("rejects a reason without ids", () => {
    expect(failure(validateDiscard(["completion"], context))).toMatch(/No ids after the reason "completion"/)
  })

  it("rejects a non-numeric id", () => {
    expect(failure(validateDiscard(["noise", "src/a.ts"], context))).toContain('"src/a.ts" is not a numeric id')
    expect(failure(validateDiscard(["noise", "1.5"], context))).toContain('"1.5" is not a numeric id')
    expect(failure(validateDiscard(["noise", "-3"], context))).toContain('"-3" is not a numeric id')
  })

  it("rejects an id that names no call in the conversation", () => {
    expect(failure(validateDiscard(["noise", "99"], context))).toContain("There is no tool call with id 99")
  })

  it("rejects an id listed twice", () => {
    expect(failure(validateDiscard(["noise", "10", 10], context))).toContain("id 10 is listed twice")
  })

  it("rejects an always-protected tool", () => {
    expect(failure(validateDiscard(["noise", "12"], context)))
      .toContain("id 12 (task explore the repo) is a task call, which is never pruned")
  })

  it("rejects a tool protected in the settings", () => {
    expect(failure(validateDiscard(["noise", "17"], context))).toContain(
      "id 17 (webfetch https://example.com) is a webfetch call"
    )
  })

  it("rejects a call on a protected file", () => {
    expect(failure(validateDiscard(["noise", "13"], context))).toContain(
      "id 13 (read .env) touches a file matching a protected file pattern"
    )
  })

  it("rejects a turn-protected call, naming the protected turns", () => {
    expect(failure(validateDiscard(["noise", "14"], context))).toContain(
      "id 14 (read src/new.ts) is from the last 3 turns"
    )
  })

  it("rejects a call already pruned", () => {
    expect(failure(validateDiscard(["noise", "15"], context))).toContain("id 15 (read src/old.ts) is already pruned")
  })

  it("rejects a call that has not finished", () => {
    expect(failure(validateDiscard(["noise", "16"], context))).toContain(
      "id 16 (bash npm run dev) has not finished yet"
    )
  })

  it("rejects a call with no output left to prune", () => {
    expect(failure(validateDiscard(["noise", "18"], context))).toContain(
      "id 18 (mcp_image logo) has no output worth pruning"
    )
  })

  it("prunes nothing when one id among valid ones is bad", () => {
    const result = validateDiscard(["completion", "10", "12", "11"], context)
    expect(Result.isFailure(result)).toBe(true)
    const message = failure(result)
    expect(message.startsWith("Nothing was pruned.")).toBe(true)
    expect(message).toContain("id 12")
    expect(message).not.toContain("id 10")
    expect(message).not.toContain("id 11")
  })

  it("reports every problem at once, one per line", () => {
    const message = failure(validateDiscard(["noise", "x", "99", "12", "15", "10"], context))
    expect(message.split("\n")).toEqual([
      "Nothing was pruned.",
      expect.stringContaining('"x" is not a numeric id'),
      expect.stringContaining("no tool call with id 99"),
      expect.stringContaining("id 12 (task"),
      expect.stringContaining("id 15 (read src/old.ts) is already pruned")
    ])
  })
})

describe("validateExtract", () => {
  it("selects the calls and keeps one trimmed finding per id", () => {
    const result = validateExtract(["10", 11], ["  a.ts exports App  ", "tests pass"], context)
    expect(selected(result)).toEqual([[10, "a"], [11, "b"]])
    expect(Result.isSuccess(result) && result.success.findings).toEqual(["a.ts exports App", "tests pass"])
  })

  it("rejects an empty list", () => {
    expect(failure(validateExtract([], [], context))).toMatch(/ids is empty/)
  })

  it("rejects a distillation count that does not match the ids", () => {
    expect(failure(validateExtract(["10", "11"], ["only one"], context)))
      .toBe("Got 2 ids but 1 distillation entry: give exactly one finding per id, in the same order.")
    expect(failure(validateExtract(["10"], ["one", "two"], context))).toContain("Got 1 id but 2 distillation entries")
  })

  it("rejects an empty or non-text distillation, naming its id", () => {
    expect(failure(validateExtract(["10", "11"], ["kept", "   "], context))).toContain(
      "The distillation for id 11 is empty"
    )
    expect(failure(validateExtract(["10"], [42], context))).toContain("The distillation for id 10 is empty")
  })

  it("applies the same id rules as discard, all or nothing", () => {
    const message = failure(validateExtract(["10", "13", "16"], ["a", "b", "c"], context))
    expect(message).toContain("id 13 (read .env)")
    expect(message).toContain("id 16 (bash npm run dev)")
    expect(message).not.toContain("id 10")
  })

  it("does not take a reason", () => {
    expect(failure(validateExtract(["noise", "10"], ["x", "y"], context))).toContain('"noise" is not a numeric id')
  })
})
