/**
 * `npm run bench:corpus`: the plugin on recorded sessions, through the offline analyser. By default both sets of
 * `../shared/corpus`: the 22 short sessions (`openhands-sonnet35-swebv/`) and the 7 long ones
 * (`claudecode-entire-cli/`), with the built-in defaults (compaction between turns off). A table per set: per
 * session, the tool calls, the compactions of each run (OpenCode alone, with its own `compaction.prune`, with the
 * plugin), the plugin's cost under Anthropic's prompt-cache rules (OpenCode's breakpoints) over the better of the two
 * baselines, its tokens over OpenCode alone's, and what masking cost the model (edits made with the file's content
 * masked, requests reading a masked file again); then the set together and its worst session.
 *
 *   npm run bench:corpus
 *   npm run bench:corpus -- --dir path/to/exports --config my.jsonc     (--dir again for more folders)
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { basename, join } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import type { Priced } from "../src/simulator/cost.ts"
import type { Edits } from "../src/simulator/edits.ts"
import type { Fidelity } from "../src/simulator/fidelity.ts"
import { root, run, work } from "./process.ts"

const corpora = join(root, "..", "shared", "corpus")
export const defaultCorpus = join(corpora, "openhands-sonnet35-swebv")
export const longCorpus = join(corpora, "claudecode-entire-cli")

/** One replay of a session: OpenCode alone, with its `compaction.prune`, or with the plugin. */
interface Run {
  /** Anthropic-priced, in uncached-input-token units. */
  readonly cost: number
  readonly tokens: number
  /** Summaries OpenCode made when a request reached the window (and, opted in, the plugin's between turns). */
  readonly compactions: number
  /** What the model used of earlier tool outputs and its requests still showed; misses priced as recalls. */
  readonly fidelity: Fidelity
  /** `cost` with every miss paid for: a recall each request with misses would take (Anthropic-priced). */
  readonly paid: number
}

export interface Analysed {
  readonly name: string
  readonly toolCalls: number
  readonly none: Run
  readonly prune: Run
  readonly plugin: Run
  /** With the plugin: the model's edits of files it had seen, and those made with the file's content masked. */
  readonly edits: Edits
  /** With the plugin: requests the model spent reading a masked file again before editing it. */
  readonly reReads: number
}

type RunName = "withoutPlugin" | "withOpenCodePrune" | "withPlugin"

/** The part of the analyser's `--json` read here (src/analysis/analysis.ts). */
interface AnalyserJson {
  readonly session: { readonly toolCalls: number }
  readonly sent: Record<
    RunName,
    {
      readonly priced: { readonly anthropic: Priced }
      readonly compactions: number
      readonly edits: Edits
      readonly reReads: number
      readonly fidelity: Fidelity
    }
  >
}

const runOf = (json: AnalyserJson, name: RunName): Run => {
  const run = json.sent[name]
  return {
    cost: run.priced.anthropic.cost,
    tokens: run.priced.anthropic.tokens,
    compactions: run.compactions,
    fidelity: run.fidelity,
    paid: run.priced.anthropic.cost + (run.fidelity.recallCost.anthropic ?? 0)
  }
}

/** One recorded session through the offline analyser (`--config`: a dcp.jsonc instead of the user's). */
export const analysed = async (file: string, configFile?: string): Promise<Analysed> => {
  const argv = [
    join(root, "src", "analyse.ts"),
    file,
    "--json",
    ...(configFile === undefined ? [] : ["--config", configFile])
  ]
  const { code, stderr, stdout } = await run(process.execPath, argv)
  if (code !== 0) throw new Error(`${file}: exit ${code}\n${stderr}`)
  const json = JSON.parse(stdout) as AnalyserJson
  return {
    name: basename(file, ".json"),
    toolCalls: json.session.toolCalls,
    none: runOf(json, "withoutPlugin"),
    prune: runOf(json, "withOpenCodePrune"),
    plugin: runOf(json, "withPlugin"),
    edits: json.sent.withPlugin.edits,
    reReads: json.sent.withPlugin.reReads
  }
}

const sumOf = <A>(items: ReadonlyArray<A>, pick: (item: A) => number): number =>
  items.reduce((total, item) => total + pick(item), 0)

/** The cheaper of OpenCode alone and OpenCode with its `compaction.prune`. */
const baseline = (s: Analysed): number => Math.min(s.none.cost, s.prune.cost)

/** The same with every miss of each run paid for (OpenCode alone has none). */
const paidBaseline = (s: Analysed): number => Math.min(s.none.paid, s.prune.paid)

/** The plugin's cost over the better baseline. */
export const costRatio = (s: Analysed): number => s.plugin.cost / baseline(s)

/** Several sessions' cost ratio: the plugin's cost over the better baselines', summed. */
export const costRatioOf = (sessions: ReadonlyArray<Analysed>): number =>
  sumOf(sessions, (s) => s.plugin.cost) / sumOf(sessions, baseline)

/** The cost ratio with every miss paid for, in each run, as the recall it would take. */
export const paidRatioOf = (sessions: ReadonlyArray<Analysed>): number =>
  sumOf(sessions, (s) => s.plugin.paid) / sumOf(sessions, paidBaseline)

/** Used lines of earlier tool outputs still in what the plugin sent, of all used (1 when none was used). */
export const retentionOf = (sessions: ReadonlyArray<Analysed>): number => {
  const used = sumOf(sessions, (s) => s.plugin.fidelity.used)
  return used === 0 ? 1 : sumOf(sessions, (s) => s.plugin.fidelity.retained) / used
}

/** The session with the lowest retention. */
export const leastRetainedOf = (sessions: ReadonlyArray<Analysed>): Analysed =>
  sessions.reduce((least, s) => (retentionOf([s]) < retentionOf([least]) ? s : least))

/** The session with the highest cost ratio. */
export const worstOf = (sessions: ReadonlyArray<Analysed>): Analysed =>
  sessions.reduce((worst, s) => (costRatio(s) > costRatio(worst) ? s : worst))

/** The masked edits of several sessions together. */
export const editsOf = (sessions: ReadonlyArray<Analysed>): Edits => ({
  made: sumOf(sessions, (s) => s.edits.made),
  masked: sumOf(sessions, (s) => s.edits.masked)
})

/** Runs `task` over `items` two at a time (the machines have two cores). */
export const pairwise = async <A, B>(items: ReadonlyArray<A>, task: (item: A) => Promise<B>): Promise<Array<B>> => {
  const results: Array<B> = new Array(items.length)
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const i = next++
      results[i] = await task(items[i]!)
    }
  }
  await Promise.all([worker(), worker()])
  return results
}

export const sessionsIn = (dir: string): Array<string> =>
  existsSync(dir) ? readdirSync(dir).filter((name) => name.endsWith(".json")).sort().map((name) => join(dir, name)) : []

/** A Markdown table, the first column left-aligned and the others right-aligned. */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`
  const rule = `|${widths.map((w, i) => `${"-".repeat(w + 1)}${i === 0 ? "-" : ":"}`).join("|")}|`
  return [line(header), rule, ...rows.map(line)].join("\n")
}

const header = [
  "session",
  "tool calls",
  "compactions: OC / prune / plugin",
  "x better",
  "tokens x",
  "masked edits",
  "re-reads",
  "retained",
  "misses",
  "x paid"
]

/** A row of the table: one session, or several summed (`all`). */
const row = (name: string, sessions: ReadonlyArray<Analysed>): Array<string> => {
  const n = (x: number) => x.toLocaleString("en-US")
  const compactions = (["none", "prune", "plugin"] as const).map((run) => sumOf(sessions, (s) => s[run].compactions))
  const edits = editsOf(sessions)
  return [
    name,
    n(sumOf(sessions, (s) => s.toolCalls)),
    compactions.map(n).join(" / "),
    costRatioOf(sessions).toFixed(3),
    (sumOf(sessions, (s) => s.plugin.tokens) / sumOf(sessions, (s) => s.none.tokens)).toFixed(3),
    `${edits.masked}/${edits.made}`,
    n(sumOf(sessions, (s) => s.reReads)),
    `${percent(retentionOf(sessions))} of ${n(sumOf(sessions, (s) => s.plugin.fidelity.used))}`,
    n(sumOf(sessions, (s) => s.plugin.fidelity.misses.length)),
    paidRatioOf(sessions).toFixed(3)
  ]
}

/** Retention as a percentage, never rounded up to 100 while a line was missed. */
export const percent = (share: number): string =>
  share === 1 ? "100%" : `${(Math.floor(share * 1000) / 10).toFixed(1)}%`

/** The table of one set of sessions, with a heading naming its folder and, under it, the worst session. */
const report = (dir: string, sessions: ReadonlyArray<Analysed>): string => {
  const worst = worstOf(sessions)
  const rows = [
    ...sessions.map((s) => row(s.name, [s])),
    row(`all (${sessions.length})`, sessions),
    [
      "worst",
      "",
      "",
      costRatio(worst).toFixed(3),
      "",
      "",
      "",
      percent(retentionOf([leastRetainedOf(sessions)])),
      "",
      ""
    ]
  ]
  return [
    `### ${basename(dir)}: ${sessions.length} sessions`,
    "",
    table(header, rows),
    "",
    `Together ${costRatioOf(sessions).toFixed(3)}x of the better baseline; worst ${
      costRatio(worst).toFixed(3)
    }x (${worst.name}).`,
    fidelityLine(sessions)
  ].join("\n")
}

/** Retention, misses per 100 requests, sessions with a miss, the cost with misses paid. */
const fidelityLine = (sessions: ReadonlyArray<Analysed>): string => {
  const misses = sumOf(sessions, (s) => s.plugin.fidelity.misses.length)
  const requests = sumOf(sessions, (s) => s.plugin.fidelity.requests)
  const withMiss = sessions.filter((s) => s.plugin.fidelity.misses.length > 0).length
  const least = leastRetainedOf(sessions)
  return `Retained ${percent(retentionOf(sessions))} of ${
    sumOf(sessions, (s) => s.plugin.fidelity.used).toLocaleString("en-US")
  } used lines; ${
    (100 * misses / Math.max(1, requests)).toFixed(1)
  } misses per 100 requests; ${withMiss} of ${sessions.length} sessions with a miss (least ${
    percent(retentionOf([least]))
  }, ${least.name}); with misses paid ${paidRatioOf(sessions).toFixed(3)}x.`
}

const legend = (config: string | undefined) =>
  [
    `Recorded sessions through the analyser, ${
      config === undefined
        ? "built-in defaults (compaction between turns off)"
        : `config ${config} (${readFileSync(config, "utf8").trim()})`
    }, Anthropic's prompt-cache rules (OpenCode's breakpoints), the model's re-reads priced.`,
    "compactions: summaries per run, OpenCode alone / with its compaction.prune / with the plugin.",
    "x better: the plugin's cost over the better of OpenCode alone and with compaction.prune (all: ratio of the sums).",
    "tokens x: the plugin's input tokens over OpenCode alone's.",
    "masked edits: with the plugin, the model's edits of a file it had seen made while every copy of its content was",
    "pruned, of all such edits. re-reads: requests the model spends reading such a file again before the edit.",
    "retained: of the lines the model's replies used whose only earlier source was a tool output, the share still in",
    "what the plugin sent for that request (SPEC 9.12). misses: used lines not retained. x paid: x better with each",
    "request with misses charged the recall it would take (one more request at its context, the outputs recalled)."
  ].join("\n")

/**
 * Without `--config` the analyser would read the user's config files; the benchmark measures the built-in defaults,
 * so it gives the analyser an empty one.
 */
const withDefaults = async <A>(task: (configFile: string) => Promise<A>): Promise<A> => {
  mkdirSync(work, { recursive: true })
  const dir = mkdtempSync(join(work, "corpus-"))
  const file = join(dir, "dcp.json")
  writeFileSync(file, "{}")
  try {
    return await task(file)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const measure = async (dirs: ReadonlyArray<string>, configFile: string): Promise<Array<string>> => {
  const reports: Array<string> = []
  for (const dir of dirs) {
    const sessions = await pairwise(sessionsIn(dir), async (file) => {
      const session = await analysed(file, configFile)
      process.stderr.write(`${session.name}: ${costRatio(session).toFixed(3)}x\n`)
      return session
    })
    reports.push(report(dir, sessions))
  }
  return reports
}

const main = async () => {
  const { values } = parseArgs({
    options: {
      dir: { type: "string", multiple: true, default: [defaultCorpus, longCorpus] },
      config: { type: "string" }
    }
  })
  const empty = values.dir.filter((dir) => sessionsIn(dir).length === 0)
  if (empty.length > 0) {
    console.error(`no session exports (*.json) in ${empty.join(", ")}`)
    process.exit(2)
  }
  const reports = values.config === undefined
    ? await withDefaults((file) => measure(values.dir, file))
    : await measure(values.dir, values.config)
  console.log([legend(values.config), ...reports].join("\n\n"))
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main()
