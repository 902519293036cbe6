import { randomUUID } from "node:crypto"
import { readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, describe, it } from "vitest"
import { dcp, flat, notes } from "./support/commands.ts"
import { call, done, holdsPlaceholder, placeholder, read, sourceFile } from "./support/fixtures.ts"
import { argumentsOf, requestAfter, resultOf, toolNames } from "./support/requests.ts"
import { type Scenario, useScenario } from "./support/scenario.ts"
import { waitFor } from "./support/wait.ts"

// Scenarios whose project config (`.opencode/dcp.jsonc`, read over the global one) changes a setting the command and
// scheduling behaviour depend on. Every scenario of the tier applies prunes at once (`cache.mode: "immediate"` in
// the global file, see scenario.ts); those here that are about the default, "auto", set it back.

const files = (dcpConfig: unknown) => ({
  "src/a.ts": sourceFile("alpha"),
  "src/b.ts": sourceFile("beta"),
  "src/c.ts": sourceFile("gamma"),
  "src/big.ts": sourceFile("big", 400),
  ".opencode/dcp.jsonc": `${JSON.stringify(dcpConfig, null, 2)}\n`
})

const fakeLanguageServer = new URL("./support/fake-lsp.mjs", import.meta.url).pathname

const alphaEnd = 'alpha59 = "alpha line 59"'

/**
 * Reads a.ts twice in a row: the first read is a duplicate of ~800 tokens, worth far less than the prompt-cache
 * rebuild applying it would cost, with the previous request a moment ago (a warm cache under the default TTL).
 */
const readTwice = async (s: Scenario, session: string, prefix: string) => {
  s.model.script([read(s, "src/a.ts", `${prefix}_1`), read(s, "src/a.ts", `${prefix}_2`), done])
  await s.prompt(session, "read a.ts twice")
  return requestAfter(s.requests(), `${prefix}_2`)
}

// One OpenCode for two independent settings (each test shows one), to keep the tier lean.
describe('commands.enabled: false and cache.mode "auto" (the default) in the project config', () => {
  const scenario = useScenario({ files: files({ commands: { enabled: false }, cache: { mode: "auto" } }) })

  it("removes /dcp: OpenCode does not know the command and no note is stored; the pruning tools still work", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([read(s, "src/a.ts", "off_1"), call("discard", { ids: ["noise", "1"] }, "off_2"), done])
    await s.prompt(session, "read a.ts, then discard it")
    // The plugin is loaded: its tools are offered and work.
    assert.includeMembers([...toolNames(s.requests()[0]!)], ["discard", "extract", "recall"])
    assert.match(
      resultOf(requestAfter(s.requests(), "off_2"), "off_1") ?? "",
      placeholder("[pruned: src/a.ts lines 1-60; id 1]")
    )
    await s.waitForNote(session, "discarded")

    const listed = await s.opencode().api<ReadonlyArray<{ name: string }>>("GET", "/command")
    assert.notInclude(listed.data.map((command) => command.name), "dcp")
    const requestsBefore = s.requests().length
    const notesBefore = await notes(s, session)
    const events = await s.subscribe()
    try {
      const response = await s.command(session, "dcp", "stats")
      // OpenCode answers an unknown command with HTTP 500 and says which in a session.error event.
      assert.strictEqual(response.status, 500)
      const error = await waitFor(
        "a session.error naming the command",
        () =>
          events.events.find((event) =>
            event.type === "session.error" && JSON.stringify(event.properties).includes("Command not found")
          )
      )
      const properties = error.properties as { sessionID?: unknown; error?: { data?: { message?: unknown } } }
      assert.strictEqual(properties.sessionID, session)
      assert.match(String(properties.error?.data?.message), /^Command not found: "dcp"\./)
    } finally {
      events.close()
    }
    await s.waitIdle(session)
    assert.strictEqual(s.requests().length, requestsBefore)
    assert.deepStrictEqual(await notes(s, session), notesBefore)
  })

  it("a small duplicate on a warm cache waits; discard and extract apply at once", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([
      read(s, "src/a.ts", "auto_1"),
      read(s, "src/a.ts", "auto_2"),
      read(s, "src/b.ts", "auto_3"),
      read(s, "src/c.ts", "auto_4"),
      call("discard", { ids: ["noise", "3"] }, "auto_5"),
      call("extract", { ids: ["4"], distillation: ["gamma exports gamma0 to gamma59"] }, "auto_6"),
      done
    ])
    await s.prompt(session, "read a.ts twice, b.ts and c.ts, then discard b.ts and extract c.ts")
    const requests = s.requests()

    // The duplicate is found on the request after auto_2 but is not worth a cache rebuild: sent in full, then and
    // on every later request of this run.
    for (const callID of ["auto_2", "auto_3", "auto_4", "auto_5", "auto_6"]) {
      assert.include(resultOf(requestAfter(requests, callID), "auto_1"), alphaEnd, `request after ${callID}`)
    }
    // The model's prunes do not wait.
    const afterDiscard = requestAfter(requests, "auto_5")
    assert.match(resultOf(afterDiscard, "auto_3") ?? "", placeholder("[pruned: src/b.ts lines 1-60; id 3]"))
    assert.include(resultOf(afterDiscard, "auto_4"), "gamma line 59")
    assert.match(
      resultOf(requestAfter(requests, "auto_6"), "auto_4") ?? "",
      placeholder("[pruned after extract: src/c.ts lines 1-60; id 4]")
    )
    const note = await s.waitForNote(session, "extracted")
    assert.match(note, /\b3 {2}read src\/b\.ts {2}discarded\b/)
    assert.notInclude(note, "duplicate")
  })
})

describe("cache.horizon: 1000 in auto mode", () => {
  const scenario = useScenario({ files: files({ cache: { mode: "auto", horizon: 1000 } }) })

  it("a duplicate waits until keeping it has cost twice its rebuild (cache.patience), then applies on the warm cache", async () => {
    const s = scenario()
    const session = await s.newSession()
    // big.ts read twice: ~5k tokens pending. Applying costs rewriting the ~5k after it at 1.15 more than reading it;
    // waiting costs 0.1 x 5k a request: about a dozen requests for one rebuild, two dozen for two, made here by small
    // commands.
    const padding = Array.from(
      { length: 32 },
      (_, i) => call("bash", { command: `echo ${i}`, description: "echo" }, `pad_${i}`)
    )
    s.model.script([read(s, "src/big.ts", "wait_1"), read(s, "src/big.ts", "wait_2"), ...padding, done])
    await s.prompt(session, "read big.ts twice, then echo")
    const requests = s.requests()
    const applied = requests.findIndex((request) =>
      resultOf(request, "wait_1")?.startsWith("[pruned duplicate") === true
    )
    const found = requests.findIndex((request) => resultOf(request, "wait_2") !== undefined)
    assert.isAbove(found, 0)
    // Waited on the warm cache for several requests, then applied and kept applied.
    assert.isAtLeast(applied - found, 16)
    for (const request of requests.slice(applied)) {
      assert.match(resultOf(request, "wait_1") ?? "", placeholder("[pruned duplicate: src/big.ts lines 1-400; id 1]"))
    }
    await s.waitForNote(session, "duplicate")
    assert.match(
      flat(await dcp(s, session, "stats")),
      / prompt cache: prunes reached the model 1 time \(0 with the cache already expired\); ~[\d.]+k? cached tokens were rebuilt for them \(estimated\)\. /
    )
  })
})

describe("cache.ttlSeconds: 0 in auto mode", () => {
  const scenario = useScenario({ files: files({ cache: { mode: "auto", ttlSeconds: 0 } }) })

  it("every gap counts as a cold cache: the small duplicate is pruned on the next request, at no rebuild cost", async () => {
    const s = scenario()
    const session = await s.newSession()
    const request = await readTwice(s, session, "cold")
    assert.match(resultOf(request, "cold_1") ?? "", placeholder("[pruned duplicate: src/a.ts lines 1-60; id 1]"))
    await s.waitForNote(session, "duplicate")
    assert.match(
      flat(await dcp(s, session, "stats")),
      / prompt cache: prunes reached the model 1 time \(1 with the cache already expired\); no cache was rebuilt for them\. /
    )
  })
})

describe("strategies.staleOutputs with a low trigger, keeping the 2 most recent calls", () => {
  const languageServerLog = join(tmpdir(), `dcp-e2e-lsp-${randomUUID()}.log`)
  const scenario = useScenario({
    files: {
      ...files({ strategies: { staleOutputs: { trigger: 1000, keepRecent: 2, clearAtLeast: 0 } } }),
      // A language server reporting every line that says BROKEN (OpenCode appends its errors to an edit's result).
      ".opencode/opencode.json": `${
        JSON.stringify({
          lsp: { fake: { command: [process.execPath, fakeLanguageServer, languageServerLog], extensions: [".ts"] } }
        })
      }\n`
    }
  })
  afterAll(() => rm(languageServerLog, { force: true }))

  it("an old edit reaches the model with its strings as placeholders, its path and result kept, the file edited", async () => {
    const s = scenario()
    const session = await s.newSession()
    const oldString = 'export const alpha3 = "alpha line 3"\n'
    const newString = sourceFile("epsilon", 30)
    s.model.script([
      read(s, "src/a.ts", "old_1"),
      call("edit", { filePath: s.path("src/a.ts"), oldString, newString }, "old_2"),
      read(s, "src/b.ts", "old_3"),
      read(s, "src/c.ts", "old_4"),
      done
    ])
    await s.prompt(session, "read a.ts, edit it, then read b.ts and c.ts")

    // While the edit is among the 2 most recent calls, it is sent as the model wrote it.
    const recent = argumentsOf(requestAfter(s.requests(), "old_3"), "old_2")
    assert.deepStrictEqual(recent, { filePath: s.path("src/a.ts"), oldString, newString })
    const after = requestAfter(s.requests(), "old_4")
    const edit = argumentsOf(after, "old_2")
    assert.strictEqual(edit?.filePath, s.path("src/a.ts"))
    assert.match(String(edit?.newString), placeholder("[pruned newString of an old change; id 2]"))
    assert.notInclude(JSON.stringify(after.messages), "epsilon29")
    assert.match(resultOf(after, "old_2") ?? "", /Edit applied successfully/)
    assert.include(await readFile(s.path("src/a.ts"), "utf8"), "epsilon29")
  })

  it("the newest read of each of the 3 files last read or edited stays in full however old; an older file's is masked", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([
      read(s, "src/a.ts", "work_1"),
      read(s, "src/b.ts", "work_2"),
      read(s, "src/c.ts", "work_3"),
      read(s, "src/big.ts", "work_4"),
      call("edit", {
        filePath: s.path("src/b.ts"),
        oldString: 'export const beta3 = "beta line 3"\n',
        newString: 'export const beta3 = "beta line three"\n'
      }, "work_5"),
      call("grep", { pattern: "export const gamma2", path: s.path("src") }, "work_6"),
      call("grep", { pattern: "export const big2", path: s.path("src") }, "work_7"),
      done
    ])
    await s.prompt(session, "read four files, edit b.ts, then search")

    // The working files are b.ts (edited last), big.ts and c.ts; a.ts was read before all three.
    const last = requestAfter(s.requests(), "work_7")
    // An earlier test of this project edited a.ts: as many lines as it has now.
    assert.match(resultOf(last, "work_1") ?? "", /^\[pruned: src\/a\.ts lines 1-\d+; (?:id|recall) 1\]$/)
    assert.include(resultOf(last, "work_2"), 'beta59 = "beta line 59"')
    assert.include(resultOf(last, "work_3"), 'gamma59 = "gamma line 59"')
    assert.include(resultOf(last, "work_4"), 'big399 = "big line 399"')
  })

  it("an old edit's language server errors reach the model as a placeholder with its content, its confirmation kept", async () => {
    const s = scenario()
    const session = await s.newSession()
    // OpenCode starts the language server and opens the file in the background of a read, and gives an edit's
    // diagnostics 5 s: on busy cores that background work can outlast them, so the edit waits until it is done.
    s.model.script([read(s, "src/big.ts", "lsp_1"), done])
    await s.prompt(session, "read big.ts")
    await waitFor(
      "the language server to have big.ts open",
      async () => (await readFile(languageServerLog, "utf8").catch(() => "")).includes(`${s.path("src/big.ts")}\n`)
    )
    s.model.script([
      call("edit", {
        filePath: s.path("src/big.ts"),
        oldString: 'export const big3 = "big line 3"\n',
        newString: "export const big3 = BROKEN\n"
      }, "lsp_2"),
      read(s, "src/b.ts", "lsp_3"),
      read(s, "src/c.ts", "lsp_4"),
      done
    ])
    await s.prompt(session, "break big.ts, then read b.ts and c.ts")

    const recent = resultOf(requestAfter(s.requests(), "lsp_2"), "lsp_2")
    assert.match(
      recent ?? "",
      /^Edit applied successfully\.\n\nLSP errors detected in this file, please fix:\n<diagnostics /
    )
    assert.include(recent, "ERROR [4:21] Cannot find name 'BROKEN'.")
    const old = requestAfter(s.requests(), "lsp_4")
    assert.match(
      resultOf(old, "lsp_2") ?? "",
      /^Edit applied successfully\.\n\n\[pruned LSP errors of an old change; (?:id|recall) 2\]$/
    )
    assert.match(
      String(argumentsOf(old, "lsp_2")?.newString),
      placeholder("[pruned newString of an old change; id 2]")
    )
  })

  it("a read that lists a directory takes no working file's place", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([
      read(s, "src/a.ts", "dir_1"),
      read(s, "src/b.ts", "dir_2"),
      read(s, "src/c.ts", "dir_3"),
      read(s, "src", "dir_4"),
      call("bash", { command: "echo one", description: "Print one" }, "dir_5"),
      call("bash", { command: "echo two", description: "Print two" }, "dir_6"),
      done
    ])
    await s.prompt(session, "read three files, list src, then run two commands")

    // The working files are c.ts, b.ts and a.ts: the listing of src/ is no file's content. Older than the 2 most
    // recent calls, it is masked; a.ts's read, as old, stays whole (with the plugin's tag: sent by the plugin).
    assert.include(resultOf(requestAfter(s.requests(), "dir_4"), "dir_4"), "<type>directory</type>")
    const last = requestAfter(s.requests(), "dir_6")
    assert.isTrue(holdsPlaceholder(resultOf(last, "dir_4") ?? ""))
    assert.match(resultOf(last, "dir_1") ?? "", /^\[id 1\]\n[\s\S]*alpha59 = "alpha line 59"/)
  })
})
