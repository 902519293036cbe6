import { assert, describe, it } from "vitest"
import type { ToolCall } from "../../src/engine/calls.ts"
import type { Protection } from "../../src/engine/protection.ts"
import { minInputTokens } from "../../src/engine/strategies/purgeErrors.ts"
import { assistant, lines, type Msg, text, tool, user } from "../support/history.ts"
import {
  alone,
  automaticCandidates,
  call,
  type CallSpec,
  history,
  indexOf,
  indexViews,
  protect,
  worktree
} from "./support.ts"

const longCommand = `node -e '${"console.log(1);".repeat(40)}'`
const failedBash = (turn: number): CallSpec => ({
  tool: "bash",
  input: { command: longCommand, description: "run it" },
  error: "SyntaxError: Unexpected token",
  turn
})
const options = (currentTurn: number, turns = 4, protectedTools: ReadonlyArray<string> = []) => ({
  turns,
  currentTurn,
  protectedTools
})
/** Purge-errors alone, as the request path runs it. */
const purgeErrors = (
  calls: ReadonlyArray<ToolCall>,
  protection: Protection,
  { currentTurn, ...settings }: ReturnType<typeof options>
) =>
  automaticCandidates({ calls, pruned: new Set(), protection, strategies: alone("purgeErrors", settings), currentTurn })
const ids = (candidates: ReadonlyArray<{ callID: string }>) => candidates.map((candidate) => candidate.callID)

/** A failed bash call in the first turn, then `later` assistant turns. */
const failedThen = (later: number): Array<Msg> => [
  user("run it"),
  assistant([tool({ tool: "bash", callID: "e1", input: { command: longCommand }, error: "exit code 1" })]),
  ...Array.from({ length: later }, (_, i) => assistant([text(`step ${i}`)]))
]

describe("purgeErrors", () => {
  it("targets a failed call once it is older than the configured number of turns", () => {
    const found = purgeErrors(history([failedBash(1)]), protect(), options(5))
    assert.deepStrictEqual(found, [{ callID: "c1", reason: "purgeErrors" }])
  })

  it("leaves a failed call younger than the configured number of turns", () => {
    assert.deepStrictEqual(purgeErrors(history([failedBash(2)]), protect(), options(5)), [])
    assert.deepStrictEqual(purgeErrors(history([failedBash(5)]), protect(), options(5)), [])
  })

  it("counts turns by the step-start parts of the history", () => {
    const young = indexOf(failedThen(3))
    assert.strictEqual(young.turns, 4)
    assert.deepStrictEqual(purgeErrors(young.calls, protect(), options(young.turns)), [])
    const old = indexOf(failedThen(4))
    assert.strictEqual(old.turns, 5)
    assert.deepStrictEqual(ids(purgeErrors(old.calls, protect(), options(old.turns))), ["e1"])
  })

  it("counts text-only turns as well as tool turns", () => {
    const index = indexOf([
      ...failedThen(0),
      assistant([text("thinking")]),
      assistant([tool({ tool: "read", input: { filePath: "a" }, output: "x" })]),
      assistant([text("more")]),
      assistant([text("done")])
    ])
    assert.deepStrictEqual(ids(purgeErrors(index.calls, protect(), options(index.turns))), ["e1"])
  })

  it("leaves completed calls alone, however old", () => {
    const done = { ...failedBash(1), error: undefined, status: "completed" as const }
    assert.deepStrictEqual(purgeErrors(history([done]), protect(), options(20)), [])
  })

  it("leaves a failed call whose string inputs are all small", () => {
    const small: CallSpec = { tool: "bash", input: { command: "ls -la" }, error: "exit code 2", turn: 1 }
    assert.deepStrictEqual(purgeErrors(history([small]), protect(), options(20)), [])
  })

  it("uses the input size threshold inclusively", () => {
    const sized = (tokens: number) =>
      call({ tool: "bash", input: { command: "x" }, inputTokens: { command: tokens }, error: "failed", turn: 1 })
    assert.deepStrictEqual(purgeErrors([sized(minInputTokens - 1)], protect(), options(20)), [])
    assert.lengthOf(purgeErrors([sized(minInputTokens)], protect(), options(20)), 1)
  })

  it("never purges always-protected tools, such as a failed edit", () => {
    const failedEdit: CallSpec = {
      tool: "edit",
      input: { filePath: `${worktree}/a.ts`, oldString: lines(20), newString: lines(20, "new") },
      error: "oldString not found in content",
      turn: 1
    }
    assert.deepStrictEqual(purgeErrors(history([failedEdit]), protect(), options(20)), [])
  })

  it("never purges the tools configured as protected for error purging", () => {
    assert.deepStrictEqual(purgeErrors(history([failedBash(1)]), protect(), options(20, 4, ["bash"])), [])
  })

  it("never purges a call on a protected file", () => {
    const failedRead: CallSpec = {
      tool: "read",
      input: { filePath: `${worktree}/config/${"very-long-directory-name/".repeat(5)}prod.env` },
      error: "permission denied",
      turn: 1
    }
    assert.deepStrictEqual(ids(purgeErrors(history([failedRead]), protect(), options(20))), ["c1"])
    assert.deepStrictEqual(purgeErrors(history([failedRead]), protect({ patterns: ["*.env"] }), options(20)), [])
  })

  it("never purges a turn-protected call, even when it is old enough for the rule", () => {
    const recent = protect({ turnProtection: { enabled: true, turns: 8 }, currentTurn: 6 })
    assert.deepStrictEqual(purgeErrors(history([failedBash(1)]), recent, options(6)), [])
  })

  it("after a compaction, counts turns in the new view only", () => {
    const failed = tool({ tool: "bash", callID: "e1", input: { command: longCommand }, error: "exit code 1" })
    const before = [user("go"), ...Array.from({ length: 5 }, () => assistant([text("work")])), assistant([failed])]
    const after = [assistant([], { summary: true }), user("continue"), assistant([failed]), assistant([text("next")])]
    const [, compacted] = indexViews([before, after])
    assert.strictEqual(compacted!.turns, 3)
    assert.deepStrictEqual(purgeErrors(compacted!.calls, protect(), options(compacted!.turns)), [])
  })
})
