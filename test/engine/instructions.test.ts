import { assert, describe, it } from "vitest"
import {
  absent,
  carriedInstructions,
  type InstructionScope,
  stampOf,
  stampsDiffer,
  watchedInstructions
} from "../../src/engine/instructions.ts"
import { worktree } from "./support.ts"

// The project directory is a package inside the worktree (a git repository), as when a monorepo package is opened.
const directory = `${worktree}/pkg`
const globalConfigDir = "/home/u/.config/opencode"
const home = "/home/u"

const scope = (...carried: ReadonlyArray<string>): InstructionScope => ({
  carried: new Set(carried),
  directory,
  stop: worktree,
  globalConfigDir,
  home,
  claudeCode: true,
  projectFiles: true
})

const projectFiles = (scope: InstructionScope) =>
  watchedInstructions(scope).filter((path) => path.startsWith(`${worktree}/`)).sort()

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

describe("watchedInstructions", () => {
  it("watches every file the system prompt carried, whatever its name", () => {
    assert.include(watchedInstructions(scope(`${worktree}/docs/rules.md`)), `${worktree}/docs/rules.md`)
  })

  it("watches no instruction URL: what it serves is not on disk", () => {
    const watched = watchedInstructions(scope("https://example.com/rules.md"))
    assert.isFalse(watched.some((path) => path.startsWith("https:")))
  })

  it("with no project file carried, watches each name in the directory and every folder up to the worktree", () => {
    assert.deepStrictEqual(projectFiles(scope()), [
      `${worktree}/AGENTS.md`,
      `${worktree}/CLAUDE.md`,
      `${worktree}/CONTEXT.md`,
      `${directory}/AGENTS.md`,
      `${directory}/CLAUDE.md`,
      `${directory}/CONTEXT.md`
    ])
  })

  it("with an AGENTS.md carried, watches AGENTS.md alone: OpenCode reads no CLAUDE.md then", () => {
    assert.deepStrictEqual(projectFiles(scope(`${worktree}/AGENTS.md`)), [
      `${worktree}/AGENTS.md`,
      `${directory}/AGENTS.md`
    ])
  })

  it("with a CLAUDE.md carried, watches AGENTS.md too: a new one takes over", () => {
    assert.deepStrictEqual(projectFiles(scope(`${directory}/CLAUDE.md`)), [
      `${worktree}/AGENTS.md`,
      `${worktree}/CLAUDE.md`,
      `${directory}/AGENTS.md`,
      `${directory}/CLAUDE.md`
    ])
  })

  it('outside git, where OpenCode reports the worktree as "/", watches every folder up to the root, as it looks', () => {
    const watched = watchedInstructions({ ...scope(), stop: "/" })
    assert.deepStrictEqual(
      watched.filter((path) => path.endsWith("/AGENTS.md")).sort(),
      [
        "/AGENTS.md",
        `${globalConfigDir}/AGENTS.md`,
        "/root/AGENTS.md",
        `${worktree}/AGENTS.md`,
        `${directory}/AGENTS.md`
      ].sort()
    )
  })

  it("watches the global AGENTS.md, carried or not", () => {
    assert.include(watchedInstructions(scope(`${worktree}/AGENTS.md`)), `${globalConfigDir}/AGENTS.md`)
  })

  it("with OpenCode's CLAUDE.md files switched off (OPENCODE_DISABLE_CLAUDE_CODE), watches none of them", () => {
    const watched = watchedInstructions({ ...scope(), claudeCode: false })
    assert.deepStrictEqual(watched.filter((path) => path.endsWith("CLAUDE.md")), [])
    assert.include(watched, `${directory}/CONTEXT.md`)
  })

  it("with the project's files switched off (OPENCODE_DISABLE_PROJECT_CONFIG), watches only the global ones", () => {
    assert.deepStrictEqual([...watchedInstructions({ ...scope(), projectFiles: false })].sort(), [
      `${home}/.claude/CLAUDE.md`,
      `${globalConfigDir}/AGENTS.md`
    ])
  })

  it("watches ~/.claude/CLAUDE.md while the system prompt carries no global AGENTS.md, which OpenCode reads first", () => {
    assert.deepStrictEqual([
      watchedInstructions(scope()).includes(`${home}/.claude/CLAUDE.md`),
      watchedInstructions(scope(`${globalConfigDir}/AGENTS.md`)).includes(`${home}/.claude/CLAUDE.md`)
    ], [true, false])
  })
})

describe("watchedInstructions on Windows", () => {
  const windows: InstructionScope = {
    carried: new Set(["C:\\Users\\me\\app\\AGENTS.md", "https://example.com/rules.md"]),
    directory: "C:\\Users\\me\\app\\pkg",
    stop: "C:\\Users\\me\\app",
    globalConfigDir: "C:\\Users\\me\\.config\\opencode",
    home: "C:\\Users\\me",
    claudeCode: true,
    projectFiles: true
  }

  it("watches the files OpenCode would read, by Windows paths, and no URL", () => {
    assert.deepStrictEqual([...watchedInstructions(windows)].sort(), [
      "C:\\Users\\me\\.claude\\CLAUDE.md",
      "C:\\Users\\me\\.config\\opencode\\AGENTS.md",
      "C:\\Users\\me\\app\\AGENTS.md",
      "C:\\Users\\me\\app\\pkg\\AGENTS.md"
    ])
  })

  it('outside git, where OpenCode reports the worktree as "/", watches every folder up to the drive\'s root', () => {
    const project = watchedInstructions({ ...windows, carried: new Set(), stop: "/" })
      .filter((path) => path.endsWith("AGENTS.md") && !path.includes(".config"))
    assert.deepStrictEqual(project, [
      "C:\\Users\\me\\app\\pkg\\AGENTS.md",
      "C:\\Users\\me\\app\\AGENTS.md",
      "C:\\Users\\me\\AGENTS.md",
      "C:\\Users\\AGENTS.md",
      "C:\\AGENTS.md"
    ])
  })
})

describe("stampOf", () => {
  const digested = (text: string) => () => `digest of ${text}`

  it("a file whose time and size did not move is not read again", () => {
    const previous = stampOf(1_000, 12, undefined, digested("# Rules"))
    assert.strictEqual(stampOf(1_000, 12, previous, () => assert.fail("read again")), previous)
  })

  it("a file whose time moved is read again", () => {
    const previous = stampOf(1_000, 12, undefined, digested("# Rules"))
    assert.deepStrictEqual(stampOf(2_000, 12, previous, digested("# Rulez")), {
      seen: "2000:12",
      content: "digest of # Rulez"
    })
  })
})

describe("stampsDiffer", () => {
  const agents = `${worktree}/AGENTS.md`
  const stamp = (modifiedMs: number, text: string) => stampOf(modifiedMs, text.length, undefined, () => text)
  const before = new Map([[agents, stamp(1_000, "# Rules")], [`${worktree}/CLAUDE.md`, absent]])

  it("a file edited since tells a change", () => {
    assert.isTrue(stampsDiffer(before, new Map([[agents, stamp(2_000, "# Rules, v2")]])))
  })

  it("a file saved again with the same text tells none: OpenCode sends the same instructions", () => {
    assert.isFalse(stampsDiffer(before, new Map([[agents, stamp(2_000, "# Rules")]])))
  })

  it("a file created since tells a change", () => {
    assert.isTrue(stampsDiffer(before, new Map([[`${worktree}/CLAUDE.md`, stamp(2_000, "# C")]])))
  })

  it("a file gone since tells a change", () => {
    assert.isTrue(stampsDiffer(before, new Map([[agents, absent]])))
  })

  it("the same files as they were tell none", () => {
    assert.isFalse(stampsDiffer(before, new Map(before)))
  })

  it("a file only the later look saw tells none", () => {
    assert.isFalse(stampsDiffer(before, new Map([[`${directory}/AGENTS.md`, stamp(2_000, "# A")]])))
  })
})
