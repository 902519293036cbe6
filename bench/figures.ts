/**
 * `npm run bench:figures`: every figure of what the model receives, in one JSON file, so that a change meant to make
 * the plugin faster (and to change nothing it sends) can be checked against the commit it started from. Collects the
 * deterministic part of `npm run bench` (the plugin's replays of the generated sessions, both cache modes: cost,
 * tokens, compactions, prunes, notes, masked edits, re-reads, retention) and of `npm run bench:corpus` and `npm start`
 * (the analyser's whole `--json` report of every recorded session and of the example session, built-in defaults);
 * latency, memory and load are left out. `--compare` says whether two such files are identical, and where not.
 *
 *   npm run bench:figures -- --out .bench/figures.json                     this checkout
 *   npm run bench:figures -- --root ../base --out .bench/figures-base.json another checkout's src/ and bench/
 *   npm run bench:figures -- --compare .bench/figures-base.json .bench/figures.json
 *   npm run bench:figures -- --sizes 100,1000 --no-corpus --out ...        a shorter run
 *
 * `--root`: the checkout whose analyser (src/analyse.ts) and replay (bench/replay.ts) run, with its own sources and its
 * own dependencies; the figures of two commits come from the same generated sessions (same seed) and recorded ones.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { basename, join, resolve } from "node:path"
import { parseArgs } from "node:util"
import { defaultCorpus, longCorpus, pairwise, sessionsIn } from "./corpus.ts"
import { root, run, work } from "./process.ts"
import type { ReplayResult } from "./replay.ts"

const { positionals, values: args } = parseArgs({
  options: {
    root: { type: "string" },
    out: { type: "string" },
    sizes: { type: "string", default: "100,1000,3000,5000" },
    seed: { type: "string", default: "1" },
    "no-corpus": { type: "boolean", default: false },
    "no-replays": { type: "boolean", default: false },
    compare: { type: "boolean", default: false }
  },
  allowPositionals: true
})

/** What a replay measured of time and memory: left out, the rest is what the model was sent and what it cost. */
const measured: ReadonlySet<string> = new Set([
  "setupMs",
  "transformMs",
  "systemMs",
  "phasesMs",
  "rssBeforeReplayMB",
  "peakRssMB",
  "liveHeapMB"
])

const figuresOfReplay = (result: ReplayResult): Record<string, unknown> =>
  Object.fromEntries(Object.entries(result).filter(([key]) => !measured.has(key)))

const progress = (line: string) => process.stderr.write(`${line}\n`)

const mustRun = async (what: string, command: string, argv: ReadonlyArray<string>) => {
  const result = await run(command, argv)
  if (result.code !== 0) throw new Error(`${what} failed (exit ${result.code}):\n${result.stderr.slice(-4000)}`)
  return result
}

/** The analyser's report of one exported session (or `--example`), with the built-in defaults. */
const analysed = async (checkout: string, session: string, configFile: string): Promise<unknown> => {
  const { stdout } = await mustRun(`analyse ${basename(session)}`, process.execPath, [
    join(checkout, "src", "analyse.ts"),
    ...(session === "--example" ? ["--example"] : [session]),
    "--json",
    "--config",
    configFile
  ])
  // The report names the config file it read, a temporary one that differs from run to run.
  return JSON.parse(stdout.replaceAll(JSON.stringify(configFile), JSON.stringify("<config file>")))
}

/** The plugin's replay of a generated session, as `npm run bench` runs it, its measured times left out. */
const replayed = async (checkout: string, size: number, seed: number, mode: "auto" | "immediate") => {
  mkdirSync(work, { recursive: true })
  const out = join(work, `figures-${size}-${mode}-${process.pid}.json`)
  const options = {
    size,
    seed,
    plugin: "real",
    harness: join(checkout, "bench", "harness.ts"),
    config: { cache: { mode } },
    accounting: true,
    tokenizer: "default",
    compaction: true,
    otherSystem: false,
    blindEdits: false,
    out
  }
  await mustRun(`replay ${size} ${mode}`, process.execPath, [
    "--expose-gc",
    join(checkout, "bench", "replay.ts"),
    JSON.stringify(options)
  ])
  const result = JSON.parse(readFileSync(out, "utf8")) as ReplayResult
  rmSync(out)
  return figuresOfReplay(result)
}

const collect = async (): Promise<Record<string, unknown>> => {
  const checkout = resolve(args.root ?? root)
  const figures: Record<string, unknown> = {}
  if (!args["no-replays"]) {
    const seed = Number(args.seed)
    for (const size of args.sizes.split(",").map(Number)) {
      for (const mode of ["auto", "immediate"] as const) {
        const started = performance.now()
        figures[`replay ${size} ${mode}`] = await replayed(checkout, size, seed, mode)
        progress(`replay ${size} ${mode}: ${((performance.now() - started) / 1000).toFixed(0)} s`)
      }
    }
  }
  if (!args["no-corpus"]) {
    mkdirSync(work, { recursive: true })
    const dir = mkdtempSync(join(work, "figures-"))
    const configFile = join(dir, "dcp.json")
    writeFileSync(configFile, "{}")
    try {
      const sessions = ["--example", ...sessionsIn(defaultCorpus), ...sessionsIn(longCorpus)]
      const reports = await pairwise(sessions, async (session) => {
        const report = await analysed(checkout, session, configFile)
        progress(`analysed ${session === "--example" ? "the example session" : basename(session)}`)
        return report
      })
      sessions.forEach((session, i) => {
        figures[`analyse ${session === "--example" ? "example" : basename(session, ".json")}`] = reports[i]
      })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  }
  return figures
}

/** The paths at which two JSON values differ, the first `limit` of them. */
const differences = (a: unknown, b: unknown, path = "", found: Array<string> = [], limit = 20): Array<string> => {
  if (found.length >= limit) return found
  if (typeof a === "object" && a !== null && typeof b === "object" && b !== null) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)])
    for (const key of keys) {
      differences(
        (a as Record<string, unknown>)[key],
        (b as Record<string, unknown>)[key],
        `${path}.${key}`,
        found,
        limit
      )
    }
    return found
  }
  if (a !== b) found.push(`${path}: ${JSON.stringify(a)} -> ${JSON.stringify(b)}`)
  return found
}

const compare = ([before, after]: ReadonlyArray<string>): number => {
  if (before === undefined || after === undefined) {
    console.error("usage: npm run bench:figures -- --compare <before.json> <after.json>")
    return 2
  }
  const a = readFileSync(before, "utf8")
  const b = readFileSync(after, "utf8")
  const entries = Object.keys(JSON.parse(a) as object).length
  if (a === b) {
    console.log(`identical: ${entries} entries, ${a.length.toLocaleString("en-US")} bytes (${before}, ${after})`)
    return 0
  }
  console.log(`DIFFERENT (${before} -> ${after}):`)
  for (const line of differences(JSON.parse(a), JSON.parse(b))) console.log(`  ${line}`)
  return 1
}

if (args.compare) {
  process.exit(compare(positionals))
} else {
  const figures = await collect()
  const text = `${JSON.stringify(figures, null, 1)}\n`
  const out = args.out ?? join(work, "figures.json")
  writeFileSync(out, text)
  progress(`${Object.keys(figures).length} entries written to ${out}`)
}
