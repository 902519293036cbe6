import { assert, describe, it } from "vitest"
import {
  absent,
  carriedInstructions,
  instructionCandidates,
  type InstructionScope,
  instructionsChanged,
  readInstructions,
  type Stamp,
  stampOf
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

const watchedInstructions = (scope: InstructionScope) => instructionCandidates(scope).watched

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

  it("watches each name in the directory and every folder up to the worktree, whatever the system prompt carried", () => {
    const expected = [
      `${worktree}/AGENTS.md`,
      `${worktree}/CLAUDE.md`,
      `${worktree}/CONTEXT.md`,
      `${directory}/AGENTS.md`,
      `${directory}/CLAUDE.md`,
      `${directory}/CONTEXT.md`
    ]
    assert.deepStrictEqual(projectFiles(scope()), expected)
    assert.deepStrictEqual(projectFiles(scope(`${worktree}/AGENTS.md`)), expected)
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

  it("watches the global AGENTS.md and ~/.claude/CLAUDE.md", () => {
    assert.includeMembers([...watchedInstructions(scope())], [
      `${globalConfigDir}/AGENTS.md`,
      `${home}/.claude/CLAUDE.md`
    ])
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
})

describe("readInstructions", () => {
  const onDisk = (...paths: ReadonlyArray<string>) => (path: string) => paths.includes(path)
  const read = (within: InstructionScope, ...paths: ReadonlyArray<string>) =>
    [...readInstructions(instructionCandidates(within), onDisk(...paths))].sort()

  it("reads the project's files of the first name found in any of its folders, and none of the later names", () => {
    assert.deepStrictEqual(
      read(scope(), `${worktree}/AGENTS.md`, `${directory}/CLAUDE.md`, `${directory}/CONTEXT.md`),
      [`${worktree}/AGENTS.md`]
    )
    assert.deepStrictEqual(read(scope(), `${worktree}/CLAUDE.md`, `${directory}/CLAUDE.md`), [
      `${worktree}/CLAUDE.md`,
      `${directory}/CLAUDE.md`
    ])
  })

  it("reads the global AGENTS.md, or while there is none ~/.claude/CLAUDE.md", () => {
    const claude = `${home}/.claude/CLAUDE.md`
    assert.deepStrictEqual(read(scope(), `${globalConfigDir}/AGENTS.md`, claude), [`${globalConfigDir}/AGENTS.md`])
    assert.deepStrictEqual(read(scope(), claude), [claude])
  })

  it("reads no CLAUDE.md while OpenCode skips them, so a CONTEXT.md is read instead", () => {
    assert.deepStrictEqual(
      read({ ...scope(), claudeCode: false }, `${directory}/CLAUDE.md`, `${directory}/CONTEXT.md`),
      [`${directory}/CONTEXT.md`]
    )
  })

  it("reads the other files the system prompt carried while they are there", () => {
    const rules = `${worktree}/docs/rules.md`
    assert.deepStrictEqual(read(scope(rules), rules), [rules])
    assert.deepStrictEqual(read(scope(rules)), [])
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

  it("watches the files OpenCode may read, by Windows paths, and no URL", () => {
    assert.deepStrictEqual([...watchedInstructions(windows)].sort(), [
      "C:\\Users\\me\\.claude\\CLAUDE.md",
      "C:\\Users\\me\\.config\\opencode\\AGENTS.md",
      "C:\\Users\\me\\app\\AGENTS.md",
      "C:\\Users\\me\\app\\CLAUDE.md",
      "C:\\Users\\me\\app\\CONTEXT.md",
      "C:\\Users\\me\\app\\pkg\\AGENTS.md",
      "C:\\Users\\me\\app\\pkg\\CLAUDE.md",
      "C:\\Users\\me\\app\\pkg\\CONTEXT.md"
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

describe("instructionsChanged", () => {
  const agents = `${worktree}/AGENTS.md`
  const claude = `${directory}/CLAUDE.md`
  const stamp = (modifiedMs: number, text: string) => stampOf(modifiedMs, text.length, undefined, () => text)
  const looks = (files: Readonly<Record<string, Stamp>>): ReadonlyMap<string, Stamp> =>
    new Map(watchedInstructions(scope()).map((path) => [path, files[path] ?? absent]))
  const changed = (before: Readonly<Record<string, Stamp>>, now: Readonly<Record<string, Stamp>>) =>
    instructionsChanged(instructionCandidates(scope()), looks(before), looks(now))

  it("a file read edited since tells a change", () => {
    assert.isTrue(changed({ [agents]: stamp(1_000, "# Rules") }, { [agents]: stamp(2_000, "# Rules, v2") }))
  })

  it("a file read saved again with the same text tells none: OpenCode sends the same instructions", () => {
    assert.isFalse(changed({ [agents]: stamp(1_000, "# Rules") }, { [agents]: stamp(2_000, "# Rules") }))
  })

  it("a file read gone since tells a change", () => {
    assert.isTrue(changed({ [agents]: stamp(1_000, "# Rules") }, {}))
  })

  it("an AGENTS.md created where a CLAUDE.md was read tells a change: OpenCode reads it instead", () => {
    assert.isTrue(
      changed({ [claude]: stamp(1_000, "# C") }, { [claude]: stamp(1_000, "# C"), [agents]: stamp(2_000, "# A") })
    )
  })

  it("a CLAUDE.md created or edited beside an AGENTS.md, even an empty one, tells none: OpenCode does not read it", () => {
    assert.isFalse(
      changed({ [agents]: stamp(1_000, "") }, { [agents]: stamp(1_000, ""), [claude]: stamp(2_000, "# C") })
    )
    assert.isFalse(
      changed(
        { [agents]: stamp(1_000, ""), [claude]: stamp(1_000, "# C") },
        { [agents]: stamp(1_000, ""), [claude]: stamp(2_000, "# C, v2") }
      )
    )
  })

  it("~/.claude/CLAUDE.md edited while a global AGENTS.md is there, even an empty one, tells none", () => {
    const global = `${globalConfigDir}/AGENTS.md`
    const personal = `${home}/.claude/CLAUDE.md`
    assert.isFalse(
      changed(
        { [global]: stamp(1_000, ""), [personal]: stamp(1_000, "# Mine") },
        { [global]: stamp(1_000, ""), [personal]: stamp(2_000, "# Mine, v2") }
      )
    )
    assert.isTrue(changed({ [personal]: stamp(1_000, "# Mine") }, { [personal]: stamp(2_000, "# Mine, v2") }))
  })

  it("the same files as they were tell none", () => {
    const files = { [agents]: stamp(1_000, "# Rules") }
    assert.isFalse(changed(files, files))
  })

  it("a file the earlier look did not see counts as it is now", () => {
    const now = looks({ [agents]: stamp(2_000, "# Rules") })
    assert.isFalse(instructionsChanged(instructionCandidates(scope()), new Map(), now))
  })
})
