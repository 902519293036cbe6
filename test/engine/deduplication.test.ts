import { assert, describe, it } from "vitest"
import type { ToolCall } from "../../src/engine/calls.ts"
import type { Protection } from "../../src/engine/protection.ts"
import { assistant, tool, user } from "../support/history.ts"
import { alone, automaticCandidates, history, indexViews, protect, worktree } from "./support.ts"

const readA = { tool: "read", input: { filePath: `${worktree}/src/a.ts` } }
/** Deduplication alone, as the request path runs it. */
const deduplication = (
  calls: ReadonlyArray<ToolCall>,
  protection: Protection,
  protectedTools: ReadonlyArray<string>
) =>
  automaticCandidates({
    calls,
    pruned: new Set(),
    protection,
    strategies: alone("deduplication", { protectedTools }),
    currentTurn: 1
  })
const ids = (candidates: ReadonlyArray<{ callID: string }>) => candidates.map((candidate) => candidate.callID)

describe("deduplication", () => {
  it("keeps the newest of identical reads and prunes the older ones", () => {
    const calls = history([readA, readA, { tool: "bash", input: { command: "ls" } }, readA])
    const found = deduplication(calls, protect(), [])
    assert.deepStrictEqual(ids(found), ["c1", "c2"])
    assert.strictEqual(found.every((candidate) => candidate.reason === "deduplication"), true)
  })

  it("prunes nothing when every call is different", () => {
    const calls = history([
      readA,
      { tool: "read", input: { filePath: `${worktree}/src/b.ts` } },
      { tool: "read", input: { filePath: `${worktree}/src/a.ts`, offset: 50 } }
    ])
    assert.deepStrictEqual(deduplication(calls, protect(), []), [])
  })

  it("counts inputs with keys in a different order as the same", () => {
    const calls = history([
      { tool: "grep", input: { pattern: "TODO", path: "src", include: "*.ts" } },
      { tool: "grep", input: { include: "*.ts", path: "src", pattern: "TODO" } }
    ])
    assert.deepStrictEqual(ids(deduplication(calls, protect(), [])), ["c1"])
  })

  it("drops null and undefined values before comparing", () => {
    const calls = history([
      { tool: "read", input: { filePath: "a.ts", offset: null, limit: undefined } },
      { tool: "read", input: { filePath: "a.ts" } }
    ])
    assert.deepStrictEqual(ids(deduplication(calls, protect(), [])), ["c1"])
  })

  it("compares nested objects key by key", () => {
    const calls = history([
      { tool: "mcp_query", input: { q: { where: { a: 1, b: [1, { c: 2, d: 3 }] }, limit: 5 } } },
      { tool: "mcp_query", input: { q: { limit: 5, where: { b: [1, { d: 3, c: 2 }], a: 1 } } } },
      { tool: "mcp_query", input: { q: { limit: 5, where: { b: [1, { d: 4, c: 2 }], a: 1 } } } }
    ])
    assert.deepStrictEqual(ids(deduplication(calls, protect(), [])), ["c1"])
  })

  it("does not treat the same input to different tools as duplicates", () => {
    const calls = history([
      { tool: "read", input: { filePath: "a.ts" } },
      { tool: "lsp", input: { filePath: "a.ts" } }
    ])
    assert.deepStrictEqual(deduplication(calls, protect(), []), [])
  })

  it("does not count errored, pending or running calls as copies", () => {
    const calls = history([
      { ...readA, error: "not found" },
      { ...readA, status: "pending" },
      { ...readA, status: "running" },
      readA
    ])
    assert.deepStrictEqual(deduplication(calls, protect(), []), [])
  })

  it("does not let an unfinished newer call displace a completed older one", () => {
    const calls = history([readA, { ...readA, status: "running" }])
    assert.deepStrictEqual(deduplication(calls, protect(), []), [])
  })

  it("does not count calls whose output is not text, or was already cleared by OpenCode", () => {
    const calls = history([
      { ...readA, hasTextOutput: false },
      { ...readA, compacted: true },
      readA
    ])
    assert.deepStrictEqual(deduplication(calls, protect(), []), [])
  })

  it("never prunes always-protected tools", () => {
    const calls = history([
      { tool: "todoread", input: {} },
      { tool: "todoread", input: {} },
      { tool: "task", input: { description: "explore", prompt: "look around" } },
      { tool: "task", input: { description: "explore", prompt: "look around" } }
    ])
    assert.deepStrictEqual(deduplication(calls, protect(), []), [])
  })

  it("never prunes the tools configured as protected for deduplication", () => {
    const calls = history([
      { tool: "bash", input: { command: "git status" } },
      { tool: "bash", input: { command: "git status" } },
      readA,
      readA
    ])
    assert.deepStrictEqual(ids(deduplication(calls, protect(), ["bash"])), ["c3"])
  })

  it("never prunes reads of protected files", () => {
    const env = { tool: "read", input: { filePath: `${worktree}/config/prod.env` } }
    const secret = { tool: "read", input: { filePath: "src/secret/keys.ts" } }
    const calls = history([env, env, secret, secret, readA, readA])
    assert.deepStrictEqual(ids(deduplication(calls, protect({ patterns: ["*.env", "src/secret/**"] }), [])), ["c5"])
  })

  it("never prunes an older copy that is still turn-protected", () => {
    const calls = history([{ ...readA, turn: 7 }, { ...readA, turn: 9 }])
    const recent = protect({ turnProtection: { enabled: true, turns: 4 }, currentTurn: 9 })
    assert.deepStrictEqual(deduplication(calls, recent, []), [])
    const older = protect({ turnProtection: { enabled: true, turns: 2 }, currentTurn: 9 })
    assert.deepStrictEqual(ids(deduplication(calls, older, [])), ["c1"])
  })

  it("after a compaction, does not prune a call whose older copy is gone from the view", () => {
    const read = (callID: string) =>
      tool({ tool: "read", callID, input: { filePath: `${worktree}/a.ts` }, output: "body" })
    const before = [user("go"), assistant([read("r1")]), assistant([read("r2")])]
    const after = [
      assistant([], { summary: true, id: "msg_summary" }),
      user("continue"),
      assistant([read("r2")]),
      assistant([tool({ tool: "bash", callID: "b1", input: { command: "ls" }, output: "a.ts" })])
    ]
    const [full, compacted] = indexViews([before, after])
    assert.deepStrictEqual(ids(deduplication(full!.calls, protect(), [])), ["r1"])
    assert.deepStrictEqual(deduplication(compacted!.calls, protect(), []), [])
  })

  it("after a compaction, still prunes duplicates that are both in the view", () => {
    const read = (callID: string) =>
      tool({ tool: "read", callID, input: { filePath: `${worktree}/a.ts` }, output: "body" })
    const before = [user("go"), assistant([read("r1")])]
    const after = [assistant([], { summary: true }), user("continue"), assistant([read("r2")]), assistant([read("r3")])]
    const [, compacted] = indexViews([before, after])
    assert.deepStrictEqual(ids(deduplication(compacted!.calls, protect(), [])), ["r2"])
  })
})
