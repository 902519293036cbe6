import { assert, describe, it } from "vitest"
import { call, done, placeholder, read, sourceFile } from "./support/fixtures.ts"
import {
  argumentsOf,
  contentText,
  lastMessageText,
  occurrences,
  requestAfter,
  requestText,
  resultOf,
  systemText,
  toolNames
} from "./support/requests.ts"
import { dcp, flat, notes, tokenFigure } from "./support/commands.ts"
import { type RecordedRequest, reportedPromptTokens } from "./support/model-server.ts"
import { type Scenario, useScenario } from "./support/scenario.ts"
import { pluginState } from "./support/opencode.ts"
import { waitFor } from "./support/wait.ts"

// The default configuration (with prunes applied at once, see scenario.ts). Each test runs in its own session of one
// shared `opencode serve`, so stable IDs start at 1 in each.
const scenario = useScenario({
  files: {
    "src/a.ts": sourceFile("alpha"),
    "src/b.ts": sourceFile("beta"),
    "src/c.ts": sourceFile("gamma"),
    "src/d.ts": sourceFile("delta")
  }
})

describe("the plugin in a main session", () => {
  it("loads: discard and extract are offered, the system section is sent", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([done])
    await s.prompt(session, "hello")

    const [first] = s.requests()
    assert.includeMembers([...toolNames(first!)], ["discard", "extract"])
    assert.include(systemText(first!), "## Context pruning")
  })

  it("its tools' argument schemas are sent without the JSON Schema dialect's URL; OpenCode's own tools keep theirs", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([done])
    await s.prompt(session, "hello")

    const parameters = new Map(
      (s.requests()[0]!.tools ?? []).map((tool) => [
        tool.function.name,
        (tool.function as { parameters?: Record<string, unknown> }).parameters
      ])
    )
    const ids = { type: "array", items: { type: "string" } }
    assert.deepStrictEqual(parameters.get("discard"), { type: "object", properties: { ids }, required: ["ids"] })
    assert.deepStrictEqual(parameters.get("extract"), {
      type: "object",
      properties: { ids, distillation: ids },
      required: ["ids", "distillation"]
    })
    assert.deepStrictEqual(parameters.get("recall"), {
      type: "object",
      properties: { ids, query: { type: "string" } }
    })
    assert.strictEqual(parameters.get("read")?.$schema, "https://json-schema.org/draft/2020-12/schema")
  })

  it("deduplication: the older of two identical reads reaches the model as a placeholder", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([read(s, "src/a.ts", "dup_1"), read(s, "src/a.ts", "dup_2"), done])
    await s.prompt(session, "read a.ts twice")

    const request = requestAfter(s.requests(), "dup_2")
    assert.match(resultOf(request, "dup_1") ?? "", placeholder("[pruned duplicate: src/a.ts lines 1-60; id 1]"))
    assert.include(resultOf(request, "dup_2"), 'alpha59 = "alpha line 59"')
    assert.match(await s.waitForNote(session, "duplicate"), /\b1 {2}read src\/a\.ts {2}duplicate\b/)
  })

  it("supersede writes: written content that was read back reaches the model once", async () => {
    const s = scenario()
    const session = await s.newSession()
    const marker = "SUPERSEDE_MARKER_7f3a"
    const content = `export const marker = "${marker}"\n${sourceFile("delta", 40)}`
    s.model.script([
      call("write", { filePath: s.path("src/new.ts"), content }, "write_1"),
      read(s, "src/new.ts", "write_2"),
      done
    ])
    await s.prompt(session, "write new.ts, then read it")

    const beforeRead = requestAfter(s.requests(), "write_1")
    assert.strictEqual(occurrences(requestText(beforeRead), marker), 1)
    const afterRead = requestAfter(s.requests(), "write_2")
    assert.strictEqual(occurrences(requestText(afterRead), marker), 1)
    assert.include(resultOf(afterRead, "write_2"), marker)
    assert.match(
      String(argumentsOf(afterRead, "write_1")?.content),
      placeholder("[pruned content; the file was read again later; id 1]")
    )
  })

  it("prunable outputs carry their stable ID from their first send, and nothing is added after the last message", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([read(s, "src/a.ts", "tail_1"), read(s, "src/b.ts", "tail_2"), done])
    await s.prompt(session, "read a.ts and b.ts")

    const requests = s.requests()
    assert.strictEqual(requests.length, 3)
    for (const request of requests) {
      assert.include(systemText(request), "## Context pruning")
      assert.notInclude(lastMessageText(request), "Context note")
    }
    assert.match(resultOf(requestAfter(requests, "tail_1"), "tail_1") ?? "", /^\[id 1\]\n<path>/)
    const last = requestAfter(requests, "tail_2")
    assert.match(resultOf(last, "tail_1") ?? "", /^\[id 1\]\n<path>/)
    assert.match(resultOf(last, "tail_2") ?? "", /^\[id 2\]\n<path>/)
    assert.include(lastMessageText(last), "beta line 59")
  })

  it("discard and extract called by the model: outputs pruned, distillation kept, back to the task, one note", async () => {
    const s = scenario()
    const session = await s.newSession()
    const finding = "FINDING_MARKER_b52e beta exports beta0 to beta59"
    s.model.script([
      read(s, "src/a.ts", "dx_1"),
      read(s, "src/b.ts", "dx_2"),
      call("discard", { ids: ["noise", "1"] }, "dx_3"),
      read(s, "src/c.ts", "dx_4"),
      call("extract", { ids: ["2"], distillation: [finding] }, "dx_5"),
      done
    ])
    await s.prompt(session, "read, then prune")
    const requests = s.requests()

    const afterDiscard = requestAfter(requests, "dx_3")
    assert.include(resultOf(afterDiscard, "dx_3"), "Discarded 1 output")
    assert.match(resultOf(afterDiscard, "dx_1") ?? "", placeholder("[pruned: src/a.ts lines 1-60; id 1]"))
    assert.match(resultOf(afterDiscard, "dx_2") ?? "", /^\[id 2\]\n[\s\S]*beta line 59/)
    assert.include(resultOf(afterDiscard, "dx_3"), "Carry on with your task.")
    assert.include(lastMessageText(afterDiscard), "Carry on with your task.")
    assert.match(resultOf(requestAfter(requests, "dx_4"), "dx_4") ?? "", /^\[id 4\]\n/)

    const afterExtract = requestAfter(requests, "dx_5")
    assert.include(resultOf(afterExtract, "dx_5"), "Extracted 1 output")
    assert.match(resultOf(afterExtract, "dx_2") ?? "", placeholder("[pruned after extract: src/b.ts lines 1-60; id 2]"))
    assert.deepStrictEqual(argumentsOf(afterExtract, "dx_5")?.distillation, [finding])
    assert.strictEqual(occurrences(requestText(afterExtract), "beta line 59"), 0)
    assert.include(resultOf(afterExtract, "dx_5"), "Carry on with your task.")

    const note = await s.waitForNote(session, "extracted")
    assert.match(note, /\b1 {2}read src\/a\.ts {2}discarded\b/)
    assert.match(note, /\b2 {2}read src\/b\.ts {2}extracted\b/)
  })

  it("compaction: OpenCode's summariser receives the extracted findings, which are dropped once it is done", async () => {
    const s = scenario()
    const session = await s.newSession()
    const finding = "FINDING_MARKER_c7d1 gamma exports gamma0 to gamma59"
    s.model.script([
      read(s, "src/c.ts", "cp_1"),
      call("extract", { ids: ["1"], distillation: [finding] }, "cp_2"),
      done
    ])
    await s.prompt(session, "read c.ts and keep what matters")
    const findings = async () => (await pluginState(s.opencode(), session))?.findings ?? []
    await waitFor("the finding in the plugin's state", async () => (await findings()).length === 1)

    const before = s.requests().length
    s.model.script([{ text: "Summary: c.ts was read." }])
    const compacted = await s.opencode().api("POST", `/session/${session}/summarize`, {
      providerID: "fake",
      modelID: "fake-model"
    })
    assert.strictEqual(compacted.status, 200)
    const summariser = s.requests().slice(before)
    assert.strictEqual(summariser.some((request) => requestText(request).includes(`(read 1) ${finding}`)), true)
    await waitFor("the findings dropped after session.compacted", async () => (await findings()).length === 0)
  })
})

/** The stored state (status, output) of the call `callID`, from the session, which pruning never changes. */
const storedState = async (s: Scenario, sessionID: string, callID: string): Promise<unknown> => {
  const parts = (await s.messages(sessionID)).flatMap((message) => message.parts) as ReadonlyArray<
    { callID?: string; state?: { status?: string; output?: unknown; error?: unknown } }
  >
  return parts.find((part) => part.callID === callID)?.state
}

/** The token figure that `pattern`'s first group captures in a command's note, as a number. */
const figure = (note: string, pattern: RegExp): number => {
  const match = pattern.exec(note)
  if (match === null) throw new Error(`${pattern} does not match:\n${note}`)
  return tokenFigure(match[1]!)
}

const alphaEnd = 'alpha59 = "alpha line 59"'

describe("/dcp commands and recall", () => {
  it("/dcp lists the subcommands in an ignored note, with no model turn; an unknown subcommand names itself", async () => {
    const s = scenario()
    const session = await s.newSession()
    const listed = await s.opencode().api<ReadonlyArray<{ name: string; description?: string }>>("GET", "/command")
    assert.include(listed.data.map((command) => command.name), "dcp")
    assert.include(
      listed.data.find((command) => command.name === "dcp")?.description,
      "Context pruning: context, stats"
    )

    const help = await dcp(s, session, "")
    const lines = help.split("\n")
    assert.strictEqual(lines[0], "DCP · Context pruning commands:")
    const usage = [
      /^ {2}\/dcp context {2,}\S/,
      /^ {2}\/dcp stats {2,}\S/,
      /^ {2}\/dcp sweep \[n\] {2,}\S/,
      /^ {2}\/dcp restore <id\|all> {2,}\S/,
      /^ {2}\/dcp help {2,}this list; \/dcp alone shows it too, except in$/
    ]
    const commands = lines.filter((line) => line.startsWith("  /dcp"))
    assert.lengthOf(commands, usage.length)
    for (const [i, pattern] of usage.entries()) assert.match(commands[i]!, pattern)
    // A summary too long for the line goes on under itself, not at the edge.
    const column = lines[1]!.indexOf("where the tokens")
    for (const line of lines.slice(1).filter((line) => !line.startsWith("  /dcp"))) {
      assert.match(line, new RegExp(`^ {${column}}\\S`))
    }
    const unknown = await dcp(s, session, "frobnicate", { refused: true })
    assert.strictEqual(
      flat(unknown),
      `DCP · Unknown subcommand "frobnicate": /dcp takes context, stats, sweep [n], restore <id|all> or help.`
    )
    assert.deepStrictEqual(await notes(s, session), [help, unknown])
    assert.lengthOf(s.requests(), 0)
  })

  it("/dcp context shows the token breakdown (system, conversation, tools) and the pruned share", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([read(s, "src/a.ts", "ctx_1"), read(s, "src/a.ts", "ctx_2"), read(s, "src/b.ts", "ctx_3"), done])
    await s.prompt(session, "read a.ts twice, then b.ts")
    assert.match(
      resultOf(s.requests().at(-1)!, "ctx_1") ?? "",
      placeholder("[pruned duplicate: src/a.ts lines 1-60; id 1]")
    )
    await s.waitForNote(session, "duplicate")

    const note = await dcp(s, session, "context")
    // The context is OpenCode's figure: what the provider reported for the latest request and its reply (the scripted
    // model reports 10 completion tokens a reply), with its share of the model's window.
    const latest = reportedPromptTokens(s.requests().at(-1)!) + 10
    assert.isTrue(
      flat(note).startsWith(
        `DCP · Context: ${latest.toLocaleString("en-US")} tokens, ${
          Math.round((latest / 200_000) * 100)
        }% of a 200k window (reported by the provider).`
      ),
      note
    )
    const lines = note.split("\n")
    const chart = lines.findIndex((line) => line.startsWith("  System"))
    for (const [i, label] of ["System", "Conversation", "Tools \\(3\\)"].entries()) {
      assert.match(lines[chart + i] ?? "", new RegExp(`^ {2}${label} +[█░]{24} +(?:<1|\\d+)% +~[\\d.]+k?$`))
    }
    assert.isAbove(figure(note, /^ {2}System .* (~[\d.]+k?)$/m), 0)
    assert.isAbove(figure(note, /^ {2}Tools \(3\) .* (~[\d.]+k?)$/m), 0)
    assert.match(note, /^ {2}Pruned +[█░]{24} +\d+% +~[\d.]+k?$/m)
    const pruned = figure(note, /^Pruned: +1 call, (\S+) tokens out of every request \(estimated\)$/m)
    const without = figure(note, /^ +Without pruning: (\S+) tokens \(estimated\)\.$/m)
    assert.isAbove(pruned, 0)
    assert.isAbove(without, latest)
    // Rounded for display (`~906`, `~1.2k`, `~13k`): the difference is the pruned tokens up to that rounding.
    const rounding = (value: number) => (value < 1000 ? 0.5 : value < 10_000 ? 50 : 500)
    assert.isAtMost(Math.abs(without - latest - pruned), rounding(without) + rounding(pruned))
  })

  it("/dcp stats shows this session's and the lifetime totals after a prune", async () => {
    const s = scenario()
    const first = await s.newSession()
    s.model.script([read(s, "src/a.ts", "st_1"), read(s, "src/a.ts", "st_2"), done])
    await s.prompt(first, "read a.ts twice")
    assert.match(
      resultOf(s.requests().at(-1)!, "st_1") ?? "",
      placeholder("[pruned duplicate: src/a.ts lines 1-60; id 1]")
    )
    await s.waitForNote(first, "duplicate")
    const second = await s.newSession()
    s.model.script([
      read(s, "src/b.ts", "st_3"),
      read(s, "src/b.ts", "st_4"),
      read(s, "src/c.ts", "st_5"),
      call("discard", { ids: ["noise", "3"] }, "st_6"),
      done
    ])
    await s.prompt(second, "read b.ts twice and c.ts, then discard c.ts")
    await s.waitForNote(second, "discarded")

    const stats = await dcp(s, second, "stats")
    assert.match(
      flat(stats),
      /^DCP · This session: 2 calls pruned now, ~[\d.]+k? tokens out of every request\. /
    )
    assert.match(stats, /^ {2}by strategy: .*\bduplicate 1 \(~[\d.]+k?\)/m)
    assert.match(stats, /^ {2}by strategy: .*\bdiscarded 1 \(~[\d.]+k?\)/m)
    assert.match(stats, /^ {2}by tool: +read 2 \(~[\d.]+k?\)$/m)
    assert.match(stats, /^ {2}last prune: +just now, 1 call \(discarded\), ~[\d.]+k? tokens$/m)
    assert.match(flat(stats), / provider: \d+ requests, [^.]*no prompt-cache usage reported\. /)
    const lifetime = /^All sessions: (\d+) calls? pruned, ~[\d.]+k? tokens, in (\d+) sessions?\.$/m.exec(stats)
    assert.isNotNull(lifetime, stats)
    // Earlier tests of this file pruned in other sessions of the same OpenCode: at least these two sessions count.
    assert.isAtLeast(Number(lifetime![1]), 3)
    assert.isAtLeast(Number(lifetime![2]), 2)
    assert.match(stats.slice(stats.indexOf("All sessions:")), /\n {2}by strategy: .*\bduplicate \d+ \(/)

    const firstStats = await dcp(s, first, "stats")
    assert.match(firstStats, /^DCP · This session: 1 call pruned now, /)
    assert.match(firstStats, /^ {2}by strategy: duplicate 1 \(~[\d.]+k?\)$/m)
    // The lifetime totals are the same from either session.
    assert.strictEqual(
      firstStats.slice(firstStats.indexOf("All sessions:")),
      stats.slice(stats.indexOf("All sessions:"))
    )
  })

  it("/dcp stats counts the model's read of a file it had discarded against what pruning saved", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([
      read(s, "src/a.ts", "rr_1"),
      call("discard", { ids: ["noise", "1"] }, "rr_2"),
      read(s, "src/a.ts", "rr_3"),
      done
    ])
    await s.prompt(session, "read a.ts, discard it, then read it again")
    await s.waitForNote(session, "discarded")
    assert.match(resultOf(requestAfter(s.requests(), "rr_3"), "rr_1") ?? "", /^\[pruned/)

    const stats = flat(await dcp(s, session, "stats"))
    assert.match(stats, / cache rebuilds cost ~[\d.]+k?; the model read 1 masked file again, for ~[\d.]+k?; net /)
  })

  it("/dcp sweep prunes every call since the last user message; /dcp sweep 2 the last two; a bad n is an error", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([read(s, "src/a.ts", "sw_1"), read(s, "src/b.ts", "sw_2"), read(s, "src/c.ts", "sw_3"), done])
    await s.prompt(session, "read a.ts, b.ts and c.ts")
    s.model.script([read(s, "src/d.ts", "sw_4"), done])
    await s.prompt(session, "now read d.ts")
    const next = async (text: string) => {
      const mark = s.requests().length
      s.model.script([done])
      await s.prompt(session, text)
      return s.requests()[mark]!
    }
    const full = { sw_1: "alpha line 59", sw_2: "beta line 59", sw_3: "gamma line 59", sw_4: "delta line 59" }
    const file = { sw_1: "a.ts", sw_2: "b.ts", sw_3: "c.ts", sw_4: "d.ts" }
    const expectSwept = (
      request: RecordedRequest,
      swept: ReadonlyArray<keyof typeof full>,
      folded: ReadonlyArray<keyof typeof full> = []
    ) => {
      for (const [callID, line] of Object.entries(full) as Array<[keyof typeof full, string]>) {
        const id = callID.slice(3)
        if (folded.includes(callID)) {
          assert.isUndefined(resultOf(request, callID))
          assert.include(requestText(request), `\n#${id} read src/`)
        } else if (swept.includes(callID)) {
          assert.match(
            resultOf(request, callID) ?? "",
            placeholder(`[pruned: src/${file[callID]} lines 1-60; id ${id}]`)
          )
        } else {
          assert.include(resultOf(request, callID), line)
        }
      }
    }

    const swept = await dcp(s, session, "sweep")
    assert.match(
      flat(swept),
      /^DCP · Swept 1 call since your last message \(4\): ~[\d.]+k? tokens out of every request from the next one on\. 4 read src\/d\.ts$/
    )
    assert.strictEqual(swept.split("\n").at(-1), "  4  read src/d.ts")
    expectSwept(await next("go on"), ["sw_4"])

    assert.strictEqual(
      flat(await dcp(s, session, "sweep")),
      "DCP · Nothing to sweep since your last message: no tool was called there."
    )
    const two = await dcp(s, session, "sweep 2")
    assert.match(
      flat(two),
      /^DCP · Swept 2 calls, the 2 newest not already pruned, protected or empty \(2, 3\): ~[\d.]+k? tokens out of every request from the next one on\. 2 read src\/b\.ts 3 read src\/c\.ts$/
    )
    assert.deepStrictEqual(two.split("\n").slice(-2), ["  2  read src/b.ts", "  3  read src/c.ts"])
    // Two turns later, the turn of d.ts is old, and with its one call pruned it is folded.
    expectSwept(await next("go on again"), ["sw_2", "sw_3"], ["sw_4"])
    // Its note comes once the session is idle: before the next command, which must add its own note alone.
    await s.waitForNote(session, "folded")

    for (const bad of ["x", "0", "2 3"]) {
      const note = await dcp(s, session, `sweep ${bad}`, { refused: true })
      assert.strictEqual(
        flat(note),
        bad === "2 3"
          ? "DCP · Too many arguments: the usage is /dcp sweep [n]."
          : `DCP · "${bad}" is not a number of calls: /dcp sweep [n] takes a whole number of 1 or more, e.g. /dcp sweep 5.`
      )
    }
    // Nothing more was pruned.
    expectSwept(await next("and once more"), ["sw_2", "sw_3"], ["sw_4"])
  })

  it("/dcp restore <id> and /dcp restore all send the original output again from the next request", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([
      read(s, "src/a.ts", "rs_1"),
      read(s, "src/a.ts", "rs_2"),
      read(s, "src/b.ts", "rs_3"),
      read(s, "src/c.ts", "rs_4"),
      call("discard", { ids: ["noise", "3", "4"] }, "rs_5"),
      done
    ])
    await s.prompt(session, "read a.ts twice, b.ts and c.ts, then discard b.ts and c.ts")
    const before = s.requests().at(-1)!
    assert.match(resultOf(before, "rs_1") ?? "", placeholder("[pruned duplicate: src/a.ts lines 1-60; id 1]"))
    assert.match(resultOf(before, "rs_3") ?? "", placeholder("[pruned: src/b.ts lines 1-60; id 3]"))
    assert.match(resultOf(before, "rs_4") ?? "", placeholder("[pruned: src/c.ts lines 1-60; id 4]"))
    await s.waitForNote(session, "discarded")
    const next = async (text: string) => {
      const mark = s.requests().length
      s.model.script([done])
      await s.prompt(session, text)
      return s.requests()[mark]!
    }

    const where = "(the number before each call in the pruning notes)."
    assert.strictEqual(
      flat(await dcp(s, session, "restore 2", { refused: true })),
      `DCP · id 2 is not pruned. Pruned now: 1, 3, 4 ${where}`
    )
    assert.strictEqual(
      flat(await dcp(s, session, "restore 9", { refused: true })),
      `DCP · There is no call with id 9 in this session. Pruned now: 1, 3, 4 ${where}`
    )
    assert.strictEqual(
      flat(await dcp(s, session, "restore x", { refused: true })),
      `DCP · "x" is not an id: /dcp restore takes an id or "all". Pruned now: 1, 3, 4 ${where}`
    )
    assert.match(
      flat(await dcp(s, session, "restore 1")),
      /^DCP · Restored id 1: ~[\d.]+k? tokens are sent to the model again from the next request on\.$/
    )
    // The restored duplicate is sent in full, and deduplication leaves it alone from now on.
    const afterOne = await next("go on")
    assert.include(resultOf(afterOne, "rs_1"), alphaEnd)
    assert.strictEqual(occurrences(requestText(afterOne), alphaEnd), 2)
    assert.match(resultOf(afterOne, "rs_3") ?? "", placeholder("[pruned: src/b.ts lines 1-60; id 3]"))
    assert.match(resultOf(afterOne, "rs_4") ?? "", placeholder("[pruned: src/c.ts lines 1-60; id 4]"))

    assert.match(
      flat(await dcp(s, session, "restore all")),
      /^DCP · Restored all 2 pruned calls: ~[\d.]+k? tokens are sent to the model again from the next request on\.$/
    )
    const afterAll = await next("go on again")
    assert.include(resultOf(afterAll, "rs_1"), alphaEnd)
    assert.include(resultOf(afterAll, "rs_3"), "beta line 59")
    assert.include(resultOf(afterAll, "rs_4"), "gamma line 59")
    const results = afterAll.messages.filter((message) => message.role === "tool").map((message) =>
      contentText(message.content)
    )
    assert.deepStrictEqual(results.filter((result) => result.includes("[pruned")), [])
    assert.strictEqual(
      await dcp(s, session, "restore all"),
      "DCP · Nothing to restore: no call is pruned in this session."
    )
  })

  it("recall({ ids }) returns a pruned call's original content to the model; an unpruned id gets an error naming it", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([
      read(s, "src/a.ts", "rc_1"),
      read(s, "src/a.ts", "rc_2"),
      call("recall", { ids: ["1"] }, "rc_3"),
      call("recall", { ids: ["2", "9"] }, "rc_4"),
      done
    ])
    await s.prompt(session, "read a.ts twice, then recall")
    const requests = s.requests()

    const afterRecall = requestAfter(requests, "rc_3")
    // The placeholder names the recall handle; recalling does not un-prune the call.
    assert.match(resultOf(afterRecall, "rc_1") ?? "", /^\[pruned duplicate: src\/a\.ts lines 1-60; recall 1\]$/)
    const original = await storedState(s, session, "rc_1")
    const { output, status } = original as { status?: string; output?: unknown }
    assert.strictEqual(status, "completed")
    assert.isString(output)
    assert.include(output as string, alphaEnd)
    // What recall brings back is an output like any other: it carries its own ID.
    assert.strictEqual(
      resultOf(afterRecall, "rc_3"),
      `[id 3]\nOriginal content of id 1 (read src/a.ts), as stored:\n${output as string}`
    )

    const refused = resultOf(requestAfter(requests, "rc_4"), "rc_4")
    assert.include(refused, "Nothing was recalled.")
    assert.include(refused, "id 2 is not pruned: its content is already in the conversation.")
    assert.include(refused, "There is no tool call with id 9 in this conversation.")
    assert.strictEqual((await storedState(s, session, "rc_4") as { status?: string } | undefined)?.status, "error")
  })

  it("recall({ query }) brings back the line of a pruned read that holds its words, under the read's ID; a blank query is refused", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([
      read(s, "src/a.ts", "rq_1"),
      call("discard", { ids: ["noise", "1"] }, "rq_2"),
      call("recall", { query: "alpha41 =" }, "rq_3"),
      call("recall", { query: " " }, "rq_4"),
      done
    ])
    await s.prompt(session, "read a.ts, drop it, then find one line of it")
    const requests = s.requests()

    const afterRecall = requestAfter(requests, "rq_3")
    // The placeholder says what the read held, from OpenCode's own numbered output.
    assert.match(resultOf(afterRecall, "rq_1") ?? "", placeholder("[pruned: src/a.ts lines 1-60; id 1]"))
    assert.strictEqual(
      resultOf(afterRecall, "rq_3"),
      [
        '1 line of the 1 pruned or folded output match "alpha41 =". recall({ ids }) returns an output whole.',
        "id 1 (read src/a.ts):",
        '  42: export const alpha41 = "alpha line 41"'
      ].join("\n")
    )
    assert.strictEqual(occurrences(requestText(afterRecall), alphaEnd), 0)

    const refused = resultOf(requestAfter(requests, "rq_4"), "rq_4") ?? ""
    assert.include(refused, "Nothing was recalled.\nquery is empty. Give ids, ")
    assert.strictEqual((await storedState(s, session, "rq_4") as { status?: string } | undefined)?.status, "error")
  })
})
