import { assert, describe, it } from "vitest"
import type { ToolCall } from "../../src/engine/calls.ts"
import type { Protection } from "../../src/engine/protection.ts"
import { assistant, lines, tool, user } from "../support/history.ts"
import {
  addFile,
  alone,
  automaticCandidates,
  type CallSpec,
  deleteFile,
  history,
  indexViews,
  patchText,
  protect,
  updateFile,
  worktree
} from "./support.ts"

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
  it("on Windows, takes a file written with backslashes and read back with forward slashes for the same file", () => {
    const directory = "C:\\Users\\me\\app"
    const calls = history([
      { ...write("C:\\Users\\me\\app\\src\\app.ts"), directory },
      { ...read("C:/Users/me/app/src/app.ts"), directory }
    ])
    assert.deepStrictEqual(ids(supersedeWrites(calls, protect({ roots: [directory] }))), ["c1"])
  })

  it("prunes a write whose file is read afterwards, although write is an always-protected tool", () => {
    const found = supersedeWrites(history([write(), read()]), protect())
    assert.deepStrictEqual(found, [{ callID: "c1", reason: "supersedeWrites" }])
  })

  it("prunes an edit whose file is read afterwards", () => {
    assert.deepStrictEqual(ids(supersedeWrites(history([edit(), read()]), protect())), ["c1"])
  })

  it("prunes every write and edit of the file before the read", () => {
    const calls = history([write(), edit(), { tool: "bash", input: { command: "npm test" } }, read()])
    assert.deepStrictEqual(ids(supersedeWrites(calls, protect())), ["c1", "c2"])
  })

  it("prunes a multiedit whose file is read afterwards", () => {
    const multiedit: CallSpec = {
      tool: "multiedit",
      input: { filePath: file, edits: [{ oldString: "a", newString: "b" }] }
    }
    assert.deepStrictEqual(ids(supersedeWrites(history([multiedit, read()]), protect())), ["c1"])
  })

  it("does not prune a write that was never read back", () => {
    assert.deepStrictEqual(supersedeWrites(history([write()]), protect()), [])
  })

  it("does not prune a write when only an earlier read saw the file", () => {
    assert.deepStrictEqual(supersedeWrites(history([read(), write()]), protect()), [])
  })

  it("prunes only the writes before the last read, not a newer write", () => {
    assert.deepStrictEqual(ids(supersedeWrites(history([write(), read(), write()]), protect())), ["c1"])
  })

  it("does not prune a write of another file", () => {
    assert.deepStrictEqual(supersedeWrites(history([write(), read(`${worktree}/src/other.ts`)]), protect()), [])
  })

  it("does not count a read from an offset past the first line", () => {
    assert.deepStrictEqual(supersedeWrites(history([write(), read(file, { offset: 40 })]), protect()), [])
  })

  it("does not count a read limited to fewer lines than OpenCode reads by default", () => {
    assert.deepStrictEqual(supersedeWrites(history([write(), read(file, { limit: 50 })]), protect()), [])
    assert.deepStrictEqual(ids(supersedeWrites(history([write(), read(file, { limit: 2000 })]), protect())), ["c1"])
  })

  it("counts a read from the first line, or with a null offset, as a whole-file read", () => {
    assert.deepStrictEqual(ids(supersedeWrites(history([write(), read(file, { offset: 1 })]), protect())), ["c1"])
    assert.deepStrictEqual(ids(supersedeWrites(history([write(), read(file, { offset: 0 })]), protect())), ["c1"])
    assert.deepStrictEqual(ids(supersedeWrites(history([write(), read(file, { offset: null })]), protect())), ["c1"])
  })

  it("does not count a read that failed or has not finished", () => {
    const failed = { ...read(), error: "file not found" }
    const running = { ...read(), status: "running" as const }
    assert.deepStrictEqual(supersedeWrites(history([write(), failed]), protect()), [])
    assert.deepStrictEqual(supersedeWrites(history([write(), running]), protect()), [])
  })

  it("matches a relative and an absolute path of the same file", () => {
    assert.deepStrictEqual(ids(supersedeWrites(history([write("src/app.ts"), read(file)]), protect())), ["c1"])
    assert.deepStrictEqual(ids(supersedeWrites(history([write(file), read("src/app.ts")]), protect())), ["c1"])
    assert.deepStrictEqual(ids(supersedeWrites(history([write("./src/../src/app.ts"), read(file)]), protect())), ["c1"])
  })

  it("does not match a relative path against the same relative path in another directory", () => {
    assert.deepStrictEqual(
      supersedeWrites(history([write("src/app.ts"), read("/elsewhere/src/app.ts")]), protect()),
      []
    )
  })

  it("does not prune a write with no content left to replace", () => {
    const empty: CallSpec = { tool: "write", input: { filePath: file, content: "" } }
    assert.deepStrictEqual(supersedeWrites(history([empty, read()]), protect()), [])
  })

  it("does not prune writes of a file matching a protected pattern", () => {
    const env = `${worktree}/config/prod.env`
    const calls = history([write(env), read(env), write(), read()])
    assert.deepStrictEqual(ids(supersedeWrites(calls, protect({ patterns: ["*.env"] }))), ["c3"])
    assert.deepStrictEqual(supersedeWrites(calls, protect({ patterns: ["*.env", "src/**"] })), [])
  })

  it("does not prune a turn-protected write", () => {
    const calls = history([{ ...write(), turn: 5 }, { ...read(), turn: 6 }])
    const recent = protect({ turnProtection: { enabled: true, turns: 4 }, currentTurn: 6 })
    assert.deepStrictEqual(supersedeWrites(calls, recent), [])
    const old = protect({ turnProtection: { enabled: true, turns: 4 }, currentTurn: 9 })
    assert.deepStrictEqual(ids(supersedeWrites(calls, old)), ["c1"])
  })

  it("after a compaction, a read cannot supersede a write that is gone from the view", () => {
    const w = tool({ tool: "write", callID: "w1", input: { filePath: file, content: lines(30) }, output: "Wrote file" })
    const r = (callID: string) => tool({ tool: "read", callID, input: { filePath: file }, output: lines(30) })
    const before = [user("go"), assistant([w]), assistant([r("r1")])]
    const after = [assistant([], { summary: true }), user("continue"), assistant([r("r2")])]
    const [full, compacted] = indexViews([before, after])
    assert.deepStrictEqual(ids(supersedeWrites(full!.calls, protect())), ["w1"])
    assert.deepStrictEqual(supersedeWrites(compacted!.calls, protect()), [])
  })
})

describe("supersedeWrites: apply_patch (how OpenCode has GPT models change files)", () => {
  const other = `${worktree}/src/other.ts`
  const patch = (...sections: ReadonlyArray<string>): CallSpec => ({
    tool: "apply_patch",
    input: { patchText: patchText(...sections) }
  })

  it("prunes a patch whose file is read afterwards", () => {
    assert.deepStrictEqual(ids(supersedeWrites(history([patch(updateFile("src/app.ts")), read()]), protect())), ["c1"])
  })

  it("prunes a patch of several files once each file it added or updated has been read afterwards", () => {
    const change = patch(updateFile("src/app.ts"), addFile("src/other.ts"))
    assert.deepStrictEqual(supersedeWrites(history([change, read()]), protect()), [])
    assert.deepStrictEqual(ids(supersedeWrites(history([change, read(), read(other)]), protect())), ["c1"])
    assert.deepStrictEqual(ids(supersedeWrites(history([change, read(other), read()]), protect())), ["c1"])
  })

  it("waits for no read of a file the patch deleted, and for a moved file's read under its new name", () => {
    const deleting = patch(updateFile("src/app.ts"), deleteFile("src/gone.ts"))
    assert.deepStrictEqual(ids(supersedeWrites(history([deleting, read()]), protect())), ["c1"])
    const moving = patch(updateFile("src/old.ts", 10, "src/app.ts"))
    assert.deepStrictEqual(supersedeWrites(history([moving, read(`${worktree}/src/old.ts`)]), protect()), [])
    assert.deepStrictEqual(ids(supersedeWrites(history([moving, read()]), protect())), ["c1"])
  })

  it("prunes writes, edits and patches of a file together at its next read", () => {
    const calls = history([write(), patch(updateFile("src/app.ts")), edit(), read()])
    assert.deepStrictEqual(ids(supersedeWrites(calls, protect())), ["c1", "c2", "c3"])
  })

  it("does not prune a patch touching a protected file", () => {
    const change = patch(updateFile("src/app.ts"), updateFile("config/prod.env"))
    const calls = history([change, read(), read(`${worktree}/config/prod.env`)])
    assert.deepStrictEqual(supersedeWrites(calls, protect({ patterns: ["*.env"] })), [])
  })
})
