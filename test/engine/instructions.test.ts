import { assert, describe, it } from "vitest"
import {
  carriedInstructions,
  changedInstructions,
  changesInstructions,
  type InstructionScope
} from "../../src/engine/instructions.ts"
import { addFile, call, patchText, worktree } from "./support.ts"

// The project directory is a package inside the worktree (a git repository), as when a monorepo package is opened.
const directory = `${worktree}/pkg`

const scope = (...carried: ReadonlyArray<string>): InstructionScope => ({
  carried: new Set(carried),
  directory,
  worktree
})

describe("carriedInstructions", () => {
  it("finds every instruction file a system prompt names, in any of its texts", () => {
    const texts = [
      "You are OpenCode.\nInstructions from: /home/u/.config/opencode/AGENTS.md\nBe brief.",
      `Instructions from: ${worktree}/AGENTS.md\n# Project\nInstructions from: ${worktree}/docs/rules.md\nNo tabs.`
    ]
    assert.deepStrictEqual([...carriedInstructions(texts)], [
      "/home/u/.config/opencode/AGENTS.md",
      `${worktree}/AGENTS.md`,
      `${worktree}/docs/rules.md`
    ])
  })

  it("finds none in a system prompt without instruction files", () => {
    assert.strictEqual(carriedInstructions(["You are OpenCode. Instructions follow the user."]).size, 0)
  })
})

describe("changesInstructions", () => {
  it("a file the system prompt carried, whatever its name, changes them", () => {
    assert.isTrue(changesInstructions(`${worktree}/docs/rules.md`, scope(`${worktree}/docs/rules.md`)))
  })

  it("a new AGENTS.md in the project directory changes them when the prompt carried no project file", () => {
    assert.isTrue(changesInstructions(`${directory}/AGENTS.md`, scope("/home/u/.config/opencode/AGENTS.md")))
  })

  it("a new AGENTS.md in the directory joins the one carried from the worktree", () => {
    assert.isTrue(changesInstructions(`${directory}/AGENTS.md`, scope(`${worktree}/AGENTS.md`)))
  })

  it("a new AGENTS.md takes over from a CLAUDE.md the prompt carried", () => {
    assert.isTrue(changesInstructions(`${worktree}/AGENTS.md`, scope(`${directory}/CLAUDE.md`)))
  })

  it("a new CLAUDE.md is not read while the prompt carries an AGENTS.md of the project", () => {
    assert.isFalse(changesInstructions(`${directory}/CLAUDE.md`, scope(`${worktree}/AGENTS.md`)))
  })

  it("an AGENTS.md below the project directory is not in the system prompt", () => {
    assert.isFalse(changesInstructions(`${directory}/src/AGENTS.md`, scope()))
  })

  it("an AGENTS.md above the worktree is not in the system prompt", () => {
    assert.isFalse(changesInstructions("/root/AGENTS.md", scope()))
  })

  it("a file of another name changes nothing", () => {
    assert.isFalse(changesInstructions(`${directory}/README.md`, scope(`${worktree}/AGENTS.md`)))
  })

  it("outside git, where the worktree is the directory, only the directory's own files count", () => {
    const outside = { carried: new Set<string>(), directory, worktree: directory }
    assert.deepStrictEqual(
      [changesInstructions(`${directory}/AGENTS.md`, outside), changesInstructions(`${worktree}/AGENTS.md`, outside)],
      [true, false]
    )
  })
})

describe("changedInstructions", () => {
  const agents = `${worktree}/AGENTS.md`
  const folders = { directory, worktree }
  const carrying = [`Instructions from: ${agents}\nUse tabs.`]

  it("a completed write of the file changes them", () => {
    assert.isTrue(
      changedInstructions([call({ tool: "write", input: { filePath: agents, content: "x" } })], [], folders)
    )
  })

  it("a completed edit of a carried file changes them", () => {
    const edit = call({ tool: "edit", input: { filePath: agents, oldString: "a", newString: "b" } })
    assert.isTrue(changedInstructions([edit], carrying, folders))
  })

  it("a patch that adds the file changes them", () => {
    const patch = call({ tool: "apply_patch", input: { patchText: patchText(addFile("AGENTS.md")) } })
    assert.isTrue(changedInstructions([patch], [], { directory: worktree, worktree }))
  })

  it("a failed edit leaves the file as it was", () => {
    const edit = call({ tool: "edit", input: { filePath: agents, oldString: "a", newString: "b" }, error: "no match" })
    assert.isFalse(changedInstructions([edit], carrying, folders))
  })

  it("a read of the file changes nothing", () => {
    assert.isFalse(changedInstructions([call({ tool: "read", input: { filePath: agents } })], carrying, folders))
  })
})
