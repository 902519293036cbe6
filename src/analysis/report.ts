import { bar } from "../commands/format.ts"
import { readPrice, ttlMs, writePrice } from "./cost.ts"
import type { Analysis, Composition } from "./replay.ts"

/** The analysis as text for a terminal: at most 80 columns, numbers with thousands separators, estimates said so. */

const width = 80
const n = (value: number): string => Math.round(value).toLocaleString("en-US")
const percent = (value: number): string => `${(value * 100).toFixed(1)}%`
const change = (before: number, after: number): string => {
  if (before === 0) return after === 0 ? "0.0%" : "n/a"
  const delta = (after - before) / before
  return `${delta > 0 ? "+" : delta < 0 ? "-" : ""}${(Math.abs(delta) * 100).toFixed(1)}%`
}
const plural = (count: number, one: string, many = `${one}s`) => `${n(count)} ${count === 1 ? one : many}`

const duration = (ms: number): string => {
  const seconds = Math.round(ms / 1000)
  if (seconds < 60) return `${seconds} s`
  const minutes = Math.round(seconds / 60)
  if (minutes < 60) return `${minutes} min`
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`
}

/** Word-wraps a paragraph to the report's width. */
const wrap = (text: string, indent = ""): Array<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line !== "" && line.length + 1 + word.length > width - indent.length) {
      lines.push(indent + line)
      line = word
    } else {
      line = line === "" ? word : `${line} ${word}`
    }
  }
  if (line !== "") lines.push(indent + line)
  return lines
}

const clip = (text: string, max = width): string => (text.length <= max ? text : `${text.slice(0, max - 3)}...`)

const table = (rows: ReadonlyArray<ReadonlyArray<string>>, align: ReadonlyArray<"l" | "r">): Array<string> => {
  const widths = align.map((_, c) => Math.max(...rows.map((row) => (row[c] ?? "").length)))
  return rows.map((row) =>
    row.map((cell, c) => (align[c] === "l" ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join("  ").trimEnd()
  )
}

const chart = (composition: Composition): Array<string> => {
  const rows: Array<[string, number]> = [
    ["System", composition.system],
    ["User", composition.user],
    ["Assistant", composition.assistant],
    [`Tools (${n(composition.toolCalls)})`, composition.tools],
    ...(composition.plugin > 0 ? [["Plugin", composition.plugin] as [string, number]] : [])
  ]
  const label = Math.max(...rows.map(([name]) => name.length), "Total".length)
  const tokens = Math.max(...rows.map(([, value]) => n(value).length), n(composition.total).length)
  const lines = rows.map(([name, value]) => {
    const share = composition.total === 0 ? 0 : value / composition.total
    return `  ${name.padEnd(label)}  ${bar(share)} ${`${Math.round(share * 100)}%`.padStart(4)}  ${n(value).padStart(tokens)}`
  })
  lines.push(`  ${"Total".padEnd(label)}  ${" ".repeat(24)} ${" ".repeat(4)}  ${n(composition.total).padStart(tokens)}`)
  return lines
}

export const formatReport = (a: Analysis): string => {
  const s = a.session
  const out: Array<string> = []
  out.push(clip(`Context pruning, replayed offline: session ${s.id}`))
  const about = [s.title === undefined ? undefined : `"${s.title}"`, s.version === undefined ? undefined : `OpenCode ${s.version}`]
    .filter((part) => part !== undefined)
  if (about.length > 0) out.push(clip(about.join(" · ")))
  if (s.directory !== undefined) out.push(clip(s.directory))
  out.push(
    ...wrap(
      `${plural(s.userTurns, "user turn")}, ${plural(s.requests, "model request")}, ${plural(s.toolCalls, "tool call")} ` +
        `(${n(s.failedCalls)} failed) over ${duration(s.endedAt - s.startedAt)}; ` +
        `${plural(s.pausesOverTtl, "pause")} longer than the ${ttlMs / 60_000}-min prompt-cache TTL.`
    )
  )
  const model = s.model.modelID === undefined ? "" : `model ${s.model.providerID ?? "?"}/${s.model.modelID}, `
  const sources = a.config.files.length === 0 ? "built-in defaults" : `defaults + ${a.config.files.join(" + ")}`
  out.push(
    ...wrap(
      `Config: ${a.config.explicit ? "--config " : ""}${sources}; cache.mode ${a.config.cacheMode}; ${model}` +
        `context window ${n(a.config.contextWindow)} tokens (assumed: an export does not record it).`
    )
  )
  for (const problem of a.config.problems) out.push(...wrap(`Config problem: ${problem}`))
  if (a.skippedParts.total > 0) {
    const types = Object.entries(a.skippedParts.byType).map(([type, count]) => `${type} ${n(count)}`).join(", ")
    out.push(...wrap(`Skipped ${plural(a.skippedParts.total, "part")} of unknown types (${types}).`))
  }
  if (!a.config.enabled) out.push("The config switches the plugin off (enabled: false): nothing is pruned.")
  if (s.subAgent) out.push(...wrap("This is a sub-agent session: the plugin leaves those untouched, so nothing is pruned."))

  const final = a.finalRequest
  out.push("", `Final request (#${n(final.request)}) by kind of content, with the plugin:`)
  out.push(...chart(final.withPlugin))
  const without = final.withoutPlugin.total
  const delta = without === 0 ? 0 : (final.withPlugin.total - without) / without
  const effect = delta === 0
    ? "the same size with it"
    : `${(Math.abs(delta) * 100).toFixed(1)}% ${delta < 0 ? "smaller" : "larger"} with it`
  out.push(
    ...wrap(
      `Without the plugin: ${n(without)} tokens (${effect}; ${plural(final.prunedCalls, "call")} pruned).`,
      "  "
    )
  )

  out.push("")
  const rows: Array<Array<string>> = [["Pruned over the session", "", "calls", "tokens per request"]]
  for (const row of a.pruned) {
    rows.push([`  ${row.reason}`, `(${row.name})`, row.enabled || row.calls > 0 ? n(row.calls) : "off", n(row.tokens)])
  }
  rows.push(["  Total", "", n(a.prunedTotal.calls), n(a.prunedTotal.tokens)])
  out.push(...table(rows, ["l", "l", "r", "r"]))
  if (a.modelCalls.replayed > 0) {
    out.push(
      ...wrap(
        `The model's own discard/extract calls in the session: ${n(a.modelCalls.replayed)} replayed through the plugin's ` +
          `tools, ${n(a.modelCalls.accepted)} accepted, ${n(a.modelCalls.rejected)} rejected.`
      )
    )
  }

  out.push("")
  const w = a.sent.withoutPlugin
  const p = a.sent.withPlugin
  out.push(
    ...table([
      [`Whole session (${plural(a.sent.requests, "request")})`, "without plugin", "with plugin", "change"],
      ["  Tokens sent", n(w.tokens), n(p.tokens), change(w.tokens, p.tokens)],
      ["  Read from the prompt cache", percent(w.tokens === 0 ? 0 : w.cachedTokens / w.tokens), percent(p.tokens === 0 ? 0 : p.cachedTokens / p.tokens), ""],
      ["  Cache-priced cost", n(w.cost), n(p.cost), change(w.cost, p.cost)]
    ], ["l", "r", "r", "r"])
  )

  out.push("")
  out.push(
    ...wrap(
      `All token figures are estimates (o200k tokenizer) of what each request sends: the exported messages, a ` +
        `stand-in for OpenCode's system prompt (${n(a.sent.systemPromptTokens)} tokens, the same both ways) and, with ` +
        `the plugin, what it adds (${n(a.sent.addedTokens)} tokens over the session: tool definitions, system section, ` +
        `lists). OpenCode's own tool definitions are not in an export and are left out. Cost is in token units: ` +
        `${readPrice} per token read from the prompt cache, ${writePrice} per other token; a request reads from the ` +
        `cache its longest common prefix with the previous request, if sent within ${ttlMs / 1000} s of it (by the ` +
        `messages' timestamps).`
    )
  )
  const r = a.reported
  if (r.requests > 0 && r.input + r.cacheRead + r.cacheWrite > 0) {
    out.push(
      ...wrap(
        `As recorded, the provider reported ${n(r.input + r.cacheRead + r.cacheWrite)} input tokens over ` +
          `${plural(r.requests, "request")} (${n(r.cacheRead)} read from its cache, ${n(r.cacheWrite)} written to it), ` +
          `its own tool definitions and system prompt included.`
      )
    )
  }
  out.push(...wrap(`The plugin would have shown the user ${plural(a.notes, "note")} about what it pruned.`))
  if (a.pluginLog.length > 0) {
    out.push(...wrap(`The plugin logged ${plural(a.pluginLog.length, "warning or error", "warnings or errors")} (a failed request goes out unmodified):`))
    for (const line of a.pluginLog.slice(0, 3)) out.push(clip(`  ${line.split("\n")[0]}`))
  }
  return `${out.join("\n")}\n`
}

/** The same analysis as JSON, with the cost model's constants. */
export const formatJson = (a: Analysis): string =>
  `${
    JSON.stringify(
      {
        ...a,
        costModel: { tokenizer: "o200k", readPrice, writePrice, ttlSeconds: ttlMs / 1000, estimated: true }
      },
      null,
      2
    )
  }\n`
