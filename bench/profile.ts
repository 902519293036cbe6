/**
 * Reads a V8 `.cpuprofile` of a replay (plugin imported from source) and says where the plugin's time goes. A
 * sample is the plugin's when its stack holds a frame of src/ or of Effect (the runtime the hooks run on); the
 * replay's own work (copying histories, counting what was sent: src/simulator/, which the analyser shares) has
 * neither. Self time is per function; inclusive time per src/ function
 * shows the pipeline's sections (index sync, strategies, ledger, listing, applying).
 */
import { readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"

interface Node {
  readonly id: number
  readonly callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number }
  readonly children?: ReadonlyArray<number>
}

interface Profile {
  readonly nodes: ReadonlyArray<Node>
  readonly startTime: number
  readonly endTime: number
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

export interface Row {
  readonly name: string
  readonly ms: number
}

export interface ProfileSummary {
  readonly totalMs: number
  readonly pluginMs: number
  readonly gcMs: number
  readonly selfTop: ReadonlyArray<Row>
  readonly byArea: ReadonlyArray<Row>
  readonly sections: ReadonlyArray<Row>
}

const short = (url: string): string => {
  const src = url.indexOf("/src/")
  if (src >= 0) return url.slice(src + 1)
  const modules = url.lastIndexOf("/node_modules/")
  if (modules >= 0) return url.slice(modules + "/node_modules/".length).replace(/\/dist\/esm\//, "/")
  return url.replace(/^file:\/\//, "").replace(/^node:/, "")
}

const label = (node: Node): string => {
  const { columnNumber, functionName, lineNumber, url } = node.callFrame
  if (url === "") return functionName || "(anonymous)"
  return `${functionName || "(anonymous)"} ${short(url)}:${lineNumber + 1}:${columnNumber + 1}`
}

/** The plugin's own source: src/, less src/simulator/ (the replay's copies and accounting). */
const isSource = (url: string) => url.includes("/src/") && !url.includes("/src/simulator/")

const isPluginFrame = (url: string) =>
  isSource(url) || url.includes("/node_modules/effect/") || url.includes("/@effect/")

const area = (url: string): string => {
  if (url.includes("/src/simulator/")) return "replay harness (src/simulator/)"
  if (url.includes("/src/")) return short(url)
  if (url.includes("/node_modules/effect/")) return "effect (runtime, Schema, data types)"
  if (url.includes("gpt-tokenizer")) return "gpt-tokenizer"
  if (url === "") return "(native / builtins)"
  return short(url).split("/")[0] ?? url
}

export const summarize = (file: string, top = 25): ProfileSummary => {
  const profile = JSON.parse(readFileSync(file, "utf8")) as Profile
  const byId = new Map<number, Node>()
  const parent = new Map<number, number>()
  for (const node of profile.nodes) {
    byId.set(node.id, node)
    for (const child of node.children ?? []) parent.set(child, node.id)
  }
  const pluginStack = new Map<number, boolean>()
  const inPlugin = (id: number): boolean => {
    const known = pluginStack.get(id)
    if (known !== undefined) return known
    const node = byId.get(id)!
    const up = parent.get(id)
    const value = isPluginFrame(node.callFrame.url) || (up !== undefined && inPlugin(up))
    pluginStack.set(id, value)
    return value
  }

  const self = new Map<string, number>()
  const areas = new Map<string, number>()
  const inclusive = new Map<string, number>()
  let pluginUs = 0
  let gcUs = 0
  let totalUs = 0
  const { samples, timeDeltas } = profile
  for (let i = 0; i < samples.length; i++) {
    const us = i + 1 < timeDeltas.length ? timeDeltas[i + 1]! : 0
    totalUs += us
    const node = byId.get(samples[i]!)!
    if (node.callFrame.functionName === "(garbage collector)") gcUs += us
    if (!inPlugin(node.id)) continue
    pluginUs += us
    const name = label(node)
    self.set(name, (self.get(name) ?? 0) + us)
    const where = area(node.callFrame.url)
    areas.set(where, (areas.get(where) ?? 0) + us)
    const seen = new Set<string>()
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const frame = byId.get(id)!
      if (!isSource(frame.callFrame.url)) continue
      const key = label(frame)
      if (seen.has(key)) continue
      seen.add(key)
      inclusive.set(key, (inclusive.get(key) ?? 0) + us)
    }
  }
  const rows = (map: Map<string, number>, n: number): Array<Row> =>
    [...map].sort((a, b) => b[1] - a[1]).slice(0, n).map(([name, us]) => ({ name, ms: us / 1000 }))
  return {
    totalMs: totalUs / 1000,
    pluginMs: pluginUs / 1000,
    gcMs: gcUs / 1000,
    selfTop: rows(self, top),
    byArea: rows(areas, 15),
    sections: rows(inclusive, top)
  }
}

export const formatSummary = (summary: ProfileSummary): string => {
  const pct = (ms: number) => `${((ms / summary.pluginMs) * 100).toFixed(1).padStart(5)}%`
  const table = (rows: ReadonlyArray<Row>) =>
    rows.map((row) => `  ${row.ms.toFixed(0).padStart(7)} ms ${pct(row.ms)}  ${row.name}`).join("\n")
  return [
    `Sampled ${(summary.totalMs / 1000).toFixed(1)} s; in the plugin (stack holds src/ or Effect frames): ${
      (summary.pluginMs / 1000).toFixed(2)
    } s; garbage collector (whole process): ${(summary.gcMs / 1000).toFixed(2)} s.`,
    "",
    "Plugin self time by file / package:",
    table(summary.byArea),
    "",
    "Top functions by self time (plugin samples):",
    table(summary.selfTop),
    "",
    "src/ functions by inclusive time (the pipeline's sections):",
    table(summary.sections)
  ].join("\n")
}

// Usage: node bench/profile.ts <file.cpuprofile>
if (process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] !== undefined) {
  console.log(formatSummary(summarize(process.argv[2])))
}
