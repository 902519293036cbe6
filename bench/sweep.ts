/**
 * `npm run bench:sweep`: how the defaults of stale-output masking and cache scheduling were chosen. Replays the
 * generated sessions (100, 300 and 1,000 tool calls by default) and the recorded example session (examples/) once
 * per setting, each setting one change from the defaults, and prints tokens sent and cache-priced cost against no
 * plugin. Only token and cost figures are compared (they are deterministic), so it runs the plugin from source.
 *
 *   npm run bench:sweep
 *   npm run bench:sweep -- --sizes 100,300 --seed 3
 *   npm run bench:sweep -- --settings '[["mine", {"cache": {"minPruneTokens": 12000}}]]'   other settings
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { parseArgs } from "node:util"
import type { Priced } from "../src/analysis/cost.ts"
import { root, run, work } from "./process.ts"
import type { ReplayResult } from "./replay.ts"


const { values: args } = parseArgs({
  options: {
    sizes: { type: "string", default: "100,300,1000" },
    seed: { type: "string", default: "1" },
    settings: { type: "string" }
  }
})
const sizes = args.sizes.split(",").map(Number)
const seed = Number(args.seed)

/** One change from the defaults each; `defaults` first. */
const oneChange: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ["defaults", {}],
  ["cache.mode immediate", { cache: { mode: "immediate" } }],
  ["cache.minPruneTokens 4000", { cache: { minPruneTokens: 4000 } }],
  ["cache.minPruneTokens 8000", { cache: { minPruneTokens: 8000 } }],
  ["cache.minPruneTokens 24000", { cache: { minPruneTokens: 24000 } }],
  ["staleOutputs off", { strategies: { staleOutputs: { enabled: false } } }],
  ["staleOutputs.trigger 10000", { strategies: { staleOutputs: { trigger: 10000 } } }],
  ["staleOutputs.trigger 40000", { strategies: { staleOutputs: { trigger: 40000 } } }],
  ["staleOutputs.keepRecent 5", { strategies: { staleOutputs: { keepRecent: 5 } } }],
  ["staleOutputs.keepRecent 20", { strategies: { staleOutputs: { keepRecent: 20 } } }],
  ["staleOutputs.clearAtLeast 2500", { strategies: { staleOutputs: { clearAtLeast: 2500 } } }],
  ["staleOutputs.clearAtLeast 10000", { strategies: { staleOutputs: { clearAtLeast: 10000 } } }],
  ["the earlier defaults (40000, 20, 10000, 8000)", {
    strategies: { staleOutputs: { trigger: 40000, keepRecent: 20, clearAtLeast: 10000 } },
    cache: { minPruneTokens: 8000 }
  }]
]
const settings: ReadonlyArray<readonly [string, Record<string, unknown>]> = args.settings === undefined
  ? oneChange
  : JSON.parse(args.settings)

/** Runs a script under this Node; its standard output, or an error with its standard error. */
const node = async (argv: ReadonlyArray<string>): Promise<string> => {
  const { code, stderr, stdout } = await run(process.execPath, argv)
  if (code !== 0) throw new Error(`${argv.join(" ")}: exit ${code}\n${stderr}`)
  return stdout
}

const replayed = async (size: number, plugin: "none" | "real", config: Record<string, unknown>): Promise<Priced> => {
  const out = join(work, `sweep-${process.pid}.json`)
  const options = { size, seed, plugin, harness: join(root, "bench", "harness.ts"), config, accounting: true, out }
  await node([join(root, "bench", "replay.ts"), JSON.stringify(options)])
  const result = JSON.parse(readFileSync(out, "utf8")) as ReplayResult
  rmSync(out)
  return result.accounting.priced.anthropic!
}

/** The recorded example through the offline analyser: [without plugin, with plugin]. */
const example = async (config: Record<string, unknown>, dir: string): Promise<readonly [Priced, Priced]> => {
  const file = join(dir, "dcp.json")
  writeFileSync(file, JSON.stringify(config))
  const json = JSON.parse(await node([join(root, "src", "analyse.ts"), "--example", "--config", file, "--json"])) as {
    sent: { withoutPlugin: { priced: { anthropic: Priced } }; withPlugin: { priced: { anthropic: Priced } } }
  }
  return [json.sent.withoutPlugin.priced.anthropic, json.sent.withPlugin.priced.anthropic]
}

const ratio = (a: number, b: number) => (a / b).toFixed(3)

const main = async () => {
  mkdirSync(work, { recursive: true })
  const dir = mkdtempSync(join(work, "sweep-"))
  const columns = [...sizes.map((n) => `${n.toLocaleString("en-US")} calls`), "example (72 calls)"]
  const baselines = await Promise.all(sizes.map((size) => replayed(size, "none", {})))
  const rows: Array<Array<string>> = []
  for (const [name, config] of settings) {
    process.stderr.write(`${name} ...\n`)
    const cells = [name]
    for (const [i, size] of sizes.entries()) {
      const priced = await replayed(size, "real", config)
      cells.push(`${ratio(priced.cost, baselines[i]!.cost)} / ${ratio(priced.tokens, baselines[i]!.tokens)}`)
    }
    const [without, withPlugin] = await example(config, dir)
    cells.push(`${ratio(withPlugin.cost, without.cost)} / ${ratio(withPlugin.tokens, without.tokens)}`)
    rows.push(cells)
  }
  rmSync(dir, { recursive: true, force: true })
  const header = [args.settings === undefined ? "setting (one change from the defaults)" : "setting", ...columns]
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)))
  const line = (cells: ReadonlyArray<string>) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`
  console.log(`Cache-priced cost / tokens sent, x no plugin (seed ${seed}; lower is better)`)
  console.log([line(header), `|${widths.map((w, i) => `${"-".repeat(w + 1)}${i === 0 ? "-" : ":"}`).join("|")}|`, ...rows.map(line)].join("\n"))
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error)
  process.exit(1)
})
