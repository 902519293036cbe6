/**
 * The analysis as text for a terminal (at most 80 columns, numbers with thousands separators, estimates said so), and
 * as JSON with the cost model's pricing profiles.
 */
import { bar } from "../commands/format.ts"
import { type PricingName, profiles } from "../pricing/profiles.ts"
import type { Analysis, Composition } from "./analysis.ts"

const width = 80
const n = (value: number): string => Math.round(value).toLocaleString("en-US")
const percent = (value: number): string => `${(value * 100).toFixed(1)}%`
const change = (before: number, after: number): string => {
  if (before === 0) return after === 0 ? "0.0%" : "n/a"
  const delta = (after - before) / before
  return `${delta > 0 ? "+" : delta < 0 ? "-" : ""}${(Math.abs(delta) * 100).toFixed(1)}%`
}
const plural = (count: number, one: string, many = `${one}s`) => `${n(count)} ${count === 1 ? one : many}`
const share = (part: number, whole: number) => (whole === 0 ? 0 : part / whole)
const ratio = (value: number, of: number) => (of === 0 ? "n/a" : `${(value / of).toFixed(2)}x`)

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
    [
      `Tools (${n(composition.toolCalls)}${
        composition.foldedCalls === 0 ? "" : ` + ${n(composition.foldedCalls)} folded`
      })`,
      composition.tools
    ],
    ...(composition.plugin > 0 ? [["Plugin", composition.plugin] as [string, number]] : [])
  ]
  const label = Math.max(...rows.map(([name]) => name.length), "Total".length)
  const tokens = Math.max(...rows.map(([, value]) => n(value).length), n(composition.total).length)
  const lines = rows.map(([name, value]) => {
    const share = composition.total === 0 ? 0 : value / composition.total
    return `  ${name.padEnd(label)}  ${bar(share)} ${`${Math.round(share * 100)}%`.padStart(4)}  ${
      n(value).padStart(tokens)
    }`
  })
  lines.push(`  ${"Total".padEnd(label)}  ${" ".repeat(24)} ${" ".repeat(4)}  ${n(composition.total).padStart(tokens)}`)
  return lines
}

const profileLabel: Readonly<Record<PricingName, string>> = {
  anthropic: "Anthropic cache",
  "anthropic-1h": "Anthropic cache, 1 h",
  openai: "OpenAI cache",
  "per-request": "per request",
  none: "no cache"
}

export interface ReportOptions {
  /** The context window was given (`--context-window`), not assumed. */
  readonly contextWindowGiven?: boolean
  /** List every line the model used that its request did not show (`--misses`). */
  readonly misses?: boolean
  /** A closing line: what the reader can do next. */
  readonly nextStep?: string
}

export const formatReport = (a: Analysis, options: ReportOptions = {}): string => {
  const out = [
    ...sessionLines(a),
    ...configLines(a, options),
    "",
    ...finalRequestLines(a),
    "",
    ...prunedLines(a),
    "",
    ...costLines(a),
    "",
    ...fidelityLines(a),
    ...(options.misses === true ? ["", ...missLines(a)] : []),
    "",
    ...methodLines(a),
    ...recordedLines(a)
  ]
  if (options.nextStep !== undefined) out.push("", ...wrap(options.nextStep))
  return `${out.join("\n")}\n`
}

/** Which session, what it holds, over how long. */
const sessionLines = (a: Analysis): Array<string> => {
  const s = a.session
  const out = [clip(`Context pruning, replayed offline: session ${s.id}`)]
  const about = [
    s.title === undefined ? undefined : `"${s.title}"`,
    s.version === undefined ? undefined : `OpenCode ${s.version}`
  ].filter((part) => part !== undefined)
  if (about.length > 0) out.push(clip(about.join(" · ")))
  if (s.directory !== undefined) out.push(clip(s.directory))
  out.push(
    ...wrap(
      `${plural(s.userTurns, "user turn")}, ${plural(s.requests, "model request")}, ${
        plural(s.toolCalls, "tool call")
      } ` +
        `(${n(s.failedCalls)} failed) over ${duration(s.endedAt - s.startedAt)}; ` +
        `${plural(s.pausesOverTtl, "pause")} longer than the ${
          profiles.anthropic.ttlSeconds / 60
        }-min prompt-cache TTL.`
    )
  )
  return out
}

/** The config replayed, its problems, and what the replay could not use or the plugin would not do. */
const configLines = (a: Analysis, options: ReportOptions): Array<string> => {
  const s = a.session
  const out: Array<string> = []
  const model = s.model.modelID === undefined ? "" : `model ${s.model.providerID ?? "?"}/${s.model.modelID}, `
  const sources = a.config.files.length === 0 ? "built-in defaults" : `defaults + ${a.config.files.join(" + ")}`
  out.push(
    ...wrap(
      `Config: ${a.config.explicit ? "--config " : ""}${sources}; cache.mode ${a.config.cacheMode}; ${model}` +
        `context window ${n(a.config.contextWindow)} tokens ${
          options.contextWindowGiven === true
            ? "(--context-window)."
            : "(assumed: an export does not record it; --context-window sets it)."
        }`
    )
  )
  for (const problem of a.config.problems) {
    // One problem an entry: what a wrapped problem continues on is indented, so the next one stands apart.
    const [first = "", ...rest] = wrap(`Config problem: ${problem}`)
    out.push(first, ...wrap(rest.join(" "), "  "))
  }
  if (a.skippedParts.total > 0) {
    const types = Object.entries(a.skippedParts.byType).map(([type, count]) => `${type} ${n(count)}`).join(", ")
    out.push(...wrap(`Skipped ${plural(a.skippedParts.total, "part")} of unknown types (${types}).`))
  }
  if (!a.config.enabled) out.push("The config switches the plugin off (enabled: false): nothing is pruned.")
  if (s.subAgent) {
    out.push(...wrap("This is a sub-agent session: the plugin leaves those untouched, so nothing is pruned."))
  }
  return out
}

/**
 * The last request by kind of content, with the plugin, against its size without. When OpenCode compacted the two runs
 * a different number of times, their final requests hold different histories (a summary and the recent messages in
 * place of the turns it summarised): their sizes are given, and why they do not compare, rather than a change that
 * reads as the plugin's effect (the whole-session figures below compare the runs as they went).
 */
const finalRequestLines = (a: Analysis): Array<string> => {
  const final = a.finalRequest
  const without = final.withoutPlugin.total
  const compactions = { without: a.sent.withoutPlugin.compactions, with: a.sent.withPlugin.compactions }
  const pruned = `${plural(final.prunedCalls, "call")} pruned`
  const head = [`Final request (#${n(final.request)}) by kind of content, with the plugin:`, ...chart(final.withPlugin)]
  if (compactions.without !== compactions.with) {
    const times = (count: number) => (count === 0 ? "never" : count === 1 ? "once" : `${n(count)} times`)
    const summarised = compactions.without > compactions.with ? "the run without the plugin" : "the run with it"
    return [
      ...head,
      ...wrap(
        `Without the plugin: ${n(without)} tokens, not comparable: OpenCode compacted the run without the plugin ${
          times(compactions.without)
        } and the run with it ${times(compactions.with)}, so the final request of ${summarised} holds a summary ` +
          `and the recent messages in place of the turns the other keeps (${pruned}; the whole session below ` +
          `compares the runs as they went).`,
        "  "
      )
    ]
  }
  const delta = without === 0 ? 0 : (final.withPlugin.total - without) / without
  const effect = delta === 0
    ? "the same size with it"
    : `${(Math.abs(delta) * 100).toFixed(1)}% ${delta < 0 ? "smaller" : "larger"} with it`
  const both = compactions.without === 0
    ? ""
    : `, both runs compacted ${compactions.without === 1 ? "once" : `${n(compactions.without)} times`}`
  return [...head, ...wrap(`Without the plugin: ${n(without)} tokens (${effect}; ${pruned}${both}).`, "  ")]
}

/** Calls pruned by strategy, and the model's own discard/extract calls. */
const prunedLines = (a: Analysis): Array<string> => {
  const rows: Array<Array<string>> = [["Pruned over the session", "", "calls", "tokens per request"]]
  for (const row of a.pruned) {
    rows.push([`  ${row.reason}`, `(${row.name})`, row.enabled || row.calls > 0 ? n(row.calls) : "off", n(row.tokens)])
  }
  rows.push(["  Total", "", n(a.prunedTotal.calls), n(a.prunedTotal.tokens)])
  const out = table(rows, ["l", "l", "r", "r"])
  if (a.modelCalls.replayed > 0) {
    out.push(
      ...wrap(
        `The model's own discard/extract calls in the session: ${
          n(a.modelCalls.replayed)
        } replayed through the plugin's ` +
          `tools, ${n(a.modelCalls.accepted)} accepted, ${n(a.modelCalls.rejected)} rejected.`
      )
    )
  }
  return out
}

const runsOf = (a: Analysis) => [a.sent.withoutPlugin, a.sent.withOpenCodePrune, a.sent.withPlugin]

/** The whole session in the three runs: tokens, cost under each pricing, cache reads, compactions, masked edits. */
const costLines = (a: Analysis): Array<string> => {
  const sent = a.sent
  const w = sent.withoutPlugin.priced
  const o = sent.withOpenCodePrune.priced
  const p = sent.withPlugin.priced
  const first = sent.profiles[0]!
  const rows: Array<Array<string>> = [
    [`Whole session (${plural(sent.requests, "request")})`, "no plugin", "OC prune", "plugin", "change"],
    [
      "  Tokens sent",
      n(w[first]!.tokens),
      n(o[first]!.tokens),
      n(p[first]!.tokens),
      change(w[first]!.tokens, p[first]!.tokens)
    ]
  ]
  for (const name of sent.profiles) {
    const mark = name === sent.sessionProfile ? "*" : ""
    rows.push([
      `  Cost, ${profileLabel[name]}${mark}`,
      n(w[name]!.cost),
      n(o[name]!.cost),
      n(p[name]!.cost),
      change(w[name]!.cost, p[name]!.cost)
    ])
  }
  rows.push([
    "  Read from the cache (Anthropic)",
    percent(share(w[first]!.readTokens, w[first]!.tokens)),
    percent(share(o[first]!.readTokens, o[first]!.tokens)),
    percent(share(p[first]!.readTokens, p[first]!.tokens)),
    ""
  ])
  const runs = runsOf(a)
  if (runs.some((run) => run.compactions > 0))
    rows.push([
      "  Compactions",
      ...runs.map((run) => n(run.compactions)),
      ""
    ])
  if (runs.some((run) => run.edits.made > 0)) {
    rows.push([
      "  Edits with the file masked",
      ...runs.map(({ edits }) => `${n(edits.masked)} of ${n(edits.made)}`),
      ""
    ])
  }
  if (runs.some((run) => run.reReads > 0)) {
    rows.push(["  Requests reading them again", ...runs.map((run) => n(run.reReads)), ""])
  }
  const better = Math.min(w[first]!.cost, o[first]!.cost)
  return [
    ...table(rows, ["l", "r", "r", "r", "r"]),
    ...wrap(
      `With the plugin, under Anthropic's rules, the session costs ${
        ratio(p[first]!.cost, w[first]!.cost)
      } of what it ` +
        `costs without it and ${ratio(p[first]!.cost, better)} of the better of OpenCode's own options ` +
        `(${
          sent.withOpenCodePrune.openCodePruned === 0
            ? "its compaction.prune cleared nothing here"
            : `its compaction.prune cleared ${plural(sent.withOpenCodePrune.openCodePruned, "output")}`
        }). ` +
        `* the pricing this session's provider (${a.session.model.providerID ?? "unknown"}) bills by.`
    )
  ]
}

/** Retention as a percentage: never "100.0%" while a line was missed. */
const retained = (kept: number, used: number): string =>
  used === 0 || kept === used ? "100%" : `${(Math.floor((kept / used) * 1000) / 10).toFixed(1)}%`

/** What the model went on to use of earlier tool outputs, and what the plugin's requests still showed of it. */
const fidelityLines = (a: Analysis): Array<string> => {
  const sent = a.sent
  const first = sent.profiles[0]!
  const runs = runsOf(a)
  const f = sent.withPlugin.fidelity
  const rows: Array<Array<string>> = [
    ["What the model used", "no plugin", "OC prune", "plugin"],
    ["  Used lines still sent", ...runs.map((run) => retained(run.fidelity.retained, run.fidelity.used))],
    ["  Lines missed", ...runs.map((run) => n(run.fidelity.misses.length))],
    [
      `  Cost with misses paid, ${profileLabel[first]}`,
      ...runs.map((run) => n(run.priced[first]!.cost + (run.fidelity.recallCost[first] ?? 0)))
    ]
  ]
  const requests = plural(f.requestsWithMisses, "request")
  return [
    ...table(rows, ["l", "r", "r", "r"]),
    ...wrap(
      `Of the ${plural(f.used, "line")} the model's replies used that only an earlier tool output had shown (in ` +
        `what OpenCode sends), the plugin's requests still showed ${retained(f.retained, f.used)}` +
        (f.misses.length === 0
          ? "."
          : `; the ${plural(f.misses.length, "line")} missed ${
            f.misses.length === 1 ? "is" : "are"
          } in ${requests}, each request priced as the recall it would take (one more request, the outputs recalled: ` +
            `${n(f.recalledTokens)} tokens). --misses lists them.`)
    )
  ]
}

/** Every miss: the request, the reply's field that used the line, and what the request showed of each source. */
const missLines = (a: Analysis): Array<string> => {
  const misses = a.sent.withPlugin.fidelity.misses
  if (misses.length === 0) return ["No line the model used was missing from what the plugin sent."]
  const out = ["Lines the model used that the plugin's request did not show:"]
  for (const miss of misses) {
    out.push(clip(`  #${n(miss.request)} ${miss.field}: ${miss.line}`))
    for (const source of miss.sources) out.push(clip(`      ${source.tool}: ${source.shown}`))
  }
  return out
}

/** How the figures were made: what is counted, the cache rules, what is simulated. */
const methodLines = (a: Analysis): Array<string> => {
  const sent = a.sent
  const edits = runsOf(a).some((run) => run.edits.made > 0)
    ? ` "Edits with the file masked": the model's edits of a file it had read or written, made while no ` +
      `copy of that content was in what its request sent (pruned, cleared, or summarised away by a ` +
      `compaction). ` +
      (sent.reReadMasked
        ? `The model is taken to read each such file again before editing it, and the cost figures include ` +
          `that: one more request, and the file's content sent from then on.`
        : `Replayed as recorded (--blind-edits): no cost figure includes a re-read.`)
    : ""
  return wrap(
    `All token figures are estimates (o200k tokenizer) of what each request sends, converted to what OpenCode 1.18 ` +
      `puts on the wire: the exported messages, stand-ins for OpenCode's system prompt ` +
      `(${n(sent.systemPromptTokens)} tokens) and built-in tool definitions (${n(sent.hostToolTokens)} tokens), the ` +
      `same in every run, and, with the plugin, what it adds (${n(sent.addedTokens)} tokens over the session: tool ` +
      `definitions, system section, notes to the model). Cost is in units of one uncached input token. ` +
      `Anthropic: cache breakpoints where OpenCode places them (its first 2 system messages and last 2 other ` +
      `messages); an entry is written only at a breakpoint (at ${profiles.anthropic.write}), found by a later ` +
      `request up to ${profiles.anthropic.lookbackBlocks} blocks before one of its breakpoints (read at ` +
      `${profiles.anthropic.read}), from ${n(profiles.anthropic.minTokens)} tokens, for ${
        profiles.anthropic.ttlSeconds / 60
      } ` +
      `minutes after its last use. OpenAI: a request reads its common prefix with the previous one, sent within ` +
      `${profiles.openai.ttlSeconds / 60} minutes, at ${profiles.openai.read}, from ${n(profiles.openai.minTokens)} ` +
      `tokens in 128-token steps. Times are the messages' timestamps. "OC prune": OpenCode's own ` +
      `compaction.prune. Compaction at overflow (a summary request, then the summary and recent messages) is ` +
      `simulated in every run when a request reaches the window less OpenCode's output reserve, and with the ` +
      `plugin the compaction it asks for at the end of a turn that reached compaction.atTokens; a summary is ` +
      `priced as output (${profiles.anthropic.output}x an input token for Anthropic, ${profiles.openai.output}x for ` +
      `OpenAI), the one output that differs between runs.` +
      edits +
      ` "Used lines": the lines (trimmed, at least 24 characters) of the model's text and tool inputs in a reply ` +
      `that occur in an earlier tool output and nowhere else earlier (user or model text, tool inputs, the system ` +
      `prompt), within what OpenCode itself sends; "still sent": present in what the request sent.`
  )
}

/** What the provider reported for the recorded session, and what the plugin would have shown and logged. */
const recordedLines = (a: Analysis): Array<string> => {
  const out: Array<string> = []
  const r = a.reported
  if (r.requests > 0 && r.input + r.cacheRead + r.cacheWrite > 0) {
    out.push(
      ...wrap(
        `As recorded, the provider reported ${n(r.input + r.cacheRead + r.cacheWrite)} input tokens over ` +
          `${plural(r.requests, "request")} (${n(r.cacheRead)} read from its cache, ${
            n(r.cacheWrite)
          } written to it), ` +
          `its own tool definitions and system prompt included.`
      )
    )
  }
  out.push(...wrap(`The plugin would have shown the user ${plural(a.notes, "note")} about what it pruned.`))
  if (a.pluginLog.length > 0) {
    out.push(
      ...wrap(
        `The plugin logged ${
          plural(a.pluginLog.length, "warning or error", "warnings or errors")
        } (a failed request goes out unmodified):`
      )
    )
    for (const line of a.pluginLog.slice(0, 3)) out.push(clip(`  ${line.split("\n")[0]}`))
  }
  return out
}

/** The same analysis as JSON, with the cost model's pricing profiles. */
export const formatJson = (a: Analysis): string =>
  `${
    JSON.stringify(
      {
        ...a,
        costModel: {
          tokenizer: "o200k",
          estimated: true,
          profiles: Object.fromEntries(a.sent.profiles.map((name) => [name, profiles[name]]))
        }
      },
      null,
      2
    )
  }\n`
