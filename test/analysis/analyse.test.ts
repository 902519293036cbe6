import { spawn } from "node:child_process"
import { mkdir, mkdtemp, readdir, readFile, rm, truncate, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import type { Analysis } from "../../src/analysis/analysis.ts"
import { profiles } from "../../src/pricing/profiles.ts"

/**
 * The analyser as a user runs it: the `dcp-analyse` bin (`dist/analyse.js`, built for the run by
 * test/support/build.ts), in a child process with its own HOME, so the developer's own config files never change the
 * figures. `npm start` runs the source (src/analyse.ts): the last test runs it that way, and the end-to-end tier checks
 * that both give the same analysis.
 */

const repo = new URL("../../", import.meta.url).pathname
const cli = join(repo, "dist", "analyse.js")

let home: string
let work: string

interface Finished {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs a command with only PATH, a scratch HOME and the UTC time zone in its environment (the analyser dates each
 * request's system prompt in local time, as OpenCode does; the figures below are the example's in UTC); its exit code
 * and output.
 */
const runCommand = (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly input?: string; readonly env?: Record<string, string>; readonly cwd?: string } = {}
) =>
  new Promise<Finished>((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd ?? work,
      env: { PATH: process.env.PATH ?? "", HOME: home, TZ: "UTC", ...options.env },
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
    child.stdin.end(options.input ?? "")
  })

const analyse = (
  args: ReadonlyArray<string>,
  options: { readonly input?: string; readonly env?: Record<string, string> } = {}
) => runCommand(process.execPath, [cli, ...args], options)

/** Runs `args` once for the tests that look at the same run. */
const shared = (args: ReadonlyArray<string>) => {
  let run: Promise<Finished> | undefined
  return () => (run ??= analyse(args))
}

// Each replay of the example costs seconds of CPU: the tests that read the same output share one.
const exampleReport = shared(["--example"])
const exampleJson = shared(["--example", "--json"])

/** A short session: a file read twice, then an answer. */
const smallExport = (extraParts: Array<unknown> = []) => {
  const content = Array.from({ length: 80 }, (_, i) => `${i + 1}: export const value${i} = "line ${i} of the file"`)
    .join("\n")
  const read = (callID: string, at: number) => ({
    type: "tool",
    callID,
    tool: "read",
    state: {
      status: "completed",
      input: { filePath: "/p/src/a.ts" },
      output: content,
      time: { start: at, end: at + 5 }
    }
  })
  const info = (id: string, role: string, created: number) => ({
    id,
    sessionID: "ses_small",
    role,
    time: { created },
    ...(role === "user"
      ? { agent: "build", model: { providerID: "p", modelID: "m" } }
      : { providerID: "p", modelID: "m" })
  })
  return JSON.stringify({
    info: { id: "ses_small", title: "Small", directory: "/p" },
    messages: [
      { info: info("m1", "user", 1_000), parts: [{ type: "text", text: "read a.ts twice" }, ...extraParts] },
      { info: info("m2", "assistant", 2_000), parts: [{ type: "step-start" }, read("c1", 2_100), ...extraParts] },
      { info: info("m3", "assistant", 3_000), parts: [{ type: "step-start" }, read("c2", 3_100)] },
      { info: info("m4", "assistant", 4_000), parts: [{ type: "step-start" }, { type: "text", text: "Done." }] }
    ]
  })
}

/** One line on stderr, naming the analyser, no stack trace, nothing on stdout, the given exit code. */
const expectOneLineError = (result: Finished, code: number, pattern: RegExp) => {
  assert.strictEqual(result.code, code)
  assert.strictEqual(result.stdout, "")
  const lines = result.stderr.split("\n").filter((line) => line !== "")
  assert.lengthOf(lines, 1)
  assert.match(lines[0] ?? "", /^dcp-analyse: /)
  assert.match(lines[0] ?? "", pattern)
  assert.notMatch(result.stderr, /^\s+at /m)
}

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), "dcp-analyse-home-"))
  work = await mkdtemp(join(tmpdir(), "dcp-analyse-work-"))
})

afterAll(async () => {
  await rm(home, { recursive: true, force: true })
  await rm(work, { recursive: true, force: true })
})

describe("the bundled example (npm start)", () => {
  // Figures of examples/session.json under the built-in defaults. What is sent without the plugin depends on the
  // export alone and is exact. What the plugin decides (calls pruned by each strategy) is exact too: it moves only
  // when the plugin's behaviour does; then check the change is intended and update from `npm start -- --json`.
  // Token figures that go through the plugin's own estimates (a prune's saving) are checked to within 1%.
  const near = (actual: number, expected: number) => assert.isAtMost(Math.abs(actual - expected), expected * 0.01)
  const number = (text: string) => Number(text.replaceAll(",", ""))
  const row = (report: string, pattern: RegExp): Array<number> => {
    const match = pattern.exec(report)
    assert.isNotNull(match, String(pattern))
    return match!.slice(1).map(number)
  }

  it("prints the report: final request chart, prunes by strategy, tokens and cost with and without the plugin", async () => {
    const result = await exampleReport()
    assert.strictEqual(result.stderr, "")
    assert.strictEqual(result.code, 0)
    const report = result.stdout
    assert.include(report, '"Due dates for todos" · OpenCode 1.18.33')
    assert.include(report, "5 user turns, 71 model requests, 72 tool calls (3 failed) over 55 min; 3 pauses")
    assert.include(report, "Config: built-in defaults; cache.mode auto;")
    assert.match(report, /^ {2}System +[█░]{24} +\d+% +5,710$/m)
    near(row(report, /^ {2}Tools \(17 \+ 59 folded\) +[█░]{24} +\d+% +([\d,]+)$/m)[0]!, 9_804)
    near(row(report, /^ {2}Total +([\d,]+)$/m)[0]!, 16_826)
    assert.match(report, /^ {2}Without the plugin: 64,424 tokens \(\d+\.\d% smaller with it; 62 calls pruned\)\.$/m)
    const strategies = [
      ["deduplication", "duplicate", 9, 8_998],
      ["supersedeWrites", "superseded write", 14, 796],
      ["purgeErrors", "failed call input", 1, 173],
      ["staleOutputs", "stale output", 34, 38_764],
      ["repeat", "repeat", 4, 1_841],
      // A call counts once: the fold's are those no prune of their own took (the others are counted above).
      ["fold", "folded", 2, 2_487],
      ["Total", "", 64, 53_059]
    ] as const
    for (const [reason, name, calls, tokens] of strategies) {
      const label = name === "" ? reason : `${reason} +\\(${name}\\)`
      const [pruned, saved] = row(report, new RegExp(`^ {2}${label} +(\\d+) +([\\d,]+)$`, "m"))
      assert.strictEqual(pruned, calls)
      near(saved!, tokens)
    }
    const [sentWithout, sentPrune, sentWith] = row(
      report,
      /^ {2}Tokens sent +([\d,]+) +([\d,]+) +([\d,]+) +[-+]\d+\.\d%$/m
    )
    assert.strictEqual(sentWithout, 2_760_137)
    assert.strictEqual(sentPrune, 2_760_137)
    near(sentWith!, 1_259_404)
    const [costWithout, costPrune, costWith] = row(
      report,
      /^ {2}Cost, Anthropic cache +([\d,]+) +([\d,]+) +([\d,]+) +[-+]\d+\.\d%$/m
    )
    assert.strictEqual(costWithout, 516_355)
    assert.strictEqual(costPrune, 516_355)
    near(costWith!, 270_810)
    assert.isBelow(costWith!, costWithout!)
    assert.match(report, /^ {2}Cost, OpenAI cache\* +467,887 +467,887 +[\d,]+ +[-+]\d+\.\d%$/m)
    assert.match(report, /^ {2}Edits with the file masked +0 of 29 +0 of 29 +4 of 29$/m)
    assert.match(report, /^ {2}Requests reading them again +0 +0 +4$/m)
    assert.include(report, "estimates (o200k tokenizer)")
    for (const line of report.split("\n")) assert.isAtMost([...line].length, 80)
  })

  it("reports how much of what the model used the requests still showed: all of it without the plugin", async () => {
    const report = (await exampleReport()).stdout
    assert.match(report, /^ {2}Used lines still sent +100% +100% +\d+(\.\d)?%$/m)
    const [, , missed] = row(report, /^ {2}Lines missed +(\d+) +(\d+) +(\d+)$/m)
    const [paidWithout, , paidWith] = row(
      report,
      /^ {2}Cost with misses paid, Anthropic cache +([\d,]+) +([\d,]+) +([\d,]+)$/m
    )
    assert.strictEqual(paidWithout, 516_355)
    const [costWith] = row(report, /^ {2}Cost, Anthropic cache +[\d,]+ +[\d,]+ +([\d,]+)/m)
    if (missed === 0) assert.strictEqual(paidWith, costWith)
    else assert.isAbove(paidWith!, costWith!)
  })

  it("--misses lists each line used that the plugin's request did not show, with what it showed of each source", async () => {
    const result = await analyse(["--example", "--misses"])
    assert.strictEqual(result.code, 0)
    const report = result.stdout
    const [, , missed] = row(report, /^ {2}Lines missed +(\d+) +(\d+) +(\d+)$/m)
    const listed = report.split("\n").filter((line) => /^ {2}#\d+ [\w.]+: /.test(line))
    assert.lengthOf(listed, missed!)
    if (missed! > 0) assert.match(report, /^ {6}\w+: (\[.*\]|not sent.*)$/m)
    for (const line of report.split("\n")) assert.isAtMost([...line].length, 80)
  })

  it("--json prints the same analysis as JSON", async () => {
    const result = await exampleJson()
    assert.strictEqual(result.code, 0)
    const json = JSON.parse(result.stdout) as Analysis & { costModel: Record<string, unknown> }
    assert.deepStrictEqual(Object.keys(json), [
      "session",
      "skippedParts",
      "config",
      "finalRequest",
      "pruned",
      "prunedTotal",
      "modelCalls",
      "sent",
      "reported",
      "notes",
      "pluginLog",
      "costModel"
    ])
    const { session } = json
    assert.deepStrictEqual({
      title: session.title,
      directory: session.directory,
      version: session.version,
      messages: session.messages,
      userTurns: session.userTurns,
      requests: session.requests,
      toolCalls: session.toolCalls,
      failedCalls: session.failedCalls,
      pausesOverTtl: session.pausesOverTtl,
      subAgent: session.subAgent,
      model: { providerID: session.model.providerID, modelID: session.model.modelID }
    }, {
      title: "Due dates for todos",
      directory: "/home/dev/todo-api",
      version: "1.18.33",
      messages: 76,
      userTurns: 5,
      requests: 71,
      toolCalls: 72,
      failedCalls: 3,
      pausesOverTtl: 3,
      subAgent: false,
      model: { providerID: "fake", modelID: "fake-model" }
    })
    assert.deepStrictEqual(json.skippedParts, { total: 0, byType: {} })
    assert.deepStrictEqual(json.config, {
      files: [],
      explicit: false,
      problems: [],
      enabled: true,
      cacheMode: "auto",
      contextWindow: 200_000,
      switchedOff: []
    })
    assert.deepStrictEqual(json.pruned.map(({ calls, enabled, name, reason }) => ({ reason, name, calls, enabled })), [
      { reason: "deduplication", name: "duplicate", calls: 9, enabled: true },
      { reason: "supersedeWrites", name: "superseded write", calls: 14, enabled: true },
      { reason: "purgeErrors", name: "failed call input", calls: 1, enabled: true },
      { reason: "staleOutputs", name: "stale output", calls: 34, enabled: true },
      { reason: "repeat", name: "repeat", calls: 4, enabled: true },
      { reason: "fold", name: "folded", calls: 2, enabled: true }
    ])
    assert.strictEqual(json.prunedTotal.calls, 64)
    assert.strictEqual(json.prunedTotal.calls, json.pruned.reduce((sum, entry) => sum + entry.calls, 0))
    near(json.prunedTotal.tokens, 53_059)
    assert.strictEqual(json.prunedTotal.tokens, json.pruned.reduce((sum, entry) => sum + entry.tokens, 0))
    assert.strictEqual(json.finalRequest.request, 71)
    assert.strictEqual(json.finalRequest.prunedCalls, 62)
    assert.deepStrictEqual(json.finalRequest.withoutPlugin, {
      system: 5_710,
      user: 155,
      assistant: 760,
      tools: 57_799,
      toolCalls: 72,
      foldedCalls: 0,
      plugin: 0,
      total: 64_424
    })
    const final = json.finalRequest.withPlugin
    assert.strictEqual(final.system + final.user + final.assistant + final.tools + final.plugin, final.total)
    near(final.total, 16_804)
    assert.deepStrictEqual(json.sent.profiles, ["anthropic", "openai"])
    assert.strictEqual(json.sent.sessionProfile, "openai")
    assert.deepStrictEqual(json.sent.withoutPlugin, {
      priced: {
        anthropic: {
          profile: "anthropic",
          requests: 71,
          tokens: 2_760_137,
          readTokens: 2_551_145,
          writeTokens: 208_992,
          outputTokens: 0,
          cost: 516_354.5
        },
        openai: {
          profile: "openai",
          requests: 71,
          tokens: 2_760_137,
          readTokens: 2_546_944,
          writeTokens: 0,
          outputTokens: 0,
          cost: 467_887.4
        }
      },
      compactions: 0,
      openCodePruned: 0,
      edits: { made: 29, masked: 0 },
      reReads: 0,
      fidelity: {
        requests: 71,
        used: 28,
        retained: 28,
        misses: [],
        requestsWithMisses: 0,
        recalledTokens: 0,
        recallCost: { anthropic: 0, openai: 0 }
      }
    })
    const anthropic = json.sent.withPlugin.priced.anthropic!
    near(anthropic.tokens, 1_255_008)
    near(anthropic.cost, 270_062)
    // cost = 0.1 x read + 1.25 x written + the rest, and 5 x the model's calls that read masked files again
    const { cost, outputTokens, readTokens, tokens, writeTokens } = anthropic
    assert.closeTo(
      cost,
      0.1 * readTokens + 1.25 * writeTokens + (tokens - readTokens - writeTokens) + 5 * outputTokens,
      10 ** -1 / 2
    )
    assert.strictEqual(json.sent.systemPromptTokens, 808)
    assert.strictEqual(json.sent.hostToolTokens, 4_810)
    assert.deepStrictEqual(json.reported, { requests: 71, input: json.reported.input, cacheRead: 0, cacheWrite: 0 })
    assert.deepStrictEqual(json.modelCalls, { replayed: 0, accepted: 0, rejected: 0 })
    assert.strictEqual(json.notes, 5)
    assert.deepStrictEqual(json.pluginLog, [])
    assert.deepStrictEqual(json.costModel, {
      tokenizer: "o200k",
      estimated: true,
      profiles: { anthropic: profiles.anthropic, openai: profiles.openai }
    })
  })

  it("--blind-edits replays the edits of masked files as recorded, with no re-read priced", async () => {
    const result = await analyse(["--example", "--blind-edits"])
    assert.strictEqual(result.code, 0)
    const report = result.stdout
    const [, , costWith] = row(report, /^ {2}Cost, Anthropic cache +([\d,]+) +([\d,]+) +([\d,]+) +[-+]\d+\.\d%$/m)
    near(costWith!, 249_398)
    assert.match(report, /^ {2}Edits with the file masked +0 of 29 +0 of 29 +7 of 29$/m)
    assert.notInclude(report, "Requests reading them again")
    assert.include(
      report.replace(/\s+/g, " "),
      "Replayed as recorded (--blind-edits): no cost figure includes a re-read."
    )
  })

  it("a final request against a run OpenCode compacted says so, and no change in size is read as the plugin's", async () => {
    // In a 90k window, OpenCode alone compacts the example once and the plugin never: the run without it ends on a
    // summary, a little smaller than the plugin's final request, which keeps the turns.
    const result = await analyse(["--example", "--context-window", "90000"])
    assert.strictEqual(result.code, 0)
    const report = result.stdout.replace(/\s+/g, " ")
    assert.match(report, /Compactions 1 1 0 /)
    assert.match(
      report,
      /Without the plugin: [\d,]+ tokens, not comparable: OpenCode compacted the run without the plugin once and the run with it never, so the final request of the run without the plugin holds a summary and the recent messages in place of the turns the other keeps \(62 calls pruned; the whole session below compares the runs as they went\)\./
    )
    assert.notMatch(report, /% (larger|smaller) with it/)
  })

  it("nothing is written under HOME: state and config live in a temporary directory", async () => {
    assert.deepStrictEqual(await readdir(home), [])
  })
})

describe("config", () => {
  it("reads the user's global dcp.jsonc, and leaves it as it was", async () => {
    const dir = join(home, ".config", "opencode")
    await mkdir(dir, { recursive: true })
    const text = `{\n  // no deduplication here\n  "strategies": { "deduplication": { "enabled": false } },\n}\n`
    await writeFile(join(dir, "dcp.jsonc"), text)
    try {
      const json = JSON.parse((await analyse(["--example", "--json"])).stdout) as Analysis
      assert.deepStrictEqual(json.config.files, [join(dir, "dcp.jsonc")])
      assert.deepStrictEqual(json.config.switchedOff, ["deduplication"])
      const { calls, enabled, reason } = json.pruned[0]!
      assert.deepStrictEqual({ reason, calls, enabled }, { reason: "deduplication", calls: 0, enabled: false })
      assert.strictEqual(await readFile(join(dir, "dcp.jsonc"), "utf8"), text)
      assert.deepStrictEqual(await readdir(dir), ["dcp.jsonc"])
    } finally {
      await rm(join(home, ".config"), { recursive: true, force: true })
    }
  })

  it("--config replaces the user's files; its problems are reported with its name", async () => {
    const file = join(work, "mine.jsonc")
    await writeFile(file, `{ "cache": { "mode": "immediate" }, "strategies": { "purgeErrors": { "turns": "four" } } }`)
    const json = JSON.parse((await analyse(["--example", "--json", "--config", file])).stdout) as Analysis
    const { cacheMode, explicit, files } = json.config
    assert.deepStrictEqual({ files, explicit, cacheMode }, { files: [file], explicit: true, cacheMode: "immediate" })
    assert.lengthOf(json.config.problems, 1)
    assert.include(json.config.problems[0], file)
    assert.include(json.config.problems[0], "strategies.purgeErrors.turns")
  })

  it("each problem of a --config file is a line of its own, naming the file, the key and what is valid", async () => {
    const file = join(work, "two-problems.jsonc")
    await writeFile(file, `{ "compaction": { "atTokens": 5000.5 }, "cache": { "horizon": "auto2" } }`)
    const result = await analyse(["--example", "--config", file])
    assert.strictEqual(result.code, 0, result.stderr)
    const entries = result.stdout.replace(/\n {2}/g, " ").split("\n").filter((line) =>
      line.startsWith("Config problem")
    )
    assert.deepStrictEqual(entries, [
      `Config problem: ${file}: compaction.atTokens: expected "auto" or an integer >= 0, found 5000.5`,
      `Config problem: ${file}: cache.horizon: expected "auto" or an integer >= 0, found the string "auto2"`
    ])
  })

  it("a --config file with a syntax error is a one-line error, as a missing one is", async () => {
    const file = join(work, "broken.jsonc")
    await writeFile(file, `{ "cache": { "mode": "immediate" }`)
    expectOneLineError(
      await analyse(["--example", "--config", file]),
      1,
      /the --config file .*broken\.jsonc is not usable: Syntax error at line 1, column 35: close brace expected\.$/
    )
  })

  it("a --config file that does not exist is a one-line error", async () => {
    expectOneLineError(
      await analyse(["--example", "--config", join(work, "none.jsonc")]),
      1,
      /cannot read the --config file .*none\.jsonc: no such file$/
    )
  })
})

describe("input", () => {
  it("reads an export from standard input", async () => {
    const result = await analyse(["--json"], { input: smallExport() })
    assert.strictEqual(result.code, 0)
    const json = JSON.parse(result.stdout) as Analysis
    const { id, requests, toolCalls } = json.session
    assert.deepStrictEqual({ id, requests, toolCalls }, { id: "ses_small", requests: 3, toolCalls: 2 })
  })

  it("parts of unknown types are skipped with a count, not fatal", async () => {
    const file = join(work, "unknown-parts.json")
    await writeFile(file, smallExport([{ type: "hologram" }, { type: "vibe-check", level: 3 }]))
    const result = await analyse([file])
    assert.strictEqual(result.code, 0)
    assert.strictEqual(result.stderr, "")
    assert.include(result.stdout, "Skipped 4 parts of unknown types (hologram 2, vibe-check 2).")
    const json = JSON.parse((await analyse([file, "--json"])).stdout) as Analysis
    assert.deepStrictEqual(json.skippedParts, { total: 4, byType: { hologram: 2, "vibe-check": 2 } })
  })

  it("a missing file", async () => {
    expectOneLineError(await analyse(["nowhere.json"]), 1, /^dcp-analyse: cannot read nowhere\.json: no such file$/)
  })

  it("a file that is not JSON", async () => {
    await writeFile(join(work, "notes.txt"), "these are my notes\nnot an export\n")
    expectOneLineError(await analyse(["notes.txt"]), 1, /^dcp-analyse: notes\.txt is not JSON \(/)
  })

  it("JSON that is not an export", async () => {
    await writeFile(join(work, "package.json"), JSON.stringify({ name: "x", version: "1.0.0" }))
    expectOneLineError(
      await analyse(["package.json"]),
      1,
      /^dcp-analyse: package\.json is not an OpenCode export: info is missing$/
    )
  })

  it("an export with no messages", async () => {
    await writeFile(join(work, "empty.json"), JSON.stringify({ info: { id: "ses_empty" }, messages: [] }))
    expectOneLineError(
      await analyse(["empty.json"]),
      1,
      /^dcp-analyse: empty\.json is an export of session ses_empty with no messages/
    )
  })

  it("an export cut short (piped from opencode export)", async () => {
    expectOneLineError(
      await analyse([], { input: smallExport().slice(0, 300) }),
      1,
      /standard input is not complete JSON: it stops after 300 bytes/
    )
  })

  it("usage mistakes exit with 2", async () => {
    expectOneLineError(await analyse(["--frobnicate"]), 2, /unknown option --frobnicate/)
    expectOneLineError(await analyse(["a.json", "b.json"]), 2, /give one export file/)
    expectOneLineError(
      await analyse(["--example", "--context-window", "lots"]),
      2,
      /--context-window must be a positive whole number/
    )
  })

  it("--help prints the usage", async () => {
    const result = await analyse(["--help"])
    assert.strictEqual(result.code, 0)
    assert.match(result.stdout, /^Usage: dcp-analyse \[options\] \[file\]/)
    assert.include(result.stdout, "Runs on Node.js 20 or newer.")
  })
})

/**
 * The bundled example as OpenCode on Windows would have exported it: the project as `C:\\Users\\dev\\todo-api`, and
 * the model's paths written with backslashes and forward slashes in turn (both name the same file there).
 */
const exampleOnWindows = async (): Promise<string> => {
  const unix = "/home/dev/todo-api"
  const windows = "C:\\Users\\dev\\todo-api"
  let paths = 0
  const convert = (value: unknown, key?: string): unknown => {
    if (typeof value === "string") {
      if ((key === "filePath" || key === "path") && value.startsWith(unix)) {
        const rest = value.slice(unix.length)
        return ++paths % 2 === 0 ? `C:/Users/dev/todo-api${rest}` : windows + rest.replaceAll("/", "\\")
      }
      return value.replaceAll(unix, windows)
    }
    if (Array.isArray(value)) return value.map((item) => convert(item))
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, convert(item, name)]))
    }
    return value
  }
  const example = JSON.parse(await readFile(join(repo, "examples", "session.json"), "utf8")) as unknown
  const file = join(work, "windows.json")
  await writeFile(file, JSON.stringify(convert(example)))
  return file
}

describe("an export made on Windows", () => {
  // Deduplication compares inputs as written, so one read written with the other separators is pruned by another rule.
  it("is read by Windows' path rules: as many calls pruned and the same edits masked as with the example's paths", async () => {
    const posix = await exampleJson()
    const windows = await analyse([await exampleOnWindows(), "--json"])
    const figures = (stdout: string) => {
      const json = JSON.parse(stdout) as Analysis
      return { directory: json.session.directory, calls: json.prunedTotal.calls, edits: json.sent.withPlugin.edits }
    }
    assert.deepStrictEqual(figures(windows.stdout), {
      ...figures(posix.stdout),
      directory: "C:\\Users\\dev\\todo-api"
    })
  })
})

describe("what a new user meets", () => {
  const small = async () => {
    const file = join(work, "small.json")
    await writeFile(file, smallExport())
    return file
  }

  it("--help shows the export written to a file, never piped in, and the npm form that keeps JSON clean", async () => {
    const result = await analyse(["--help"])
    assert.include(result.stdout, "opencode export ses_123 > session.json")
    assert.notMatch(result.stdout, /opencode export \S+ \|/)
    assert.include(result.stdout, "npm start --silent -- --json")
  })

  it("a context window given with --context-window is reported as given, not as assumed", async () => {
    const given = await analyse([await small(), "--context-window", "100000"])
    assert.include(given.stdout.replace(/\s+/g, " "), "context window 100,000 tokens (--context-window).")
    assert.notInclude(given.stdout, "assumed")
  })

  it("without --context-window, the report says the window is assumed and how to set it", async () => {
    const assumed = await analyse([await small()])
    assert.include(
      assumed.stdout.replace(/\s+/g, " "),
      "context window 200,000 tokens (assumed: an export does not record it; --context-window sets it)."
    )
  })

  it("a negative --context-window is named as not a positive number", async () => {
    expectOneLineError(
      await analyse(["--example", "--context-window", "-5"]),
      2,
      /^dcp-analyse: --context-window must be a positive whole number of tokens, not "-5"$/
    )
  })

  it("an export larger than a string can hold is refused by its size, before it is read", async () => {
    const file = join(work, "huge.json")
    // Sparse: the size is there without the bytes.
    await writeFile(file, "")
    await truncate(file, 630 * 1024 * 1024)
    try {
      expectOneLineError(
        await analyse([file]),
        1,
        /^dcp-analyse: .*huge\.json is too large \(630 MB\): dcp-analyse reads exports of up to 512 MB/
      )
    } finally {
      await rm(file)
    }
  })

  it("the report on the example ends with how to run it on one's own session", async () => {
    const lines = (await exampleReport()).stdout.trimEnd().split("\n")
    const next = lines.slice(lines.lastIndexOf("") + 1).join(" ")
    assert.match(next, /^Next: the same for one of your own sessions\./)
    assert.include(next, "opencode export <ID> > session.json, then run dcp-analyse session.json.")
  })

  it("the report on one's own session ends with how to try other settings", async () => {
    const lines = (await analyse([await small()])).stdout.trimEnd().split("\n")
    assert.match(lines.slice(lines.lastIndexOf("") + 1).join(" "), /^Next: to try other settings/)
  })

  it("docs/analyser.md's JSON command for a clone prints the JSON alone (npm's banner left out)", async () => {
    const doc = await readFile(join(repo, "docs", "analyser.md"), "utf8")
    assert.include(doc, "npm start --silent -- --json")
    const result = await runCommand("npm", ["start", "--silent", "--", "--json"], { cwd: repo })
    assert.strictEqual(result.code, 0)
    assert.match((JSON.parse(result.stdout) as Analysis).session.id, /^ses_/)
  })
})
