import { assert, describe, it } from "vitest"
import { fileFieldsOf, keyParameterOf, signatureOf } from "../../src/engine/calls.ts"

/** The file a call names, as given (none: no file tool, or no path). */
const filePathOf = (tool: string, input: Record<string, unknown>) => fileFieldsOf(tool, input, "/").filePath
/** How a read of `filePath` is named to the model and the user, in a project at `worktree`. */
const relativePath = (filePath: string, worktree: string) => keyParameterOf("read", { filePath }, worktree)
import { addFile, deleteFile, patchText, updateFile, worktree } from "./support.ts"

describe("keyParameterOf", () => {
  it("names a read by its path, relative to the worktree", () => {
    assert.strictEqual(keyParameterOf("read", { filePath: `${worktree}/src/app.ts` }, worktree), "src/app.ts")
  })

  it("keeps a path outside the worktree absolute", () => {
    assert.strictEqual(keyParameterOf("read", { filePath: "/etc/hosts" }, worktree), "/etc/hosts")
  })

  it("does not strip a sibling directory that only shares the worktree's name as a prefix", () => {
    assert.strictEqual(
      keyParameterOf("read", { filePath: `${worktree}-other/a.ts` }, worktree),
      `${worktree}-other/a.ts`
    )
  })

  it("keeps a path that is already project-relative as given", () => {
    assert.strictEqual(keyParameterOf("write", { filePath: "src/a.ts", content: "x" }, worktree), "src/a.ts")
  })

  it("joins a search pattern and its directory", () => {
    assert.strictEqual(keyParameterOf("grep", { pattern: "TODO", path: `${worktree}/src` }, worktree), "TODO in src")
    assert.strictEqual(keyParameterOf("glob", { pattern: "**/*.ts" }, worktree), "**/*.ts")
  })

  it("names a bash call by its command, on one line and shortened to 80 characters", () => {
    assert.strictEqual(keyParameterOf("bash", { command: "npm   test\n  --watch" }, worktree), "npm test --watch")
    const long = keyParameterOf("bash", { command: `echo ${"a".repeat(200)}` }, worktree)
    assert.lengthOf(long, 80)
    assert.strictEqual(long.endsWith("…"), true)
  })

  it("names an apply_patch by the files it names, relative to the worktree", () => {
    const text = patchText(updateFile(`${worktree}/src/a.ts`), addFile("src/b.ts"), deleteFile("src/c.ts"))
    assert.strictEqual(keyParameterOf("apply_patch", { patchText: text }, worktree), "src/a.ts, src/b.ts, src/c.ts")
  })

  it("falls back to the first short string argument of an unknown tool", () => {
    assert.strictEqual(keyParameterOf("mcp_search", { limit: 3, topic: "effect layers" }, worktree), "effect layers")
    assert.strictEqual(keyParameterOf("mcp_search", { blob: "x".repeat(300), topic: "short" }, worktree), "short")
  })

  it("is empty when no argument can name the call", () => {
    assert.strictEqual(keyParameterOf("mystery", { count: 3, flags: ["a"] }, worktree), "")
  })
})

describe("the file of a call", () => {
  it("finds the file of file tools", () => {
    assert.strictEqual(filePathOf("read", { filePath: "/a/b.ts" }), "/a/b.ts")
    assert.strictEqual(filePathOf("edit", { filePath: "b.ts", oldString: "x", newString: "y" }), "b.ts")
    assert.strictEqual(filePathOf("list", { path: "/a" }), "/a")
  })

  it("has no file for other tools or an empty path", () => {
    assert.isUndefined(filePathOf("bash", { command: "cat /a/b.ts" }))
    assert.isUndefined(filePathOf("grep", { pattern: "x", path: "/a" }))
    assert.isUndefined(filePathOf("read", { filePath: "" }))
    assert.isUndefined(filePathOf("read", { filePath: 42 }))
  })
})

describe("a path shown relative to the worktree", () => {
  it("accepts a worktree with or without a trailing slash", () => {
    assert.strictEqual(relativePath(`${worktree}/src/a.ts`, worktree), "src/a.ts")
    assert.strictEqual(relativePath(`${worktree}/src/a.ts`, `${worktree}/`), "src/a.ts")
  })
})

// OpenCode on Windows reports the project as `C:\\...`, and the model writes paths either way round.
describe("on Windows", () => {
  const project = "C:\\Users\\me\\app"

  it("takes a project-relative path, a path with forward slashes and one with backslashes for the same file", () => {
    const key = (filePath: string) => fileFieldsOf("read", { filePath }, project).absolutePath
    assert.deepStrictEqual(
      [key("src\\a.ts"), key("C:/Users/me/app/src/a.ts"), key("C:\\Users\\me\\app\\src\\a.ts")],
      Array(3).fill("c:\\users\\me\\app\\src\\a.ts")
    )
  })

  it("takes paths that differ only in case for the same file, as Windows' file systems do", () => {
    const key = (filePath: string) => fileFieldsOf("read", { filePath }, project).absolutePath
    assert.strictEqual(key("c:\\USERS\\me\\App\\src\\A.ts"), key("C:\\Users\\me\\app\\src\\a.ts"))
  })

  it("resolves the files an apply_patch names against the project", () => {
    const text = patchText(updateFile("src/a.ts"), addFile("src\\b.ts"))
    assert.deepStrictEqual(fileFieldsOf("apply_patch", { patchText: text }, project).files, [
      "c:\\users\\me\\app\\src\\a.ts",
      "c:\\users\\me\\app\\src\\b.ts"
    ])
  })

  it("shows a path inside the project relative to it, whichever separators it was written with", () => {
    assert.strictEqual(relativePath("C:\\Users\\me\\app\\src\\a.ts", project), "src\\a.ts")
    assert.strictEqual(relativePath("C:/Users/me/app/src/a.ts", `${project}\\`), "src\\a.ts")
    assert.strictEqual(keyParameterOf("read", { filePath: "c:\\users\\me\\app\\a.ts" }, project), "a.ts")
  })

  it("keeps a path outside the project as given: a sibling folder, another drive", () => {
    assert.strictEqual(relativePath("C:\\Users\\me\\app-old\\a.ts", project), "C:\\Users\\me\\app-old\\a.ts")
    assert.strictEqual(relativePath("D:\\app\\a.ts", project), "D:\\app\\a.ts")
    assert.strictEqual(relativePath("src\\a.ts", project), "src\\a.ts")
  })
})

describe("signatureOf", () => {
  it("ignores the order of keys at every depth", () => {
    assert.strictEqual(
      signatureOf("read", { filePath: "a", options: { x: 1, y: 2 } }),
      signatureOf("read", { options: { y: 2, x: 1 }, filePath: "a" })
    )
  })

  it("drops null and undefined values, also nested ones", () => {
    assert.strictEqual(
      signatureOf("read", { filePath: "a", offset: null, limit: undefined, opts: { z: null } }),
      signatureOf("read", { filePath: "a", opts: {} })
    )
  })

  it("keeps the order of array items", () => {
    assert.notStrictEqual(signatureOf("x", { list: [1, 2] }), signatureOf("x", { list: [2, 1] }))
  })

  it("differs between tools with the same input", () => {
    assert.notStrictEqual(signatureOf("read", { filePath: "a" }), signatureOf("list", { filePath: "a" }))
  })

  it("differs when a value differs", () => {
    assert.notStrictEqual(
      signatureOf("read", { filePath: "a", offset: 1 }),
      signatureOf("read", { filePath: "a", offset: 2 })
    )
  })

  it("writes plain input as JSON.stringify writes it with sorted keys", () => {
    assert.strictEqual(
      signatureOf("edit", { b: [1, "two", { d: true, c: null }], a: 'x"y' }),
      `edit\u0000${JSON.stringify({ a: 'x"y', b: [1, "two", { d: true }] })}`
    )
  })

  const cyclic = () => {
    const input: Record<string, unknown> = { filePath: "a" }
    input.self = input
    return input
  }
  let deep: unknown = "leaf"
  for (let i = 0; i < 20_000; i++) deep = { a: deep }
  const unserialisable: ReadonlyArray<readonly [string, () => unknown]> = [
    ["a cycle", cyclic],
    ["a BigInt", () => ({ filePath: "a", size: 10n })],
    ["nesting 20,000 deep", () => ({ filePath: "a", deep })]
  ]
  for (const [what, input] of unserialisable) {
    it(`an input holding ${what} matches no other call, not even one with the same input`, () => {
      const first = signatureOf("read", input())
      assert.notStrictEqual(first, signatureOf("read", input()))
      assert.notStrictEqual(first, signatureOf("read", { filePath: "a" }))
    })
  }

  it("a value reached twice without a cycle is written both times", () => {
    const shared = { x: 1 }
    assert.strictEqual(signatureOf("t", { a: shared, b: shared }), `t\u0000{"a":{"x":1},"b":{"x":1}}`)
  })
})
