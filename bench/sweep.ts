/**
 * `npm run bench:sweep`: how the defaults of scheduling and masking were chosen. Replays the generated sessions (100,
 * 300 and 1,000 tool calls by default), the recorded example session (examples/) and the 22 recorded sessions of
 * `../shared/corpus` (when present) once per setting, each setting one change from the defaults, and prints the
 * cost under Anthropic's prompt-cache rules (OpenCode's breakpoints) against the better of OpenCode alone and
 * OpenCode with its own `compaction.prune`, and how many of the model's edits were made with the edited file's
 * content masked (the price in what the model sees). Only token, cost and edit figures are compared (they are
 * deterministic), so it runs the plugin from source.
 *
 *   npm run bench:sweep
 *   npm run bench:sweep -- --sizes 100,300 --seed 3 --corpus ../shared/corpus/openhands-sonnet35-swebv
 *   npm run bench:sweep -- --settings '[["mine", {"cache": {"minPruneTokens": 5000}}]]'   other settings
 *
 * `--fidelity`: the retention/cost curve instead (SPEC 9.12). Each setting on the recorded sessions of both sets of
 * `../shared/corpus` (long and short): the cost x the better baseline, the same with every miss paid for as the recall
 * it would take, and the share of the lines the model used whose only earlier source was a tool output that the
 * plugin still sent (src/simulator/fidelity.ts). Settings along the levers that keep more in view.
 *
 *   npm run bench:sweep -- --fidelity
 *   npm run bench:sweep -- --fidelity --settings '[["keepRecent 12", {"strategies": {"staleOutputs": {"keepRecent": 12}}}]]'
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { parseArgs } from "node:util"
import { root, run, work } from "./process.ts"
import {
  type Analysed,
  analysed,
  costRatio,
  costRatioOf,
  defaultCorpus,
  editsOf,
  longCorpus,
  paidRatioOf,
  pairwise,
  percent,
  retentionOf,
  sessionsIn,
  table,
  worstOf
} from "./corpus.ts"
import type { ReplayResult } from "./replay.ts"

const { values: args } = parseArgs({
  options: {
    sizes: { type: "string", default: "100,300,1000" },
    seed: { type: "string", default: "1" },
    corpus: { type: "string", default: defaultCorpus },
    settings: { type: "string" },
    fidelity: { type: "boolean", default: false }
  }
})
const sizes = args.sizes.split(",").filter((size) => size !== "").map(Number)
const seed = Number(args.seed)
const corpus = sessionsIn(args.corpus)

/** One change from the defaults each; `defaults` first. */
const oneChange: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ["defaults", {}],
  ["cache.mode immediate", { cache: { mode: "immediate" } }],
  ["cache.horizon 0 (never while warm)", { cache: { horizon: 0 } }],
  ["cache.horizon 10", { cache: { horizon: 10 } }],
  ["cache.horizon 1000", { cache: { horizon: 1000 } }],
  ["cache.minPruneTokens 0", { cache: { minPruneTokens: 0 } }],
  ["cache.minPruneTokens 8000", { cache: { minPruneTokens: 8000 } }],
  ["cache.patience 0 (break-even alone)", { cache: { patience: 0 } }],
  ["cache.patience 1", { cache: { patience: 1 } }],
  ["cache.patience 3", { cache: { patience: 3 } }],
  ["cache.breakpoint off", { cache: { breakpoint: false } }],
  ["cache.pressure 0.8", { cache: { pressure: 0.8 } }],
  ["cache.pressure 1 (never)", { cache: { pressure: 1 } }],
  ["repeats off", { strategies: { repeats: { enabled: false } } }],
  ["staleOutputs off", { strategies: { staleOutputs: { enabled: false } } }],
  ["staleOutputs.trigger 0", { strategies: { staleOutputs: { trigger: 0 } } }],
  ["staleOutputs.trigger 12500", { strategies: { staleOutputs: { trigger: 12500 } } }],
  ["staleOutputs.trigger 20000 (before)", { strategies: { staleOutputs: { trigger: 20000 } } }],
  ["staleOutputs.trigger 40000", { strategies: { staleOutputs: { trigger: 40000 } } }],
  ["staleOutputs.keepRecent 3", { strategies: { staleOutputs: { keepRecent: 3 } } }],
  ["staleOutputs.keepRecent 7", { strategies: { staleOutputs: { keepRecent: 7 } } }],
  ["staleOutputs.keepRecent 10", { strategies: { staleOutputs: { keepRecent: 10 } } }],
  ["staleOutputs.keepRecent 20", { strategies: { staleOutputs: { keepRecent: 20 } } }],
  ["staleOutputs.keepFiles 0", { strategies: { staleOutputs: { keepFiles: 0 } } }],
  ["staleOutputs.keepFiles 2", { strategies: { staleOutputs: { keepFiles: 2 } } }],
  ["staleOutputs.keepFiles 4", { strategies: { staleOutputs: { keepFiles: 4 } } }],
  ["keepRecent 10, keepFiles 0 (before)", { strategies: { staleOutputs: { keepRecent: 10, keepFiles: 0 } } }],
  ["staleOutputs.clearAtLeast 10000", { strategies: { staleOutputs: { clearAtLeast: 10000 } } }],
  ["staleOutputs keeps old file changes", { strategies: { staleOutputs: { protectedTools: ["write", "edit"] } } }],
  ["compaction on", { compaction: { enabled: true } }],
  ["compaction.atTokens 40000", { compaction: { enabled: true, atTokens: 40000 } }],
  ["compaction.atTokens 60000", { compaction: { enabled: true, atTokens: 60000 } }],
  ["compaction.atTokens 80000", { compaction: { enabled: true, atTokens: 80000 } }]
]
/** Along the levers that keep more of what the model may use in view, and what folds and masks less. */
const stale = (settings: Record<string, unknown>) => ({ strategies: { staleOutputs: settings } })
const fidelityCurve: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ["defaults", {}],
  ["keepRecent 3", stale({ keepRecent: 3 })],
  ["keepRecent 7", stale({ keepRecent: 7 })],
  ["keepRecent 10", stale({ keepRecent: 10 })],
  ["keepRecent 15", stale({ keepRecent: 15 })],
  ["keepRecent 20", stale({ keepRecent: 20 })],
  ["keepRecent 30", stale({ keepRecent: 30 })],
  ["keepFiles 2", stale({ keepFiles: 2 })],
  ["keepFiles 4", stale({ keepFiles: 4 })],
  ["keepFiles 6", stale({ keepFiles: 6 })],
  ["trigger 40000", stale({ trigger: 40000 })],
  ["clearAtLeast 10000", stale({ clearAtLeast: 10000 })],
  ["fold.keepTurns 3", { strategies: { fold: { keepTurns: 3 } } }],
  ["fold off", { strategies: { fold: { enabled: false } } }],
  ["staleOutputs off", stale({ enabled: false })]
]

const settings: ReadonlyArray<readonly [string, Record<string, unknown>]> = args.settings === undefined
  ? args.fidelity ? fidelityCurve : oneChange
  : JSON.parse(args.settings)

/** Runs a script under this Node; its standard output, or an error with its standard error. */
const node = async (argv: ReadonlyArray<string>): Promise<string> => {
  const { code, stderr, stdout } = await run(process.execPath, argv)
  if (code !== 0) throw new Error(`${argv.join(" ")}: exit ${code}\n${stderr}`)
  return stdout
}

const replayed = async (
  size: number,
  plugin: "none" | "prune" | "real",
  config: Record<string, unknown>
): Promise<ReplayResult["accounting"]> => {
  const out = join(work, `sweep-${process.pid}-${size}-${plugin}.json`)
  const options = { size, seed, plugin, harness: join(root, "bench", "harness.ts"), config, accounting: true, out }
  await node([join(root, "bench", "replay.ts"), JSON.stringify(options)])
  const result = JSON.parse(readFileSync(out, "utf8")) as ReplayResult
  rmSync(out)
  return result.accounting
}

const ratio = (value: number, of: number) => (value / of).toFixed(3)

/** Misses per 100 requests of a set of sessions, with the plugin. */
const missRate = (sessions: ReadonlyArray<Analysed>): string => {
  const requests = sessions.reduce((sum, s) => sum + s.plugin.fidelity.requests, 0)
  const misses = sessions.reduce((sum, s) => sum + s.plugin.fidelity.misses.length, 0)
  return (100 * misses / Math.max(1, requests)).toFixed(1)
}

/** The plugin's config file for the analyser, holding `config`, in `dir` (one setting at a time). */
const configFile = (dir: string, config: unknown): string => {
  const file = join(dir, "dcp.json")
  writeFileSync(file, JSON.stringify(config))
  return file
}

/** The retention/cost curve on both recorded sets (`--fidelity`). */
const fidelityMain = async () => {
  mkdirSync(work, { recursive: true })
  const dir = mkdtempSync(join(work, "sweep-"))
  const long = sessionsIn(longCorpus)
  const short = sessionsIn(defaultCorpus)
  if (long.length + short.length === 0) throw new Error(`no session exports in ${longCorpus} or ${defaultCorpus}`)
  const rows: Array<Array<string>> = []
  for (const [name, config] of settings) {
    process.stderr.write(`${name} ...\n`)
    const file = configFile(dir, config)
    const cells = [name]
    for (const set of [long, short]) {
      if (set.length === 0) continue
      const sessions = await pairwise(set, (session) => analysed(session, file))
      cells.push(
        costRatioOf(sessions).toFixed(3),
        costRatio(worstOf(sessions)).toFixed(3),
        paidRatioOf(sessions).toFixed(3),
        percent(retentionOf(sessions)),
        missRate(sessions)
      )
    }
    rows.push(cells)
  }
  rmSync(dir, { recursive: true, force: true })
  const columns = ["x better", "worst", "x paid", "retained", "misses /100"]
  const header = [
    "setting",
    ...(long.length > 0 ? columns.map((column) => `long: ${column}`) : []),
    ...(short.length > 0 ? columns.map((column) => `short: ${column}`) : [])
  ]
  console.log(
    `Recorded sessions (${long.length} long, ${short.length} short), Anthropic's prompt-cache rules, x the better of ` +
      "OpenCode alone and its compaction.prune (all: ratio of the sums); x paid: the same with each request that " +
      "missed a line the model used charged the recall it would take; retained: of the lines the model's replies used " +
      "whose only earlier source was a tool output, the share the plugin still sent (SPEC 9.12); misses per 100 requests"
  )
  console.log(table(header, rows))
}

const main = async () => {
  mkdirSync(work, { recursive: true })
  const dir = mkdtempSync(join(work, "sweep-"))
  const example = join(root, "examples", "session.json")
  const columns = [
    ...sizes.map((n) => `${n.toLocaleString("en-US")} calls`),
    "example",
    ...(corpus.length > 0 ? [`corpus (${corpus.length}): all / worst`] : []),
    `masked edits: ${
      [sizes.at(-1)?.toLocaleString("en-US") ?? "-", "example", ...(corpus.length > 0 ? ["corpus"] : [])].join(" · ")
    }`
  ]
  const baselines = await pairwise(sizes, async (size) => {
    const [none, prune] = await Promise.all([replayed(size, "none", {}), replayed(size, "prune", {})])
    return Math.min(none.priced.anthropic!.cost, prune.priced.anthropic!.cost)
  })
  const rows: Array<Array<string>> = []
  for (const [name, config] of settings) {
    process.stderr.write(`${name} ...\n`)
    const file = configFile(dir, config)
    const cells = [name]
    const generated = await pairwise(sizes, (size) => replayed(size, "real", config))
    for (const [i, accounting] of generated.entries()) {
      cells.push(ratio(accounting.priced.anthropic!.cost, baselines[i]!))
    }
    const recorded = await analysed(example, file)
    cells.push(costRatio(recorded).toFixed(3))
    const edits = [generated.at(-1)?.edits, recorded.edits]
    if (corpus.length > 0) {
      const sessions = await pairwise(corpus, (session) => analysed(session, file))
      cells.push(`${costRatioOf(sessions).toFixed(3)} / ${costRatio(worstOf(sessions)).toFixed(3)}`)
      edits.push(editsOf(sessions))
    }
    cells.push(edits.map((e) => (e === undefined ? "-" : `${e.masked}/${e.made}`)).join(" · "))
    rows.push(cells)
  }
  rmSync(dir, { recursive: true, force: true })
  const header = [args.settings === undefined ? "setting (one change from the defaults)" : "setting", ...columns]
  console.log(
    `Anthropic-priced cost, x the better of OpenCode alone and OpenCode's compaction.prune (seed ${seed}; lower is better); ` +
      "masked edits: the model's edits of a file made while every copy of its content it had seen was pruned, of all its edits of files it had seen (the model reads each such file again before the edit, and the cost includes it)"
  )
  console.log(table(header, rows))
}
;(args.fidelity ? fidelityMain() : main()).catch((error) => {
  console.error(error instanceof Error ? error.message : error)
  process.exit(1)
})
