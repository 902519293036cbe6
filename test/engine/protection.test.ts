import { assert, describe, it } from "vitest"
import { call, deleteFile, patchText, protect, updateFile, worktree } from "./support.ts"

const read = (filePath: string) => call({ tool: "read", input: { filePath } })

describe("protection of tools", () => {
  it("always protects the tools that carry plans, sub-agent work, pruning calls and file changes", () => {
    const protection = protect()
    for (
      const tool of [
        "task",
        "todowrite",
        "todoread",
        "discard",
        "extract",
        "batch",
        "write",
        "edit",
        "apply_patch",
        "plan_enter",
        "plan_exit"
      ]
    ) {
      assert.strictEqual(protection.tool(tool), true, tool)
    }
  })

  it("does not protect ordinary tools", () => {
    assert.strictEqual(protect().tool("read"), false)
    assert.strictEqual(protect().tool("bash"), false)
  })

  it("adds a rule's own protected tools to the always-protected ones", () => {
    const protection = protect()
    assert.strictEqual(protection.tool("grep", ["grep"]), true)
    assert.strictEqual(protection.tool("bash", ["grep"]), false)
    assert.strictEqual(protection.tool("task", ["grep"]), true)
  })
})

describe("protection of files", () => {
  it("matches a basename pattern anywhere in the tree", () => {
    const protection = protect({ patterns: ["*.env"] })
    assert.strictEqual(protection.file(read(`${worktree}/config/prod.env`)), true)
    assert.strictEqual(protection.file(read("prod.env")), true)
    assert.strictEqual(protection.file(read(`${worktree}/config/prod.ts`)), false)
  })

  it("matches dotfiles", () => {
    assert.strictEqual(protect({ patterns: [".env"] }).file(read(`${worktree}/.env`)), true)
    assert.strictEqual(protect({ patterns: ["**/.secrets/**"] }).file(read(`${worktree}/a/.secrets/key`)), true)
  })

  it("matches a project-relative glob against an absolute path inside the project", () => {
    const protection = protect({ patterns: ["src/secret/**"] })
    assert.strictEqual(protection.file(read(`${worktree}/src/secret/keys.ts`)), true)
    assert.strictEqual(protection.file(read(`${worktree}/src/public/keys.ts`)), false)
  })

  it("opened in a subdirectory of the repository, matches a glob relative to either", () => {
    const protection = protect({ patterns: ["src/secret/**"], roots: [worktree, `${worktree}/pkg`] })
    const fromRoot = protect({ patterns: ["pkg/src/secret/**"], roots: [worktree, `${worktree}/pkg`] })
    assert.strictEqual(protection.file(read(`${worktree}/pkg/src/secret/keys.ts`)), true)
    assert.strictEqual(fromRoot.file(read(`${worktree}/pkg/src/secret/keys.ts`)), true)
    assert.strictEqual(protection.file(read(`${worktree}/pkg/src/public/keys.ts`)), false)
  })

  it("matches a project-relative glob against a project-relative path", () => {
    assert.strictEqual(protect({ patterns: ["src/secret/**"] }).file(read("src/secret/keys.ts")), true)
  })

  it("matches an absolute pattern against an absolute path", () => {
    assert.strictEqual(
      protect({ patterns: [`${worktree}/src/secret/**`] }).file(read(`${worktree}/src/secret/keys.ts`)),
      true
    )
    assert.strictEqual(protect({ patterns: ["/etc/**"] }).file(read("/etc/hosts")), true)
  })

  it("matches an absolute pattern against a project-relative path of the same file", () => {
    assert.strictEqual(protect({ patterns: [`${worktree}/src/secret/**`] }).file(read("src/secret/keys.ts")), true)
    assert.strictEqual(protect({ patterns: [`${worktree}/src/secret/**`] }).file(read("./src/secret/keys.ts")), true)
  })

  it("does not match a project-relative glob against a file of the same name outside the project", () => {
    assert.strictEqual(protect({ patterns: ["src/secret/**"] }).file(read("/elsewhere/src/secret/keys.ts")), false)
    assert.strictEqual(protect({ patterns: ["src/secret/**"] }).file(read("../other/src/secret/keys.ts")), false)
  })

  it("protects nothing without patterns", () => {
    assert.strictEqual(protect().file(read(`${worktree}/.env`)), false)
  })

  it("ignores calls that have no file", () => {
    assert.strictEqual(
      protect({ patterns: ["**"] }).file(call({ tool: "bash", input: { command: "cat .env" } })),
      false
    )
  })

  it("applies to every file an apply_patch names, a deleted one included", () => {
    const patch = (...sections: ReadonlyArray<string>) =>
      call({ tool: "apply_patch", input: { patchText: patchText(...sections) } })
    const protection = protect({ patterns: ["*.env"] })
    assert.strictEqual(protection.file(patch(updateFile("src/a.ts"), updateFile("config/prod.env"))), true)
    assert.strictEqual(protection.file(patch(updateFile("src/a.ts"), deleteFile("old.env"))), true)
    assert.strictEqual(protection.file(patch(updateFile("src/a.ts"))), false)
  })

  it("applies to the path of a list call", () => {
    assert.strictEqual(
      protect({ patterns: ["secret"] }).file(call({ tool: "list", input: { path: `${worktree}/secret` } })),
      true
    )
  })
})

// OpenCode on Windows reports `C:\\...` paths; patterns are written with forward slashes there too.
describe("protection of files on Windows", () => {
  const project = "C:\\Users\\me\\app"
  const onWindows = (patterns: ReadonlyArray<string>) => protect({ patterns, roots: [project] })
  const readThere = (filePath: string) => call({ tool: "read", input: { filePath }, directory: project })

  it("matches a project-relative glob against a path written with backslashes or forward slashes", () => {
    assert.strictEqual(onWindows(["src/secret/**"]).file(readThere("C:\\Users\\me\\app\\src\\secret\\k.ts")), true)
    assert.strictEqual(onWindows(["src/secret/**"]).file(readThere("C:/Users/me/app/src/secret/k.ts")), true)
    assert.strictEqual(onWindows(["src/secret/**"]).file(readThere("src\\secret\\k.ts")), true)
    assert.strictEqual(onWindows(["src/secret/**"]).file(readThere("C:\\Users\\me\\app\\src\\public\\k.ts")), false)
  })

  it("matches a basename pattern anywhere in the tree", () => {
    assert.strictEqual(onWindows(["*.env"]).file(readThere("C:\\Users\\me\\app\\config\\prod.env")), true)
    assert.strictEqual(onWindows(["*.env"]).file(readThere("C:\\Users\\me\\app\\config\\prod.ts")), false)
  })

  it("matches an absolute pattern written with forward slashes", () => {
    assert.strictEqual(onWindows(["C:/Users/me/app/src/secret/**"]).file(readThere("src\\secret\\k.ts")), true)
  })

  it("matches without regard to case, as Windows names files", () => {
    assert.strictEqual(onWindows(["Src/Secret/**"]).file(readThere("c:\\users\\me\\app\\src\\secret\\k.ts")), true)
  })

  it("does not match a project-relative glob against a file on another drive", () => {
    assert.strictEqual(onWindows(["src/secret/**"]).file(readThere("D:\\app\\src\\secret\\k.ts")), false)
  })
})

describe("turn protection", () => {
  const at = (turn: number) => call({ tool: "read", input: { filePath: "a" }, turn })

  it("protects calls younger than the configured number of turns", () => {
    const protection = protect({ turnProtection: { enabled: true, turns: 4 }, currentTurn: 10 })
    assert.strictEqual(protection.recent(at(10)), true)
    assert.strictEqual(protection.recent(at(7)), true)
    assert.strictEqual(protection.recent(at(6)), false)
    assert.strictEqual(protection.recent(at(1)), false)
  })

  it("protects nothing when switched off", () => {
    assert.strictEqual(protect({ turnProtection: { enabled: false, turns: 4 }, currentTurn: 10 }).recent(at(10)), false)
  })
})
