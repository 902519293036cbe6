/**
 * `npm run bench:corpus`: the plugin on recorded sessions (by default the 22 of `../shared/corpus`), through the
 * offline analyser: per session, the cost under Anthropic's prompt-cache rules (OpenCode's breakpoints) of OpenCode
 * alone, OpenCode with its own `compaction.prune`, and with the plugin, and the tokens sent.
 *
 *   npm run bench:corpus
 *   npm run bench:corpus -- --dir path/to/exports --config my.jsonc
 */
import { existsSync, readdirSync } from "node:fs"
import { basename, join } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import type { Priced } from "../src/simulator/cost.ts"
import type { Edits } from "../src/simulator/edits.ts"
import { root, run } from "./process.ts"

export const defaultCorpus = join(root, "..", "shared", "corpus", "openhands-sonnet35-swebv")

export interface Analysed {
  readonly name: string
  readonly requests: number
  /** Anthropic-priced cost of OpenCode alone, with its compaction.prune, and with the plugin. */
  readonly none: number
  readonly prune: number
  readonly plugin: number
  readonly tokensNone: number
  readonly tokensPlugin: number
  readonly pruned: number
  /** With the plugin: the model's edits of files it had seen, and those made with the file's content masked. */
  readonly edits: Edits
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
  const json = JSON.parse(stdout) as {
    session: { requests: number }
    prunedTotal: { calls: number }
    sent: Record<"withoutPlugin" | "withOpenCodePrune" | "withPlugin", { priced: { anthropic: Priced }; edits: Edits }>
  }
  const anthropic = (name: "withoutPlugin" | "withOpenCodePrune" | "withPlugin") => json.sent[name].priced.anthropic
  return {
    name: basename(file, ".json"),
    requests: json.session.requests,
    none: anthropic("withoutPlugin").cost,
    prune: anthropic("withOpenCodePrune").cost,
    plugin: anthropic("withPlugin").cost,
    tokensNone: anthropic("withoutPlugin").tokens,
    tokensPlugin: anthropic("withPlugin").tokens,
    pruned: json.prunedTotal.calls,
    edits: json.sent.withPlugin.edits
  }
}

/** The masked edits of several sessions together. */
export const editsOf = (sessions: ReadonlyArray<Analysed>): Edits => ({
  made: sessions.reduce((sum, s) => sum + s.edits.made, 0),
  masked: sessions.reduce((sum, s) => sum + s.edits.masked, 0)
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

const main = async () => {
  const { values } = parseArgs({
    options: { dir: { type: "string", default: defaultCorpus }, config: { type: "string" } }
  })
  const files = sessionsIn(values.dir)
  if (files.length === 0) {
    console.error(`no session exports (*.json) in ${values.dir}`)
    process.exit(2)
  }
  const rows = await pairwise(files, (file) => analysed(file, values.config))
  const n = (x: number) => Math.round(x).toLocaleString("en-US")
  const header = [
    "session",
    "requests",
    "OpenCode",
    "OC prune",
    "plugin",
    "x better",
    "tokens x",
    "pruned",
    "masked edits"
  ]
  const lines = rows.map((
    r
  ) => [
    r.name,
    String(r.requests),
    n(r.none),
    n(r.prune),
    n(r.plugin),
    (r.plugin / Math.min(r.none, r.prune)).toFixed(3),
    (r.tokensPlugin / r.tokensNone).toFixed(3),
    String(r.pruned),
    `${r.edits.masked}/${r.edits.made}`
  ])
  const sum = (pick: (r: Analysed) => number) => rows.reduce((total, r) => total + pick(r), 0)
  const all = editsOf(rows)
  lines.push([
    "all",
    String(sum((r) => r.requests)),
    n(sum((r) => r.none)),
    n(sum((r) => r.prune)),
    n(sum((r) => r.plugin)),
    (sum((r) => r.plugin) / sum((r) => Math.min(r.none, r.prune))).toFixed(3),
    (sum((r) => r.tokensPlugin) / sum((r) => r.tokensNone)).toFixed(3),
    String(sum((r) => r.pruned)),
    `${all.masked}/${all.made}`
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((row) => row[i]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`
  console.log(
    "Anthropic-priced cost (uncached-input-token units) of each recorded session; x better: the plugin's cost over the better of OpenCode alone and with compaction.prune; masked edits: the model's edits of a file it had seen, made while the plugin had every copy of its content pruned, of all such edits"
  )
  console.log(
    [
      line(header),
      `|${widths.map((w, i) => `${"-".repeat(w + 1)}${i === 0 ? "-" : ":"}`).join("|")}|`,
      ...lines.map(line)
    ].join("\n")
  )
  console.log(`worst session: ${Math.max(...rows.map((r) => r.plugin / Math.min(r.none, r.prune))).toFixed(3)}x`)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main()
