/**
 * Kill loop: OpenCode processes running the plugin are killed with SIGKILL at random moments, over and over, and
 * restarted on the same home directory; at the end, one more start checks what the crashes left behind.
 *
 *   node_modules/.bin/bun scripts/crash-loop.ts [--kills 120] [--workers 2] [--source] [--seed 1]
 *
 * Each worker is a stand-in for one OpenCode process (the plugin loaded through its factory, as OpenCode does, with a
 * fake host): it keeps one session going, request after request: one more tool output, the transform, `discard` of
 * that output, `session.idle` (which writes the session file and records the lifetime totals under the shared
 * lock). A prune is acknowledged once the `session.idle` after it has returned. Workers share the home, so they
 * contend for the lifetime lock; kills land in the middle of writes and while the lock is held. Runs the bundle
 * (`dist/plugin.js`, run `npm run build` first) under the running binary (Bun: what OpenCode uses), or the source
 * with `--source`. The kill timing is random (seeded); everything else is deterministic.
 *
 * Automatic rules and folding are off, so what the final start finds pruned is what the discards pruned. Prints
 * JSON: kills, acknowledged prunes and how many the final start still finds pruned, how long the first `session.idle`
 * after each restart took, what the crashes left in the state folder before the final start, and what is left after
 * it.
 */
import { spawn } from "node:child_process"
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { fileURLToPath, pathToFileURL } from "node:url"
import { parseArgs } from "node:util"

const { values: options } = parseArgs({
  options: {
    kills: { type: "string", default: "120" },
    workers: { type: "string", default: "2" },
    source: { type: "boolean", default: false },
    seed: { type: "string", default: "1" },
    // Internal: the worker and final-check roles of this same script.
    role: { type: "string", default: "loop" },
    slot: { type: "string", default: "0" },
    calls: { type: "string", default: "0" },
    acked: { type: "string", default: "" }
  }
})

const script = fileURLToPath(import.meta.url)
const entry = options.source
  ? fileURLToPath(new URL("../src/plugin.ts", import.meta.url))
  : fileURLToPath(new URL("../dist/plugin.js", import.meta.url))

const sessionOf = (slot: number) => `ses_crashloop${String(slot).padStart(2, "0")}`
const fileOf = (i: number) => `/project/src/file${i}.ts`
const output = (i: number) =>
  Array.from({ length: 60 }, (_, line) => `file ${i} line ${line}: const value = ${line * i};`).join("\n")

/** The session's history with `calls` tool calls, one per turn, as OpenCode would send it. Deterministic IDs. */
const history = (slot: number, calls: number) => {
  const sessionID = sessionOf(slot)
  const messages: Array<Record<string, unknown>> = []
  for (let i = 1; i <= calls; i++) {
    messages.push({
      info: {
        id: `msg_u${i}`,
        sessionID,
        role: "user",
        time: { created: i * 1000 },
        agent: "build",
        model: { providerID: "fake", modelID: "fake" }
      },
      parts: [{ id: `prt_u${i}`, sessionID, messageID: `msg_u${i}`, type: "text", text: `step ${i}` }]
    })
    const base = { sessionID, messageID: `msg_a${i}` }
    messages.push({
      info: {
        id: `msg_a${i}`,
        sessionID,
        role: "assistant",
        time: { created: i * 1000 + 1 },
        parentID: `msg_u${i}`,
        modelID: "fake",
        providerID: "fake",
        mode: "build",
        path: { cwd: "/project", root: "/project" },
        cost: 0,
        tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } }
      },
      parts: [
        { id: `prt_s${i}`, ...base, type: "step-start" },
        {
          id: `prt_t${i}`,
          ...base,
          type: "tool",
          callID: `call_${i}`,
          tool: "read",
          state: {
            status: "completed",
            input: { filePath: fileOf(i) },
            output: output(i),
            title: "",
            metadata: {},
            time: { start: 1, end: 2 }
          }
        },
        {
          id: `prt_f${i}`,
          ...base,
          type: "step-finish",
          reason: "tool-calls",
          cost: 0,
          tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } }
        }
      ]
    })
  }
  return messages
}

const fakeClient = () => {
  const ok = async (data: unknown) => ({ data, error: undefined })
  return {
    session: {
      get: (request: { path: { id: string } }) => ok({ id: request.path.id }),
      messages: () => ok([]),
      prompt: () => ok({ info: { id: "msg_note", role: "user" }, parts: [] }),
      status: () => ok({}),
      abort: () => ok(true)
    },
    tui: { showToast: () => ok(true) },
    app: { log: () => ok(true) }
  }
}

const loadPlugin = async () => {
  const module = await import(pathToFileURL(entry).href)
  return module.default({
    client: fakeClient(),
    directory: "/project",
    worktree: "/project",
    project: {},
    experimental_workspace: { register: () => undefined },
    serverUrl: new URL("http://localhost:4096"),
    $: undefined
  })
}

/**
 * What OpenCode passes a tool's `execute`: `messageID` is the assistant message holding the call, which every later
 * request's history holds. (A message no history holds reads as an undo of the discard's turn, and the undo rule
 * withdraws the discard at the next start: this loop once passed such a message, and counted those as lost.)
 */
const toolContext = (sessionID: string, messageID: string) => ({
  sessionID,
  messageID,
  agent: "build",
  directory: "/project",
  worktree: "/project",
  abort: new AbortController().signal,
  metadata: () => undefined,
  ask: async () => undefined
})

/** The stable ID the transform listed for call `i`, read from the <prunable-tools> block it appended. */
/** The stable ID the plugin gave call `i`: the `[id N]` tag at the head of its output as sent. */
const listedId = (messages: ReadonlyArray<unknown>, i: number): string | undefined => {
  for (const message of messages as Array<{ parts?: Array<{ callID?: string; state?: { output?: string } }> }>) {
    for (const part of message.parts ?? []) {
      if (part.callID === `call_${i}`) return /^\[id (\d+)\]\n/.exec(part.state?.output ?? "")?.[1]
    }
  }
  return undefined
}

/** One OpenCode process: requests, prunes and idles for ever, printing `ack <i>` and `idle <ms>` lines. */
const worker = async () => {
  const slot = Number(options.slot)
  const sessionID = sessionOf(slot)
  const hooks = await loadPlugin()
  process.stdout.write("ready\n")
  for (let calls = Number(options.calls) + 1;; calls++) {
    process.stdout.write(`call ${calls}\n`)
    const messages = history(slot, calls)
    await hooks["experimental.chat.messages.transform"]({}, { messages })
    const id = listedId(messages, calls)
    if (id === undefined) throw new Error(`call ${calls} was not listed`)
    await hooks.tool.discard.execute({ ids: ["noise", id] }, toolContext(sessionID, `msg_a${calls}`))
    const start = performance.now()
    await hooks.event({ event: { type: "session.idle", properties: { sessionID } } })
    process.stdout.write(`idle ${(performance.now() - start).toFixed(1)}\nack ${calls}\n`)
  }
}

/** The next start after the last crash: every acknowledged prune must still be applied. Prints the count. */
const finalCheck = async () => {
  const hooks = await loadPlugin()
  const acked = JSON.parse(options.acked) as Record<string, { calls: number; acked: Array<number> }>
  let found = 0
  let missing = 0
  for (const [slot, { acked: calls, calls: total }] of Object.entries(acked)) {
    const messages = history(Number(slot), total)
    await hooks["experimental.chat.messages.transform"]({}, { messages })
    const parts = new Map<string, string>()
    for (const message of messages as Array<{ parts: Array<{ callID?: string; state?: { output?: string } }> }>) {
      for (const part of message.parts) if (part.callID !== undefined) parts.set(part.callID, part.state?.output ?? "")
    }
    for (const i of calls) {
      if (parts.get(`call_${i}`)?.startsWith("[pruned")) found++
      else missing++
    }
    await hooks.event({ event: { type: "session.idle", properties: { sessionID: sessionOf(Number(slot)) } } })
  }
  await hooks.dispose()
  process.stdout.write(`${JSON.stringify({ found, missing })}\n`)
}

interface Running {
  readonly child: ReturnType<typeof spawn>
  readonly ready: Promise<void>
  readonly exit: Promise<void>
}

const loop = async () => {
  const kills = Number(options.kills)
  const workers = Number(options.workers)
  let seed = Number(options.seed)
  const random = () => {
    // mulberry32: the kill timing is reproducible from the seed.
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
  const root = await mkdtemp(join(tmpdir(), "dcp-crash-loop-"))
  const env = {
    ...process.env,
    HOME: join(root, "home"),
    XDG_CONFIG_HOME: join(root, "config"),
    XDG_DATA_HOME: join(root, "data"),
    OPENCODE_CONFIG_DIR: ""
  }
  const stateDir = join(root, "data", "opencode", "storage", "plugin", "dcp")
  // No automatic rule prunes or folds: what the final start finds pruned was pruned by a discard.
  await mkdir(join(root, "config", "opencode"), { recursive: true })
  const off = { enabled: false }
  await writeFile(
    join(root, "config", "opencode", "dcp.jsonc"),
    JSON.stringify({
      strategies: {
        deduplication: off,
        supersedeWrites: off,
        purgeErrors: off,
        staleOutputs: off,
        repeats: off,
        fold: off
      }
    })
  )
  const passThrough = options.source ? ["--source"] : []
  const slots = Array.from({ length: workers }, () => ({ calls: 0, acked: [] as Array<number> }))
  const firstIdle: Array<number> = []
  const leftByKills = { kills: 0, temporaries: 0, locks: 0 }
  let unexpectedExits = 0

  const start = (slot: number, restart: boolean): Running => {
    const args = [
      script,
      "--role",
      "worker",
      "--slot",
      String(slot),
      "--calls",
      String(slots[slot]!.calls),
      ...passThrough
    ]
    const child = spawn(process.execPath, args, { env, stdio: ["ignore", "pipe", "inherit"] })
    let sawIdle = false
    const ready = new Promise<void>((resolve) => {
      createInterface({ input: child.stdout! }).on("line", (line) => {
        const [what, value] = line.split(" ")
        if (what === "ready") resolve()
        else if (what === "call") slots[slot]!.calls = Math.max(slots[slot]!.calls, Number(value))
        else if (what === "ack") slots[slot]!.acked.push(Number(value))
        else if (what === "idle" && !sawIdle) {
          sawIdle = true
          if (restart) firstIdle.push(Number(value))
        }
      })
    })
    const exit = new Promise<void>((resolve) =>
      child.on("close", () => {
        // A worker that ends without being killed failed on its own: the loop would measure nothing.
        if (!child.killed) unexpectedExits++
        resolve()
      })
    )
    return { child, ready, exit }
  }

  const running = slots.map((_, slot) => start(slot, false))
  await Promise.all(running.map((r) => r.ready))
  const began = performance.now()
  for (let kill = 0; kill < kills; kill++) {
    const slot = Math.floor(random() * workers)
    await new Promise((resolve) => setTimeout(resolve, 20 + random() * 580))
    const victim = running[slot]!
    victim.child.kill("SIGKILL")
    await victim.exit
    // What this kill left: files named after the killed process, and the lock if it held it. Names carry the PID
    // as `-<pid>-` (or `.<pid>.` in names written before owner tags), lock tokens start with `<host>-<pid>-` (or `<pid>.`).
    const pid = victim.child.pid
    const names = await readdir(stateDir).catch(() => [] as Array<string>)
    const temporaries = names.filter((name) =>
      /\.(tmp|stale)$/.test(name) && new RegExp(`[.-]${pid}[.-]`).test(name)
    ).length
    const lock = await readFile(join(stateDir, "lifetime.stats.json.lock"), "utf8").catch(() => "")
    const locks = new RegExp(`^([0-9a-f]+-)?${pid}[.-]`).test(lock) ? 1 : 0
    leftByKills.temporaries += temporaries
    leftByKills.locks += locks
    if (temporaries + locks > 0) leftByKills.kills++
    running[slot] = start(slot, true)
    await running[slot]!.ready
  }
  for (const r of running) r.child.kill("SIGKILL")
  await Promise.all(running.map((r) => r.exit))
  const loopSeconds = (performance.now() - began) / 1000

  const leftovers = async () => {
    const names = await readdir(stateDir).catch(() => [] as Array<string>)
    const count = (pattern: RegExp) => names.filter((name) => pattern.test(name)).length
    return {
      files: names.length,
      temporaries: count(/\.tmp$/),
      locks: count(/\.lock$/),
      brokenLocks: count(/\.stale$/),
      quarantined: count(/\.corrupt-/)
    }
  }
  const beforeFinalStart = await leftovers()

  const acked = Object.fromEntries(slots.map((s, slot) => [slot, s]))
  const final = spawn(process.execPath, [script, "--role", "final", "--acked", JSON.stringify(acked), ...passThrough], {
    env,
    stdio: ["ignore", "pipe", "inherit"]
  })
  let finalOutput = ""
  final.stdout!.setEncoding("utf8").on("data", (chunk: string) => void (finalOutput += chunk))
  const finalCode = await new Promise<number | null>((resolve) => final.on("close", resolve))
  const check = JSON.parse(finalOutput.trim().split("\n").at(-1) ?? "{}") as { found?: number; missing?: number }

  const afterFinalStart = await leftovers()
  const names = await readdir(stateDir)
  let unparsable = 0
  for (const name of names.filter((n) => n.endsWith(".json"))) {
    try {
      JSON.parse(await readFile(join(stateDir, name), "utf8"))
    } catch {
      unparsable++
    }
  }
  // Version 2: each session's totals, plus those of sessions no longer kept one by one.
  const lifetime = JSON.parse(await readFile(join(stateDir, "lifetime.stats.json"), "utf8")) as {
    retired: { calls: number }
    sessions: Record<string, { calls: number }>
  }
  const lifetimeCalls = Object.values(lifetime.sessions).reduce((sum, s) => sum + s.calls, lifetime.retired.calls)
  const sorted = [...firstIdle].sort((a, b) => a - b)
  const quantile = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0
  const ackedPrunes = slots.reduce((sum, s) => sum + s.acked.length, 0)

  console.log(JSON.stringify(
    {
      runtime: `${process.versions.bun === undefined ? "node" : "bun"} ${
        process.versions.bun ?? process.versions.node
      }`,
      plugin: options.source ? "src/plugin.ts" : "dist/plugin.js",
      workers,
      kills,
      unexpectedExits,
      loopSeconds: Number(loopSeconds.toFixed(1)),
      leftByKills: { ...leftByKills, kills: `${leftByKills.kills} of ${kills}` },
      acknowledgedPrunes: ackedPrunes,
      finalStart: { exitCode: finalCode, stillPruned: check.found, lost: check.missing },
      lifetimeCallsRecorded: lifetimeCalls,
      firstIdleAfterRestartMs: {
        restarts: firstIdle.length,
        median: quantile(0.5),
        p95: quantile(0.95),
        max: sorted.at(-1) ?? 0,
        over1s: firstIdle.filter((ms) => ms > 1000).length
      },
      stateFolderBeforeFinalStart: beforeFinalStart,
      stateFolderAfterFinalStart: afterFinalStart,
      unparsableStateFiles: unparsable
    },
    null,
    2
  ))
  await rm(root, { recursive: true, force: true })
  const clean = afterFinalStart.temporaries + afterFinalStart.locks + afterFinalStart.brokenLocks === 0
  const sound = unexpectedExits === 0 && ackedPrunes > 0 && check.missing === 0 && unparsable === 0 && finalCode === 0
  process.exit(clean && sound ? 0 : 1)
}

if (options.role === "worker") await worker()
else if (options.role === "final") await finalCheck()
else await loop()
