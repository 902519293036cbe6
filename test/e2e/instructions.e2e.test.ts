import { rmSync, utimesSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { assert, describe, it } from "vitest"
import { call, done, holdsPlaceholder, read, sentWhole, sourceFile } from "./support/fixtures.ts"
import type { RecordedRequest, Reply } from "./support/model-server.ts"
import { requestAfter, resultOf, systemText } from "./support/requests.ts"
import { type Scenario, useScenario } from "./support/scenario.ts"

/**
 * The project's instruction file changes during a session. OpenCode reads the instruction files from disk for each
 * request after the plugin's transform and puts them in the system prompt, so the request after the change is
 * written to the prompt cache whole, with the plugin or without it: a free moment to apply what waits, which the
 * plugin tells from the files on disk. Default scheduling (`cache.mode: "auto"`); a small duplicate (a.ts read twice,
 * a moment apart) waits on the warm cache.
 */

const files = {
  "src/a.ts": sourceFile("alpha"),
  ".opencode/dcp.jsonc": `${JSON.stringify({ cache: { mode: "auto" } }, null, 2)}\n`
}

/** Reads a.ts twice, then makes `change`; the request after the second read and the one after the change. */
const run = async (s: Scenario, change: Reply, prefix: string) => {
  const session = await s.newSession()
  s.model.script([read(s, "src/a.ts", `${prefix}_1`), read(s, "src/a.ts", `${prefix}_2`), change, done])
  await s.prompt(session, "read a.ts twice, then change a file")
  return {
    waiting: requestAfter(s.requests(), `${prefix}_2`),
    after: requestAfter(s.requests(), `${prefix}_3`)
  }
}

const duplicateOf = (request: RecordedRequest, prefix: string) => resultOf(request, `${prefix}_1`)!

describe("the model changes the project's AGENTS.md", () => {
  const scenario = useScenario({ files, mainModel: "claude-fake" })

  it("a file of no instructions written: the system prompt stays, and the small duplicate waits", async () => {
    const s = scenario()
    const { waiting, after } = await run(
      s,
      call("write", { filePath: s.path("NOTES.md"), content: "notes" }, "n_3"),
      "n"
    )
    assert.strictEqual(systemText(after), systemText(waiting))
    assert.isTrue(sentWhole(duplicateOf(after, "n")))
  })

  it("CLAUDE.md written while OpenCode skips CLAUDE.md files (OPENCODE_DISABLE_CLAUDE_CODE): the duplicate waits", async () => {
    const s = scenario()
    const write = call("write", { filePath: s.path("CLAUDE.md"), content: "Use tabs.\n" }, "k_3")
    const { waiting, after } = await run(s, write, "k")
    assert.strictEqual(systemText(after), systemText(waiting))
    assert.isTrue(sentWhole(duplicateOf(after, "k")))
  })

  it("AGENTS.md created: the next request carries it, and the duplicate with it", async () => {
    const s = scenario()
    const write = call("write", { filePath: s.path("AGENTS.md"), content: "Use tabs.\n" }, "c_3")
    const { waiting, after } = await run(s, write, "c")
    assert.notInclude(systemText(waiting), "Use tabs.")
    assert.include(systemText(after), `Instructions from: ${s.path("AGENTS.md")}\nUse tabs.`)
    assert.isTrue(sentWhole(duplicateOf(waiting, "c")))
    assert.isTrue(holdsPlaceholder(duplicateOf(after, "c")))
  })

  it("AGENTS.md edited: the next request carries the new text, and the duplicate with it", async () => {
    const s = scenario()
    const edit = call(
      "edit",
      { filePath: s.path("AGENTS.md"), oldString: "Use tabs.", newString: "Use spaces." },
      "e_3"
    )
    const { waiting, after } = await run(s, edit, "e")
    assert.include(systemText(waiting), "Use tabs.")
    assert.include(systemText(after), "Use spaces.")
    assert.isTrue(sentWhole(duplicateOf(waiting, "e")))
    assert.isTrue(holdsPlaceholder(duplicateOf(after, "e")))
  })
})

describe("the user edits the project's AGENTS.md outside OpenCode, between two prompts", () => {
  const scenario = useScenario({ files: { ...files, "AGENTS.md": "Use tabs.\n" }, mainModel: "claude-fake" })

  /** Reads a.ts twice, then `between` runs, then a second prompt: its first request. */
  const run = async (s: Scenario, between: () => void, prefix: string) => {
    const session = await s.newSession()
    s.model.script([read(s, "src/a.ts", `${prefix}_1`), read(s, "src/a.ts", `${prefix}_2`), done])
    await s.prompt(session, "read a.ts twice")
    const waiting = requestAfter(s.requests(), `${prefix}_2`)
    between()
    s.model.script([done])
    await s.prompt(session, "anything else?")
    return { waiting, next: s.requests().at(-1)! }
  }

  it("nothing edited: the next prompt's request sends the same system prompt, and the duplicate still waits", async () => {
    const s = scenario()
    const { waiting, next } = await run(s, () => {}, "u")
    assert.strictEqual(systemText(next), systemText(waiting))
    assert.isTrue(sentWhole(duplicateOf(next, "u")))
  })

  it("AGENTS.md saved again unchanged (a checkout, an editor's save): the same system prompt, the duplicate waits", async () => {
    const s = scenario()
    const saveAgain = () => {
      writeFileSync(s.path("AGENTS.md"), "Use tabs.\n")
      utimesSync(s.path("AGENTS.md"), new Date("2100-01-01"), new Date("2100-01-01"))
    }
    const { waiting, next } = await run(s, saveAgain, "t")
    assert.strictEqual(systemText(next), systemText(waiting))
    assert.isTrue(sentWhole(duplicateOf(next, "t")))
  })

  it("AGENTS.md edited: the next prompt's request carries the new text, and the duplicate with it", async () => {
    const s = scenario()
    const { waiting, next } = await run(s, () => writeFileSync(s.path("AGENTS.md"), "Use two spaces.\n"), "v")
    assert.include(systemText(waiting), "Use tabs.")
    assert.include(systemText(next), `Instructions from: ${s.path("AGENTS.md")}\nUse two spaces.`)
    assert.isTrue(sentWhole(duplicateOf(waiting, "v")))
    assert.isTrue(holdsPlaceholder(duplicateOf(next, "v")))
  })

  it("an AGENTS.md created above a project outside git: OpenCode reads it, and the duplicate goes with it", async () => {
    const s = scenario()
    const above = join(s.root, "AGENTS.md")
    const { waiting, next } = await run(s, () => writeFileSync(above, "Keep answers short.\n"), "x")
    assert.notInclude(systemText(waiting), "Keep answers short.")
    assert.include(systemText(next), `Instructions from: ${above}\nKeep answers short.`)
    assert.isTrue(sentWhole(duplicateOf(waiting, "x")))
    assert.isTrue(holdsPlaceholder(duplicateOf(next, "x")))
  })

  it("a global AGENTS.md created: the next prompt's request carries it, and the duplicate with it", async () => {
    const s = scenario()
    const global = join(s.opencode().env.XDG_CONFIG_HOME!, "opencode", "AGENTS.md")
    // Every project of the server reads the global file: it goes when the test ends.
    try {
      const { waiting, next } = await run(s, () => writeFileSync(global, "Answer in French.\n"), "w")
      assert.notInclude(systemText(waiting), "Answer in French.")
      assert.include(systemText(next), `Instructions from: ${global}\nAnswer in French.`)
      assert.isTrue(sentWhole(duplicateOf(waiting, "w")))
      assert.isTrue(holdsPlaceholder(duplicateOf(next, "w")))
    } finally {
      rmSync(global, { force: true })
    }
  })

  describe("with an empty AGENTS.md beside a CONTEXT.md", () => {
    const emptied = useScenario({
      files: { ...files, "AGENTS.md": "", "CONTEXT.md": "Use tabs.\n" },
      mainModel: "claude-fake"
    })

    it("CONTEXT.md edited: OpenCode reads the empty AGENTS.md alone, the system prompt stays, the duplicate waits", async () => {
      const s = emptied()
      const { waiting, next } = await run(s, () => writeFileSync(s.path("CONTEXT.md"), "Use two spaces.\n"), "m")
      assert.notInclude(systemText(waiting), "Instructions from:")
      assert.strictEqual(systemText(next), systemText(waiting))
      assert.isTrue(sentWhole(duplicateOf(next, "m")))
    })
  })
})
