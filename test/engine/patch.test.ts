import { assert, describe, it } from "vitest"
import { addedContents, patchFiles } from "../../src/engine/patch.ts"
import { addFile, deleteFile, patchText, updateFile } from "./support.ts"

describe("patchFiles", () => {
  it("names the files a patch adds and updates as changed, in the patch's order, and the updated and added apart", () => {
    const files = patchFiles(patchText(updateFile("src/a.ts"), addFile("src/b.ts")))
    assert.deepStrictEqual(files, {
      changed: ["src/a.ts", "src/b.ts"],
      named: ["src/a.ts", "src/b.ts"],
      updated: ["src/a.ts"],
      added: ["src/b.ts"]
    })
  })

  it("names a deleted file, which it does not count as changed", () => {
    const files = patchFiles(patchText(deleteFile("src/old.ts"), updateFile("src/a.ts")))
    assert.deepStrictEqual(files, {
      changed: ["src/a.ts"],
      named: ["src/old.ts", "src/a.ts"],
      updated: ["src/a.ts"],
      added: []
    })
  })

  it("counts a moved file as changed under its new name, and as updated under its old one", () => {
    const files = patchFiles(patchText(updateFile("src/a.ts", 3, "src/lib/a.ts")))
    assert.deepStrictEqual(files, {
      changed: ["src/lib/a.ts"],
      named: ["src/a.ts", "src/lib/a.ts"],
      updated: ["src/a.ts"],
      added: []
    })
  })

  it("names a file once however many sections change it", () => {
    const files = patchFiles(patchText(updateFile("src/a.ts"), updateFile("src/a.ts")))
    assert.deepStrictEqual(files, { changed: ["src/a.ts"], named: ["src/a.ts"], updated: ["src/a.ts"], added: [] })
  })

  it("trims the paths, and ignores a marker without one", () => {
    const text = [
      "*** Begin Patch",
      "*** Update File:   src/a.ts  ",
      "@@",
      "-a",
      "+b",
      "*** Add File:",
      "*** End Patch"
    ]
    assert.deepStrictEqual(patchFiles(text.join("\n")), {
      changed: ["src/a.ts"],
      named: ["src/a.ts"],
      updated: ["src/a.ts"],
      added: []
    })
  })

  it("does not read hunk lines as markers, and names nothing in a text that is no patch", () => {
    const text = patchText(addFile("src/notes.md", 0), "+*** Update File: src/fake.ts")
    assert.deepStrictEqual(patchFiles(text), {
      changed: ["src/notes.md"],
      named: ["src/notes.md"],
      updated: [],
      added: ["src/notes.md"]
    })
    assert.deepStrictEqual(patchFiles("just some text"), { changed: [], named: [], updated: [], added: [] })
  })
})

describe("addedContents", () => {
  it("gives each added file's content, its + lines without the +, in the order patchFiles names them", () => {
    const text = patchText(
      "*** Add File: src/b.ts\n+export const b = 1\n+\n+export const c = 2",
      updateFile("src/a.ts"),
      "*** Add File: src/c.ts\n+c"
    )
    assert.deepStrictEqual(patchFiles(text).added, ["src/b.ts", "src/c.ts"])
    assert.deepStrictEqual(addedContents(text), ["export const b = 1\n\nexport const c = 2", "c"])
  })

  it("gives a file added twice the content of its last section", () => {
    const text = patchText("*** Add File: src/b.ts\n+first", "*** Add File: src/b.ts\n+second")
    assert.deepStrictEqual(addedContents(text), ["second"])
  })
})
