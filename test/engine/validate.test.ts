import { Result } from "effect"
import { assert, describe, it } from "vitest"
import type { ToolCall } from "../../src/engine/calls.ts"
import { validateDiscard, validateExtract, validateRecall, type ValidationContext } from "../../src/engine/validate.ts"
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
    assert.deepStrictEqual(selected(result), [[10, "a"], [11, "b"]])
    assert.strictEqual(Result.isSuccess(result) && result.success.reason, "noise")
  })

  it("accepts ids given as numbers, and surrounding spaces", () => {
    assert.deepStrictEqual(selected(validateDiscard(["completion", 10, " 11 "], context)), [[10, "a"], [11, "b"]])
  })

  it("rejects an empty list with an example", () => {
    const message = failure(validateDiscard([], context))
    assert.match(message, /ids is empty/)
    assert.include(message, '["noise", "12", "15"]')
  })

  it("says the reason is missing when the first entry is an id", () => {
    const message = failure(validateDiscard(["10", "11"], context))
    assert.match(message, /reason is missing/)
    assert.include(message, '"completion" or "noise"')
    assert.include(message, '["completion", "10"]')
  })

  it("treats a numeric first entry given as a number as a missing reason too", () => {
    assert.match(failure(validateDiscard([10, 11], context)), /reason is missing/)
  })

  it("names an unknown reason and the valid ones", () => {
    const message = failure(validateDiscard(["cleanup", "10"], context))
    assert.include(message, 'Unknown reason "cleanup"')
    assert.include(message, '"completion"')
    assert.include(message, '"noise"')
  })

  it("accepts the reason in any letter case", () => {
    assert.strictEqual(validateDiscard(["Noise", "10"], context)._tag, "Success")
  })

  it("rejects a reason without ids", () => {
    assert.match(failure(validateDiscard(["completion"], context)), /No ids after the reason "completion"/)
  })

  it("rejects a non-numeric id", () => {
    assert.include(failure(validateDiscard(["noise", "src/a.ts"], context)), '"src/a.ts" is not a numeric id')
    assert.include(failure(validateDiscard(["noise", "1.5"], context)), '"1.5" is not a numeric id')
    assert.include(failure(validateDiscard(["noise", "-3"], context)), '"-3" is not a numeric id')
  })

  it("rejects an id that names no call in the conversation", () => {
    assert.include(failure(validateDiscard(["noise", "99"], context)), "There is no tool call with id 99")
  })

  it("rejects an id listed twice", () => {
    assert.include(failure(validateDiscard(["noise", "10", 10], context)), "id 10 is listed twice")
  })

  it("rejects an always-protected tool", () => {
    assert.include(
      failure(validateDiscard(["noise", "12"], context)),
      "id 12 (task explore the repo) is a task call, which is never pruned"
    )
  })

  it("rejects a tool protected in the settings", () => {
    assert.include(
      failure(validateDiscard(["noise", "17"], context)),
      "id 17 (webfetch https://example.com) is a webfetch call"
    )
  })

  it("rejects a call on a protected file", () => {
    assert.include(
      failure(validateDiscard(["noise", "13"], context)),
      "id 13 (read .env) touches a file matching a protected file pattern"
    )
  })

  it("rejects a turn-protected call, naming the protected turns", () => {
    assert.include(
      failure(validateDiscard(["noise", "14"], context)),
      "id 14 (read src/new.ts) is from the last 3 turns"
    )
  })

  it("rejects a call already pruned", () => {
    assert.include(failure(validateDiscard(["noise", "15"], context)), "id 15 (read src/old.ts) is already pruned")
  })

  it("rejects a call that has not finished", () => {
    assert.include(failure(validateDiscard(["noise", "16"], context)), "id 16 (bash npm run dev) has not finished yet")
  })

  it("rejects a call with no output left to prune", () => {
    assert.include(
      failure(validateDiscard(["noise", "18"], context)),
      "id 18 (mcp_image logo) has no output worth pruning"
    )
  })

  it("prunes nothing when one id among valid ones is bad", () => {
    const result = validateDiscard(["completion", "10", "12", "11"], context)
    assert.strictEqual(Result.isFailure(result), true)
    const message = failure(result)
    assert.strictEqual(message.startsWith("Nothing was pruned."), true)
    assert.include(message, "id 12")
    assert.notInclude(message, "id 10")
    assert.notInclude(message, "id 11")
  })

  it("reports every problem at once, one per line", () => {
    const message = failure(validateDiscard(["noise", "x", "99", "12", "15", "10"], context))
    const lines = message.split("\n")
    assert.lengthOf(lines, 5)
    assert.strictEqual(lines[0], "Nothing was pruned.")
    assert.include(lines[1], '"x" is not a numeric id')
    assert.include(lines[2], "no tool call with id 99")
    assert.include(lines[3], "id 12 (task")
    assert.include(lines[4], "id 15 (read src/old.ts) is already pruned")
  })
})

describe("tool answers name values as the model wrote them, and stay short", () => {
  it("an object, a list, null or a fraction among the ids is shown as written", () => {
    const message = failure(validateDiscard(["noise", { id: 10 }, [11], null, 10.5, true], context))
    assert.deepStrictEqual(message.split("\n").map((line) => line.split(" is not")[0]), [
      "Nothing was pruned.",
      '{"id":10}',
      "[11]",
      "null",
      "10.5",
      "true"
    ])
  })

  it("a reason that is not text is shown as written", () => {
    assert.match(
      failure(validateDiscard([{ reason: "noise" }, "10"], context)),
      /^Unknown reason \{"reason":"noise"\}\. /
    )
  })

  it("a huge value is shown cut short", () => {
    const line = failure(validateDiscard(["noise", "x".repeat(100_000)], context)).split("\n")[1]!
    assert.isBelow(line.length, 200)
  })

  it("500 bad ids get an answer of at most 2,000 characters that says how much it left out", () => {
    const ids = Array.from({ length: 500 }, (_, i) => `x${i}`)
    for (
      const message of [
        failure(validateDiscard(["noise", ...ids], context)),
        failure(validateExtract(ids, ids, context)),
        failure(validateRecall({ ids }, { callOf: () => undefined, pruned: new Map(), folded: new Map() }))
      ]
    ) {
      assert.isAtMost(message.length, 2_000)
      assert.match(message, /\n…and \d+ more lines not shown\.$/)
      const shown = message.split("\n").length - 2
      assert.strictEqual(Number(/and (\d+) more/.exec(message)![1]), 500 - shown)
    }
  })
})

describe("validateExtract", () => {
  it("selects the calls and keeps one trimmed finding per id", () => {
    const result = validateExtract(["10", 11], ["  a.ts exports App  ", "tests pass"], context)
    assert.deepStrictEqual(selected(result), [[10, "a"], [11, "b"]])
    assert.deepStrictEqual(Result.isSuccess(result) && result.success.findings, ["a.ts exports App", "tests pass"])
  })

  it("rejects an empty list", () => {
    assert.match(failure(validateExtract([], [], context)), /ids is empty/)
  })

  it("rejects a distillation count that does not match the ids", () => {
    assert.strictEqual(
      failure(validateExtract(["10", "11"], ["only one"], context)),
      "Got 2 ids but 1 distillation entry: give exactly one finding per id, in the same order."
    )
    assert.include(failure(validateExtract(["10"], ["one", "two"], context)), "Got 1 id but 2 distillation entries")
  })

  it("rejects an empty or non-text distillation, naming its id", () => {
    assert.include(
      failure(validateExtract(["10", "11"], ["kept", "   "], context)),
      "The distillation for id 11 is empty"
    )
    assert.strictEqual(
      failure(validateExtract(["10", "11"], ["kept", { text: "x" }], context)),
      'Nothing was pruned.\nEvery distillation entry must be text; entry 2 ({"text":"x"}) is not.'
    )
  })

  it("applies the same id rules as discard, all or nothing", () => {
    const message = failure(validateExtract(["10", "13", "16"], ["a", "b", "c"], context))
    assert.include(message, "id 13 (read .env)")
    assert.include(message, "id 16 (bash npm run dev)")
    assert.notInclude(message, "id 10")
  })

  it("does not take a reason", () => {
    assert.include(failure(validateExtract(["noise", "10"], ["x", "y"], context)), '"noise" is not a numeric id')
  })
})
