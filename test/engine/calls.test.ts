import { describe, expect, it } from "vitest"
import { filePathOf, keyParameterOf, relativePath, signatureOf } from "../../src/engine/calls.ts"
import { worktree } from "./support.ts"

describe("keyParameterOf", () => {
  it("names a read by its path, relative to the worktree", () => {
    expect(keyParameterOf("read", { filePath: `${worktree}/src/app.ts` }, worktree)).toBe("src/app.ts")
  })

  it("keeps a path outside the worktree absolute", () => {
    expect(keyParameterOf("read", { filePath: "/etc/hosts" }, worktree)).toBe("/etc/hosts")
  })

  it("does not strip a sibling directory that only shares the worktree's name as a prefix", () => {
    expect(keyParameterOf("read", { filePath: `${worktree}-other/a.ts` }, worktree)).toBe(`${worktree}-other/a.ts`)
  })

  it("keeps a path that is already project-relative as given", () => {
    expect(keyParameterOf("write", { filePath: "src/a.ts", content: "x" }, worktree)).toBe("src/a.ts")
  })

  it("joins a search pattern and its directory", () => {
    expect(keyParameterOf("grep", { pattern: "TODO", path: `${worktree}/src` }, worktree)).toBe("TODO in src")
    expect(keyParameterOf("glob", { pattern: "**/*.ts" }, worktree)).toBe("**/*.ts")
  })

  it("names a bash call by its command, on one line and shortened to 80 characters", () => {
    expect(keyParameterOf("bash", { command: "npm   test\n  --watch" }, worktree)).toBe("npm test --watch")
    const long = keyParameterOf("bash", { command: `echo ${"a".repeat(200)}` }, worktree)
    expect(long).toHaveLength(80)
    expect(long.endsWith("…")).toBe(true)
  })

  it("falls back to the first short string argument of an unknown tool", () => {
    expect(keyParameterOf("mcp_search", { limit: 3, topic: "effect layers" }, worktree)).toBe("effect layers")
    expect(keyParameterOf("mcp_search", { blob: "x".repeat(300), topic: "short" }, worktree)).toBe("short")
  })

  it("is empty when no argument can name the call", () => {
    expect(keyParameterOf("mystery", { count: 3, flags: ["a"] }, worktree)).toBe("")
  })
})

describe("filePathOf", () => {
  it("finds the file of file tools", () => {
    expect(filePathOf("read", { filePath: "/a/b.ts" })).toBe("/a/b.ts")
    expect(filePathOf("edit", { filePath: "b.ts", oldString: "x", newString: "y" })).toBe("b.ts")
    expect(filePathOf("list", { path: "/a" })).toBe("/a")
  })

  it("has no file for other tools or an empty path", () => {
    expect(filePathOf("bash", { command: "cat /a/b.ts" })).toBeUndefined()
    expect(filePathOf("grep", { pattern: "x", path: "/a" })).toBeUndefined()
    expect(filePathOf("read", { filePath: "" })).toBeUndefined()
    expect(filePathOf("read", { filePath: 42 })).toBeUndefined()
  })
})

describe("relativePath", () => {
  it("accepts a worktree with or without a trailing slash", () => {
    expect(relativePath(`${worktree}/src/a.ts`, worktree)).toBe("src/a.ts")
    expect(relativePath(`${worktree}/src/a.ts`, `${worktree}/`)).toBe("src/a.ts")
  })
})

describe("signatureOf", () => {
  it("ignores the order of keys at every depth", () => {
    expect(signatureOf("read", { filePath: "a", options: { x: 1, y: 2 } }))
      .toBe(signatureOf("read", { options: { y: 2, x: 1 }, filePath: "a" }))
  })

  it("drops null and undefined values, also nested ones", () => {
    expect(signatureOf("read", { filePath: "a", offset: null, limit: undefined, opts: { z: null } }))
      .toBe(signatureOf("read", { filePath: "a", opts: {} }))
  })

  it("keeps the order of array items", () => {
    expect(signatureOf("x", { list: [1, 2] })).not.toBe(signatureOf("x", { list: [2, 1] }))
  })

  it("differs between tools with the same input", () => {
    expect(signatureOf("read", { filePath: "a" })).not.toBe(signatureOf("list", { filePath: "a" }))
  })

  it("differs when a value differs", () => {
    expect(signatureOf("read", { filePath: "a", offset: 1 })).not.toBe(
      signatureOf("read", { filePath: "a", offset: 2 })
    )
  })
})
