import { describe, expect, it } from "vitest"
import type { ToolCall } from "../../src/engine/calls.ts"
import { lines } from "../support/history.ts"
import { automaticCandidates, type CallSpec, history, protect, strategies, worktree } from "./support.ts"

const file = `${worktree}/src/app.ts`
const read: CallSpec = { tool: "read", input: { filePath: file } }
const write: CallSpec = { tool: "write", input: { filePath: file, content: lines(40) } }
const failed: CallSpec = { tool: "bash", input: { command: `echo ${"x".repeat(300)}` }, error: "exit 1", turn: 1 }

/** One call of each rule: c1 a duplicate read, c2 a superseded write, c3 an old failure; c4 the newest read. */
const mixed = (): Array<ToolCall> =>
  history([{ ...read, turn: 1 }, { ...write, turn: 1 }, failed, { ...read, turn: 9 }])

const run = (
  calls: ReadonlyArray<ToolCall>,
  overrides: Parameters<typeof strategies>[0] = {},
  pruned: ReadonlySet<string> | ReadonlyMap<string, unknown> = new Set()
) =>
  automaticCandidates({
    calls,
    pruned,
    protection: protect({ currentTurn: 10 }),
    strategies: strategies(overrides),
    currentTurn: 10
  })

describe("automaticCandidates", () => {
  it("collects the candidates of every enabled rule, each with its reason", () => {
    expect(run(mixed())).toEqual([
      { callID: "c1", reason: "deduplication" },
      { callID: "c2", reason: "supersedeWrites" },
      { callID: "c3", reason: "purgeErrors" }
    ])
  })

  it("finds nothing in a history with nothing stale", () => {
    expect(run(history([read, { tool: "bash", input: { command: "ls" } }]))).toEqual([])
  })

  it("lists a call claimed by two rules once, under the first rule's reason", () => {
    const multiedit: CallSpec = {
      tool: "multiedit",
      input: { filePath: file, edits: [{ oldString: "a", newString: "b" }] }
    }
    const candidates = run(history([multiedit, multiedit, read]))
    expect(candidates.filter((candidate) => candidate.callID === "c1")).toEqual([
      { callID: "c1", reason: "deduplication" }
    ])
    expect(candidates.map((candidate) => candidate.callID)).toEqual(["c1", "c2"])
    expect(candidates[1]!.reason).toBe("supersedeWrites")
  })

  it("skips calls already pruned, given as a set or as the prune map", () => {
    expect(run(mixed(), {}, new Set(["c1", "c3"]))).toEqual([{ callID: "c2", reason: "supersedeWrites" }])
    expect(run(mixed(), {}, new Map([["c2", { reason: "discard" }]])).map((candidate) => candidate.callID))
      .toEqual(["c1", "c3"])
  })

  it("skips calls the user restored", () => {
    const candidates = automaticCandidates({
      calls: mixed(),
      pruned: new Set(),
      restored: new Set(["c1"]),
      protection: protect({ currentTurn: 10 }),
      strategies: strategies(),
      currentTurn: 10
    })
    expect(candidates.map((candidate) => candidate.callID)).toEqual(["c2", "c3"])
  })

  it("does nothing for a disabled deduplication rule", () => {
    expect(run(mixed(), { deduplication: { enabled: false } }).map((candidate) => candidate.reason))
      .toEqual(["supersedeWrites", "purgeErrors"])
  })

  it("does nothing for a disabled supersede-writes rule", () => {
    expect(run(mixed(), { supersedeWrites: { enabled: false } }).map((candidate) => candidate.reason))
      .toEqual(["deduplication", "purgeErrors"])
  })

  it("does nothing for a disabled purge-errors rule", () => {
    expect(run(mixed(), { purgeErrors: { enabled: false } }).map((candidate) => candidate.reason))
      .toEqual(["deduplication", "supersedeWrites"])
  })

  it("finds nothing with every rule disabled", () => {
    const off = { enabled: false }
    expect(run(mixed(), { deduplication: off, supersedeWrites: off, purgeErrors: off })).toEqual([])
  })

  it("passes each rule its own settings", () => {
    expect(run(mixed(), { deduplication: { protectedTools: ["read"] } }).map((candidate) => candidate.callID))
      .toEqual(["c2", "c3"])
    expect(run(mixed(), { purgeErrors: { protectedTools: ["bash"] } }).map((candidate) => candidate.callID))
      .toEqual(["c1", "c2"])
    expect(run(mixed(), { purgeErrors: { turns: 10 } }).map((candidate) => candidate.callID)).toEqual(["c1", "c2"])
  })

  it("applies turn protection to every rule", () => {
    const candidates = automaticCandidates({
      calls: mixed(),
      pruned: new Set(),
      protection: protect({ turnProtection: { enabled: true, turns: 20 }, currentTurn: 10 }),
      strategies: strategies(),
      currentTurn: 10
    })
    expect(candidates).toEqual([])
  })

  it("applies protected file patterns to every rule", () => {
    const candidates = automaticCandidates({
      calls: history([read, read, write, read]),
      pruned: new Set(),
      protection: protect({ patterns: ["src/app.ts"] }),
      strategies: strategies(),
      currentTurn: 10
    })
    expect(candidates).toEqual([])
  })
})
