import { describe, expect, it } from "vitest"
import type { ToolCall } from "../../src/engine/calls.ts"
import type { Protection } from "../../src/engine/protection.ts"
import { assistant, lines, tool, user } from "../support/history.ts"
import { alone, automaticCandidates, type CallSpec, history, indexViews, protect, worktree } from "./support.ts"

const file = `${worktree}/src/app.ts`
const write = (filePath = file): CallSpec => ({ tool: "write", input: { filePath, content: lines(50) } })
const edit = (filePath = file): CallSpec => ({
  tool: "edit",
  input: { filePath, oldString: "const a = 1", newString: "const a = 2" }
})
const read = (filePath = file, extra: Record<string, unknown> = {}): CallSpec => ({
  tool: "read",
  input: { filePath, ...extra }
})
/** Supersede-writes alone, as the request path runs it. */
const supersedeWrites = (calls: ReadonlyArray<ToolCall>, protection: Protection) =>
  automaticCandidates({ calls, pruned: new Set(), protection, strategies: alone("supersedeWrites"), currentTurn: 1 })
const ids = (candidates: ReadonlyArray<{ callID: string }>) => candidates.map((candidate) => candidate.callID)

describe("supersedeWrites", () => {
  it("prunes a write whose file is read afterwards, although write is an always-protected tool", () => {
    const found = supersedeWrites(history([write(), read()]), protect())
    expect(found).toEqual([{ callID: "c1", reason: "supersedeWrites" }])
  })

  it("prunes an edit whose file is read afterwards", () => {
    expect(ids(supersedeWrites(history([edit(), read()]), protect()))).toEqual(["c1"])
  })

  it("prunes every write and edit of the file before the read", () => {
    const calls = history([write(), edit(), { tool: "bash", input: { command: "npm test" } }, read()])
    expect(ids(supersedeWrites(calls, protect()))).toEqual(["c1", "c2"])
  })

  it("prunes a multiedit whose file is read afterwards", () => {
    const multiedit: CallSpec = {
      tool: "multiedit",
      input: { filePath: file, edits: [{ oldString: "a", newString: "b" }] }
    }
    expect(ids(supersedeWrites(history([multiedit, read()]), protect()))).toEqual(["c1"])
  })

  it("does not prune a write that was never read back", () => {
    expect(supersedeWrites(history([write()]), protect())).toEqual([])
  })

  it("does not prune a write when only an earlier read saw the file", () => {
    expect(supersedeWrites(history([read(), write()]), protect())).toEqual([])
  })

  it("prunes only the writes before the last read, not a newer write", () => {
    expect(ids(supersedeWrites(history([write(), read(), write()]), protect()))).toEqual(["c1"])
  })

  it("does not prune a write of another file", () => {
    expect(supersedeWrites(history([write(), read(`${worktree}/src/other.ts`)]), protect())).toEqual([])
  })

  it("does not count a read from an offset past the first line", () => {
    expect(supersedeWrites(history([write(), read(file, { offset: 40 })]), protect())).toEqual([])
  })

  it("does not count a read limited to fewer lines than OpenCode reads by default", () => {
    expect(supersedeWrites(history([write(), read(file, { limit: 50 })]), protect())).toEqual([])
    expect(ids(supersedeWrites(history([write(), read(file, { limit: 2000 })]), protect()))).toEqual(["c1"])
  })

  it("counts a read from the first line, or with a null offset, as a whole-file read", () => {
    expect(ids(supersedeWrites(history([write(), read(file, { offset: 1 })]), protect()))).toEqual(["c1"])
    expect(ids(supersedeWrites(history([write(), read(file, { offset: 0 })]), protect()))).toEqual(["c1"])
    expect(ids(supersedeWrites(history([write(), read(file, { offset: null })]), protect()))).toEqual(["c1"])
  })

  it("does not count a read that failed or has not finished", () => {
    const failed = { ...read(), error: "file not found" }
    const running = { ...read(), status: "running" as const }
    expect(supersedeWrites(history([write(), failed]), protect())).toEqual([])
    expect(supersedeWrites(history([write(), running]), protect())).toEqual([])
  })

  it("matches a relative and an absolute path of the same file", () => {
    expect(ids(supersedeWrites(history([write("src/app.ts"), read(file)]), protect()))).toEqual(["c1"])
    expect(ids(supersedeWrites(history([write(file), read("src/app.ts")]), protect()))).toEqual(["c1"])
    expect(ids(supersedeWrites(history([write("./src/../src/app.ts"), read(file)]), protect())))
      .toEqual(["c1"])
  })

  it("does not match a relative path against the same relative path in another directory", () => {
    expect(supersedeWrites(history([write("src/app.ts"), read("/elsewhere/src/app.ts")]), protect()))
      .toEqual([])
  })

  it("does not prune a write with no content left to replace", () => {
    const empty: CallSpec = { tool: "write", input: { filePath: file, content: "" } }
    expect(supersedeWrites(history([empty, read()]), protect())).toEqual([])
  })

  it("does not prune writes of a file matching a protected pattern", () => {
    const env = `${worktree}/config/prod.env`
    const calls = history([write(env), read(env), write(), read()])
    expect(ids(supersedeWrites(calls, protect({ patterns: ["*.env"] })))).toEqual(["c3"])
    expect(supersedeWrites(calls, protect({ patterns: ["*.env", "src/**"] }))).toEqual([])
  })

  it("does not prune a turn-protected write", () => {
    const calls = history([{ ...write(), turn: 5 }, { ...read(), turn: 6 }])
    const recent = protect({ turnProtection: { enabled: true, turns: 4 }, currentTurn: 6 })
    expect(supersedeWrites(calls, recent)).toEqual([])
    const old = protect({ turnProtection: { enabled: true, turns: 4 }, currentTurn: 9 })
    expect(ids(supersedeWrites(calls, old))).toEqual(["c1"])
  })

  it("after a compaction, a read cannot supersede a write that is gone from the view", () => {
    const w = tool({ tool: "write", callID: "w1", input: { filePath: file, content: lines(30) }, output: "Wrote file" })
    const r = (callID: string) => tool({ tool: "read", callID, input: { filePath: file }, output: lines(30) })
    const before = [user("go"), assistant([w]), assistant([r("r1")])]
    const after = [assistant([], { summary: true }), user("continue"), assistant([r("r2")])]
    const [full, compacted] = indexViews([before, after])
    expect(ids(supersedeWrites(full!.calls, protect()))).toEqual(["w1"])
    expect(supersedeWrites(compacted!.calls, protect())).toEqual([])
  })
})
