import { execFile, execFileSync } from "node:child_process"
import { closeSync, openSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { promisify } from "node:util"
import { assert, it } from "vitest"
import type { Analysis } from "../../src/analysis/analysis.ts"
import { call, done, read, sourceFile } from "./support/fixtures.ts"
import { contentText } from "./support/requests.ts"
import { opencodeBinary, pluginState } from "./support/opencode.ts"
import { useScenario } from "./support/scenario.ts"
import { waitFor } from "./support/wait.ts"

const repo = new URL("../../", import.meta.url).pathname
const run = promisify(execFile)

const scenario = useScenario({
  files: { "src/a.ts": sourceFile("alpha"), "src/b.ts": sourceFile("beta"), "src/c.ts": sourceFile("gamma") }
})

/** `opencode export` into a file: through a pipe, OpenCode 1.18 exits before a large export is written out. */
const exportSession = (env: Readonly<Record<string, string>>, project: string, sessionID: string, file: string) => {
  const fd = openSync(file, "w")
  try {
    execFileSync(opencodeBinary, ["export", sessionID], { cwd: project, env, stdio: ["ignore", fd, "pipe"] })
  } finally {
    closeSync(fd)
  }
}

it("the analyser replays a fresh export of the real OpenCode as the plugin ran it, compaction included", async () => {
  const s = scenario()
  const opencode = s.opencode()
  const session = await s.newSession()
  s.model.script([
    read(s, "src/a.ts", "an_1"),
    read(s, "src/b.ts", "an_2"),
    read(s, "src/a.ts", "an_3"),
    call("discard", { ids: ["noise", "2"] }, "an_4"),
    done
  ])
  await s.prompt(session, "read a.ts and b.ts, a.ts again, then drop b.ts")

  // OpenCode's own compaction: the summariser's request, then the session goes on after the summary.
  s.model.script([{ text: "Summary: read src/a.ts and src/b.ts; nothing changed." }, done, done])
  const compacted = await opencode.api("POST", `/session/${session}/summarize`, {
    providerID: "fake",
    modelID: "fake-model"
  })
  assert.strictEqual(compacted.status, 200)
  await s.waitIdle(session)
  s.model.script([read(s, "src/c.ts", "an_5"), read(s, "src/c.ts", "an_6"), done])
  await s.prompt(session, "now read c.ts twice")
  await s.waitIdle(session)

  const state = await waitFor("the plugin's state", async () => {
    const stored = await pluginState(opencode, session)
    return stored?.stats.byReason.deduplication?.calls === 2 ? stored : undefined
  }, 200)

  const file = join(s.root, "export.json")
  exportSession(opencode.env, opencode.project, session, file)
  // The same config files the plugin read (the scenario's HOME), so the replay runs with the same settings.
  // The model's edits replayed as it made them with the plugin on: a re-read would be one it did not make.
  const { stdout, stderr } = await run(process.execPath, [
    join(repo, "src", "analyse.ts"),
    file,
    "--json",
    "--blind-edits"
  ], {
    env: { ...opencode.env },
    maxBuffer: 64 * 1024 * 1024
  })
  assert.strictEqual(stderr, "")
  const analysis = JSON.parse(stdout) as Analysis

  const exported = JSON.parse(await readFile(file, "utf8")) as {
    messages: Array<{ info: { role: string; summary?: boolean } }>
  }
  assert.strictEqual(exported.messages.some((message) => message.info.summary === true), true)
  assert.strictEqual(
    analysis.session.requests,
    exported.messages.filter((message) => message.info.role === "assistant").length
  )
  assert.deepStrictEqual(analysis.modelCalls, { replayed: 1, accepted: 1, rejected: 0 })
  // What the offline replay pruned is what the plugin recorded while OpenCode ran.
  const byReason = Object.fromEntries(
    analysis.pruned.filter((row) => row.calls > 0).map((row) => [row.reason, row.calls])
  )
  assert.deepStrictEqual(
    byReason,
    Object.fromEntries(Object.entries(state.stats.byReason).map(([reason, t]) => [reason, t.calls]))
  )
  // The last request the model really received carried as many placeholders as the replay's last request.
  const last = s.requests().at(-1)!
  const placeholders = last.messages.filter((message) =>
    message.role === "tool" && contentText(message.content).startsWith("[pruned")
  )
  assert.isAbove(placeholders.length, 0)
  assert.strictEqual(analysis.finalRequest.prunedCalls, placeholders.length)
  // A session this short costs more with the plugin (its tool definitions and lists outweigh two placeholders).
  assert.isAbove(analysis.sent.addedTokens, 0)
  assert.strictEqual(analysis.sent.withPlugin.priced.anthropic!.requests, analysis.session.requests)
})

it("control: the bundled analyser (dist/analyse.js) runs on the example under Node 20 with the same figures", async () => {
  const node20 = "/usr/bin/node"
  const version = await run(node20, ["--version"]).then((result) => result.stdout.trim(), () => "")
  if (!version.startsWith("v20.")) {
    console.warn(`skipped: no Node 20 at ${node20} (${version || "absent"})`)
    return
  }
  const env = { PATH: process.env.PATH ?? "", HOME: scenario().root }
  const bundled = await run(node20, [join(repo, "dist", "analyse.js"), "--example", "--json"], {
    env,
    maxBuffer: 64 * 1024 * 1024
  })
  const source = await run(process.execPath, [join(repo, "src", "analyse.ts"), "--example", "--json"], {
    env,
    maxBuffer: 64 * 1024 * 1024
  })
  assert.deepStrictEqual(JSON.parse(bundled.stdout), JSON.parse(source.stdout))
})
