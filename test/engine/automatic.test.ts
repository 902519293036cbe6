import { assert, describe, it } from "vitest"
import type { ToolCall } from "../../src/engine/calls.ts"
import { lines } from "../support/history.ts"
import { defaultConfig } from "../../src/config/schema.ts"
import { viewCandidates, viewOpenFrom } from "../../src/engine/view.ts"
import {
  automaticCandidates,
  type CallSpec,
  freshViewState,
  history,
  protect,
  strategies,
  worktree
} from "./support.ts"

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
    assert.deepStrictEqual(run(mixed()), [
      { callID: "c1", reason: "deduplication" },
      { callID: "c2", reason: "supersedeWrites" },
      { callID: "c3", reason: "purgeErrors" }
    ])
  })

  it("finds nothing in a history with nothing stale", () => {
    assert.deepStrictEqual(run(history([read, { tool: "bash", input: { command: "ls" } }])), [])
  })

  it("lists a call claimed by two rules once, under the first rule's reason", () => {
    const multiedit: CallSpec = {
      tool: "multiedit",
      input: { filePath: file, edits: [{ oldString: "a", newString: "b" }] }
    }
    const candidates = run(history([multiedit, multiedit, read]))
    assert.deepStrictEqual(candidates.filter((candidate) => candidate.callID === "c1"), [
      { callID: "c1", reason: "deduplication" }
    ])
    assert.deepStrictEqual(candidates.map((candidate) => candidate.callID), ["c1", "c2"])
    assert.strictEqual(candidates[1]!.reason, "supersedeWrites")
  })

  it("skips calls already pruned, given as a set or as the prune map", () => {
    assert.deepStrictEqual(run(mixed(), {}, new Set(["c1", "c3"])), [{ callID: "c2", reason: "supersedeWrites" }])
    assert.deepStrictEqual(
      run(mixed(), {}, new Map([["c2", { reason: "discard" }]])).map((candidate) => candidate.callID),
      ["c1", "c3"]
    )
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
    assert.deepStrictEqual(candidates.map((candidate) => candidate.callID), ["c2", "c3"])
  })

  it("does nothing for a disabled deduplication rule", () => {
    assert.deepStrictEqual(run(mixed(), { deduplication: { enabled: false } }).map((candidate) => candidate.reason), [
      "supersedeWrites",
      "purgeErrors"
    ])
  })

  it("does nothing for a disabled supersede-writes rule", () => {
    assert.deepStrictEqual(run(mixed(), { supersedeWrites: { enabled: false } }).map((candidate) => candidate.reason), [
      "deduplication",
      "purgeErrors"
    ])
  })

  it("does nothing for a disabled purge-errors rule", () => {
    assert.deepStrictEqual(run(mixed(), { purgeErrors: { enabled: false } }).map((candidate) => candidate.reason), [
      "deduplication",
      "supersedeWrites"
    ])
  })

  it("finds nothing with every rule disabled", () => {
    const off = { enabled: false }
    assert.deepStrictEqual(run(mixed(), { deduplication: off, supersedeWrites: off, purgeErrors: off }), [])
  })

  it("passes each rule its own settings", () => {
    assert.deepStrictEqual(
      run(mixed(), { deduplication: { protectedTools: ["read"] } }).map((candidate) => candidate.callID),
      ["c2", "c3"]
    )
    assert.deepStrictEqual(
      run(mixed(), { purgeErrors: { protectedTools: ["bash"] } }).map((candidate) => candidate.callID),
      ["c1", "c2"]
    )
    assert.deepStrictEqual(run(mixed(), { purgeErrors: { turns: 10 } }).map((candidate) => candidate.callID), [
      "c1",
      "c2"
    ])
  })

  it("applies turn protection to every rule", () => {
    const candidates = automaticCandidates({
      calls: mixed(),
      pruned: new Set(),
      protection: protect({ turnProtection: { enabled: true, turns: 20 }, currentTurn: 10 }),
      strategies: strategies(),
      currentTurn: 10
    })
    assert.deepStrictEqual(candidates, [])
  })

  it("applies protected file patterns to every rule", () => {
    const candidates = automaticCandidates({
      calls: history([read, read, write, read]),
      pruned: new Set(),
      protection: protect({ patterns: ["src/app.ts"] }),
      strategies: strategies(),
      currentTurn: 10
    })
    assert.deepStrictEqual(candidates, [])
  })
})

describe("openFrom: the oldest call a rule may still change", () => {
  /** The view of `calls` after one request, and its oldest open call's ID under `worth`. */
  const open = (
    calls: ReadonlyArray<ToolCall>,
    worth: (call: ToolCall, reason: string) => boolean = () => true,
    pruned: ReadonlySet<string> = new Set()
  ): string | undefined => {
    const protection = protect({ currentTurn: 10 })
    const viewState = freshViewState(calls, {
      pruned: new Map([...pruned].map((callID) => [callID, { reason: "discard", tokens: 0, at: 0 }])),
      protection,
      config: { ...defaultConfig, strategies: strategies({}) }
    })
    viewCandidates(viewState, { calls, pruned, protection, currentTurn: 10 })
    return calls[viewOpenFrom(viewState, calls, (callID) => pruned.has(callID), worth)]?.callID
  }

  it("is the oldest call a rule found something in", () => {
    assert.strictEqual(open(mixed()), "c1")
  })

  it("skips calls already pruned", () => {
    assert.strictEqual(open(mixed(), undefined, new Set(["c1"])), "c2")
  })

  it("skips a call whose prune would save nothing under the rule that claims it, though another rule's would", () => {
    // c1 is a duplicate (claimed by deduplication) that masking could also take: worth nothing as a duplicate.
    assert.strictEqual(open(mixed(), (call, reason) => !(call.callID === "c1" && reason === "deduplication")), "c2")
  })

  it("is past the last call when nothing is left to change", () => {
    assert.isUndefined(open(history([{ tool: "todowrite", input: { todos: [] } }])))
  })
})
