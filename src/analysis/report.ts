import type { PluginConfig } from "../config/schema.ts"
import { bar } from "../commands/format.ts"
import { reportedCacheUsage } from "../commands/breakdown.ts"
import { isReason, reasonEnabled, reasonName, reasons } from "../engine/reasons.ts"
import { type PricingName, type PricingProfile, profiles } from "../pricing/profiles.ts"
import type { Config } from "../services/Config.ts"
import type { Msg } from "../host/schema.ts"
import type { Priced } from "../simulator/cost.ts"
import { addedTokens, type Driven } from "../simulator/drive.ts"
import type { Edits } from "../simulator/edits.ts"
import { isPrompt } from "../simulator/opencode.ts"
import type { Recorded, SessionOutcome } from "../simulator/plugin.ts"
import { hostToolDefinitions } from "../simulator/prompt.ts"
import type { Session } from "./session.ts"
import { type Blocks, splitSystem } from "../simulator/wire.ts"

/**
 * The analyser's report: the figures of a replayed session (`Analysis`, printed by `--json`), made from what the
 * replay found (`Replayed`), and their text for a terminal.
 */

/** The three replays of a session: OpenCode alone, OpenCode with its own `compaction.prune`, and with the plugin. */
export type RunName = "withoutPlugin" | "withOpenCodePrune" | "withPlugin"

/** One replay of the session, priced. */
interface Run {
  /** By pricing profile name. */
  readonly priced: Readonly<Record<string, Priced>>
  /** Compactions OpenCode would have made when a request reached the window (each one a summary request). */
  readonly compactions: number
  /** Outputs OpenCode's own `compaction.prune` cleared. */
  readonly openCodePruned: number
  /** The model's edits of files it had seen, and those made with no copy of the file's content in what was sent. */
  readonly edits: Edits
  /** Requests the model spent reading masked files again before editing them, priced in `priced`. */
  readonly reReads: number
}

interface Tally {
  readonly calls: number
  readonly tokens: number
}

/** Tokens of one request by kind of content. */
interface Composition {
  /** OpenCode's system prompt and tool definitions (stand-ins). */
  readonly system: number
  readonly user: number
  readonly assistant: number
  /** The session's tool calls: inputs and outputs (or placeholders). */
  readonly tools: number
  readonly toolCalls: number
  /** What the plugin adds: its tool definitions, its system section, the messages it appends. */
  readonly plugin: number
  readonly total: number
}

export interface Analysis {
  readonly session: {
    readonly id: string
    readonly title: string | undefined
    readonly directory: string | undefined
    readonly version: string | undefined
    readonly subAgent: boolean
    readonly messages: number
    readonly userTurns: number
    readonly requests: number
    readonly toolCalls: number
    readonly failedCalls: number
    readonly startedAt: number
    readonly endedAt: number
    /** Requests sent more than the cache TTL after the previous one: the prompt cache had expired. */
    readonly pausesOverTtl: number
    readonly model: { readonly providerID: string | undefined; readonly modelID: string | undefined }
  }
  readonly skippedParts: { readonly total: number; readonly byType: Readonly<Record<string, number>> }
  readonly config: {
    /** The files the plugin read, in merge order; empty: built-in defaults only. */
    readonly files: ReadonlyArray<string>
    /** `--config` replaced the user's config files. */
    readonly explicit: boolean
    /** Problems the plugin found in them (it shows these as toasts), one line each: the file, the key, what is valid. */
    readonly problems: ReadonlyArray<string>
    readonly enabled: boolean
    readonly cacheMode: PluginConfig["cache"]["mode"]
    readonly contextWindow: number
    readonly switchedOff: ReadonlyArray<string>
  }
  /** The session's last request (the compaction summariser's excepted). */
  readonly finalRequest: {
    readonly request: number
    readonly withPlugin: Composition
    readonly withoutPlugin: Composition
    readonly prunedCalls: number
  }
  /** Calls pruned over the session, by strategy (or tool) in the order the plugin names them; tokens per request. */
  readonly pruned: ReadonlyArray<{
    readonly reason: string
    /** What notes and placeholders call it ("duplicate", "stale output", ...). */
    readonly name: string
    readonly calls: number
    readonly tokens: number
    /** Switched on in the config. */
    readonly enabled: boolean
  }>
  readonly prunedTotal: Tally
  /** The model's own discard/extract calls found in the session, replayed through the plugin's tools. */
  readonly modelCalls: { readonly replayed: number; readonly accepted: number; readonly rejected: number }
  readonly sent: {
    readonly requests: number
    /** The pricing profiles the runs are priced under, Anthropic's first. */
    readonly profiles: ReadonlyArray<PricingName>
    /** The one the session's provider bills by. */
    readonly sessionProfile: PricingName
    readonly withoutPlugin: Run
    readonly withOpenCodePrune: Run
    readonly withPlugin: Run
    /**
     * Whether the model is taken to read a masked file again before editing it (`Run.reReads`), or edits it as
     * recorded (`--blind-edits`: a session recorded with the plugin on already holds what the model did).
     */
    readonly reReadMasked: boolean
    /** Tokens of what the plugin adds (tool definitions, system section, appended messages), over all requests. */
    readonly addedTokens: number
    /** Tokens of the stand-ins for OpenCode's system prompt and tool definitions, sent with every request in every run. */
    readonly systemPromptTokens: number
    readonly hostToolTokens: number
  }
  /** What the provider reported for the recorded session, as it was really sent. */
  readonly reported: {
    readonly requests: number
    readonly input: number
    readonly cacheRead: number
    readonly cacheWrite: number
  }
  /** Notes the plugin would have shown the user (never sent to the model). */
  readonly notes: number
  /** Warnings and errors the plugin logged (it fails open: the request went out unmodified). */
  readonly pluginLog: ReadonlyArray<string>
}

/** What the replay of a session found: the report's input. */
export interface Replayed {
  readonly session: Session
  /** `--config` replaced the user's config files. */
  readonly explicitConfig: boolean
  readonly contextWindow: number
  /** The temporary root the replay ran under. */
  readonly root: string
  /** The user's files the config files under the root are copies of, by copy. */
  readonly origins: ReadonlyMap<string, string>
  readonly config: Config["Service"]
  readonly runs: Readonly<Record<RunName, Driven>>
  /** The pricing profiles the runs were priced under, and the one the session's provider bills by. */
  readonly profiles: ReadonlyArray<PricingProfile>
  readonly sessionProfile: PricingProfile
  readonly reReadMasked: boolean
  /** The stand-in for OpenCode's system prompt the last request sent. */
  readonly system: ReadonlyArray<string>
  readonly count: (text: string) => number
  /** The plugin's state of the session at the end. */
  readonly state: SessionOutcome
  readonly recorded: Recorded
  /** The plugin run's last request (the compaction summariser's excepted). */
  readonly last: NonNullable<Driven["last"]>
}

/** Tokens of one request by kind of content, from the blocks the cost model counted. */
const composition = (
  blocks: Blocks,
  tokensOf: (block: number) => number,
  base: {
    readonly system: ReadonlySet<string>
    readonly tools: ReadonlySet<string>
    readonly messageIds: ReadonlySet<unknown>
  },
  request: {
    readonly definitions: ReadonlyArray<readonly [string, string]>
    readonly system: ReadonlyArray<string>
    readonly messages: ReadonlyArray<Msg>
  }
): Composition => {
  let system = 0
  let user = 0
  let assistant = 0
  let tools = 0
  let toolCalls = 0
  let plugin = 0
  for (const [name, definition] of request.definitions) {
    const tokens = tokensOf(blocks.toolDefinition(name, definition))
    if (base.tools.has(name)) system += tokens
    else plugin += tokens
  }
  for (const text of request.system) {
    const { host, added } = splitSystem(text, base.system)
    const boundary = tokensOf(blocks.boundary("system"))
    if (host === "") plugin += tokensOf(blocks.system(text)) + boundary
    else system += tokensOf(blocks.system(host)) + boundary
    if (host !== "" && added !== "") plugin += tokensOf(blocks.system(added))
  }
  for (const message of request.messages) {
    const role = String(message.info?.role)
    const added = !base.messageIds.has(message.info?.id)
    let own = tokensOf(blocks.boundary(role))
    for (const part of message.parts) {
      const { content, result } = blocks.part(role, part)
      const tokens = (content < 0 ? 0 : tokensOf(content)) + (result < 0 ? 0 : tokensOf(result))
      if (part.type === "tool" && !added && tokens > 0) {
        tools += tokens
        toolCalls++
      } else {
        own += tokens
      }
    }
    if (added) plugin += own
    else if (role === "user") user += own
    else assistant += own
  }
  return { system, user, assistant, tools, toolCalls, plugin, total: system + user + assistant + tools + plugin }
}

/** Costs to the cent of a token: the sums of 0.1 x and 1.25 x carry float noise otherwise. */
const rounded = (priced: Readonly<Record<string, Priced>>): Record<string, Priced> =>
  Object.fromEntries(Object.entries(priced).map(([name, p]) => [name, { ...p, cost: Math.round(p.cost * 100) / 100 }]))

const runOf = (driven: Driven): Run => ({
  priced: rounded(driven.priced),
  compactions: driven.compactions,
  openCodePruned: driven.openCodePruned,
  edits: driven.edits,
  reReads: driven.reReads
})

/** The figures of a replayed session. */
export const analysisOf = (r: Replayed): Analysis => {
  const { session, config, state, recorded, last, system: base, count } = r
  const { withoutPlugin, withOpenCodePrune, withPlugin } = r.runs
  const { messages, infos } = session
  const current = config.current
  const lastModel = infos.filter((info) => info.role === "assistant").at(-1)
  const { builder, tokensOf } = withPlugin
  const final = withoutPlugin.last ?? last
  // What OpenCode adds to the stored history in a run (compactions, the model's reads of masked files) is not the
  // plugin's.
  const storedIn = (run: Driven) => ({
    system: new Set(base),
    tools: new Set(hostToolDefinitions.map(([name]) => name)),
    messageIds: new Set([...messages.map((message) => message.info.id), ...run.builder.hostMessages])
  })
  const finalRequest = {
    request: last.index + 1,
    withPlugin: composition(builder.blocks, tokensOf, storedIn(withPlugin), last),
    withoutPlugin: composition(withoutPlugin.builder.blocks, withoutPlugin.tokensOf, storedIn(withoutPlugin), {
      definitions: hostToolDefinitions,
      system: base,
      messages: final.visible
    }),
    prunedCalls:
      last.visible.flatMap((m) => m.parts).filter((part) =>
        part.type === "tool" && typeof part.callID === "string" && state.pruned.has(part.callID)
      ).length
  }

  const known = new Set<string>(reasons)
  const shown = [
    ...reasons,
    ...Object.keys(state.byReason).filter((reason) => !known.has(reason))
  ]
  const pruned = shown
    .map((reason) => ({
      reason,
      name: reasonName(reason),
      calls: state.byReason[reason]?.calls ?? 0,
      tokens: state.byReason[reason]?.tokens ?? 0,
      enabled: current.enabled && isReason(reason) && reasonEnabled(current, reason)
    }))
    // Automatic strategies are always listed (a zero says something); the rest only when they pruned.
    .filter((row, i) => i < 4 || row.calls > 0)

  const tools = messages.flatMap((message) => message.parts).filter((part) => part.type === "tool")
  const reported = reportedCacheUsage(messages)
  const origins = r.origins
  const files = config.files.flatMap((file) => {
    const origin = origins.get(file)
    if (origin !== undefined) return [origin]
    // The default global config the plugin writes when the user has none: built-in defaults.
    return file.startsWith(r.root) ? [] : [file]
  })
  const rename = (text: string) => [...origins].reduce((out, [copy, origin]) => out.split(copy).join(origin), text)
  return {
    session: {
      id: session.info.id,
      title: session.info.title,
      directory: session.info.directory,
      version: session.info.version,
      subAgent: state.subAgent,
      messages: messages.length,
      userTurns: messages.filter((message, i) => infos[i]!.role === "user" && isPrompt(message)).length,
      requests: withoutPlugin.requests,
      toolCalls: tools.length,
      failedCalls: tools.filter((part) => part.state?.status === "error").length,
      startedAt: infos[0]!.time.created,
      endedAt: Math.max(...infos.map((info) => info.time.created)),
      pausesOverTtl: withoutPlugin.pausesOverTtl,
      model: { providerID: lastModel?.providerID, modelID: lastModel?.modelID }
    },
    skippedParts: {
      total: Object.values(session.skipped).reduce((sum, n) => sum + n, 0),
      byType: session.skipped
    },
    config: {
      files,
      explicit: r.explicitConfig,
      // One line per problem, from the config itself: the plugin's toasts group a file's problems and tell more.
      problems: config.reports.flatMap((report) =>
        report.problems.map((problem) => rename(`${report.file}: ${problem.message}`))
      ),
      enabled: current.enabled,
      cacheMode: current.cache.mode,
      contextWindow: r.contextWindow,
      switchedOff: pruned.filter((row) => !row.enabled).map((row) => row.reason)
    },
    finalRequest,
    pruned,
    prunedTotal: { calls: state.calls, tokens: state.tokens },
    modelCalls: withPlugin.modelCalls,
    sent: {
      requests: withoutPlugin.requests,
      profiles: r.profiles.map((profile) => profile.name),
      sessionProfile: r.sessionProfile.name,
      withoutPlugin: runOf(withoutPlugin),
      withOpenCodePrune: runOf(withOpenCodePrune),
      withPlugin: runOf(withPlugin),
      reReadMasked: r.reReadMasked,
      addedTokens: addedTokens(withPlugin),
      systemPromptTokens: base.reduce((sum, text) => sum + count(text), 0),
      hostToolTokens: hostToolDefinitions.reduce((sum, [name, definition]) => sum + count(name) + count(definition), 0)
    },
    reported: {
      requests: reported.requests,
      input: reported.uncached,
      cacheRead: reported.read,
      cacheWrite: reported.write
    },
    notes: recorded.notes.length,
    pluginLog: recorded.logs.map(rename)
  }
}

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
    return `  ${name.padEnd(label)}  ${bar(share)} ${`${Math.round(share * 100)}%`.padStart(4)}  ${
      n(value).padStart(tokens)
    }`
  })
  lines.push(`  ${"Total".padEnd(label)}  ${" ".repeat(24)} ${" ".repeat(4)}  ${n(composition.total).padStart(tokens)}`)
  return lines
}

export interface ReportOptions {
  /** The context window was given (`--context-window`), not assumed. */
  readonly contextWindowGiven?: boolean
  /** A closing line: what the reader can do next. */
  readonly nextStep?: string
}

export const formatReport = (a: Analysis, options: ReportOptions = {}): string => {
  const s = a.session
  const out: Array<string> = []
  out.push(clip(`Context pruning, replayed offline: session ${s.id}`))
  const about = [
    s.title === undefined ? undefined : `"${s.title}"`,
    s.version === undefined ? undefined : `OpenCode ${s.version}`
  ]
    .filter((part) => part !== undefined)
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
  if (s.subAgent)
    out.push(...wrap("This is a sub-agent session: the plugin leaves those untouched, so nothing is pruned."))

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
        `The model's own discard/extract calls in the session: ${
          n(a.modelCalls.replayed)
        } replayed through the plugin's ` +
          `tools, ${n(a.modelCalls.accepted)} accepted, ${n(a.modelCalls.rejected)} rejected.`
      )
    )
  }

  out.push("")
  const sent = a.sent
  const w = sent.withoutPlugin.priced
  const o = sent.withOpenCodePrune.priced
  const p = sent.withPlugin.priced
  const first = sent.profiles[0]!
  const rows2: Array<Array<string>> = [
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
    rows2.push([
      `  Cost, ${profileLabel[name]}${mark}`,
      n(w[name]!.cost),
      n(o[name]!.cost),
      n(p[name]!.cost),
      change(w[name]!.cost, p[name]!.cost)
    ])
  }
  rows2.push([
    "  Read from the cache (Anthropic)",
    percent(share(w[first]!.readTokens, w[first]!.tokens)),
    percent(share(o[first]!.readTokens, o[first]!.tokens)),
    percent(share(p[first]!.readTokens, p[first]!.tokens)),
    ""
  ])
  const runs = [sent.withoutPlugin, sent.withOpenCodePrune, sent.withPlugin]
  if (runs.some((run) => run.compactions > 0))
    rows2.push([
      "  Compactions",
      ...runs.map((run) => n(run.compactions)),
      ""
    ])
  if (runs.some((run) => run.edits.made > 0)) {
    rows2.push([
      "  Edits with the file masked",
      ...runs.map(({ edits }) => `${n(edits.masked)} of ${n(edits.made)}`),
      ""
    ])
  }
  if (runs.some((run) => run.reReads > 0)) {
    rows2.push(["  Requests reading them again", ...runs.map((run) => n(run.reReads)), ""])
  }
  out.push(...table(rows2, ["l", "r", "r", "r", "r"]))
  const better = Math.min(w[first]!.cost, o[first]!.cost)
  out.push(
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
        `* the pricing this session's provider (${s.model.providerID ?? "unknown"}) bills by.`
    )
  )

  out.push("")
  out.push(
    ...wrap(
      `All token figures are estimates (o200k tokenizer) of what each request sends, converted to what OpenCode 1.18 ` +
        `puts on the wire: the exported messages, stand-ins for OpenCode's system prompt ` +
        `(${n(sent.systemPromptTokens)} tokens) and built-in tool definitions (${
          n(sent.hostToolTokens)
        } tokens), the ` +
        `same in every run, and, with the plugin, what it adds (${n(sent.addedTokens)} tokens over the session: tool ` +
        `definitions, system section, notes to the model). Cost is in units of one uncached input token. ` +
        `Anthropic: cache breakpoints where OpenCode places them (its first 2 system messages and last 2 other ` +
        `messages); an entry is written only at a breakpoint (at ${profiles.anthropic.write}), found by a later ` +
        `request up to ${profiles.anthropic.lookbackBlocks} blocks before one of its breakpoints (read at ` +
        `${profiles.anthropic.read}), from ${n(profiles.anthropic.minTokens)} tokens, for ${
          profiles.anthropic.ttlSeconds / 60
        } ` +
        `minutes after its last use. OpenAI: a request reads its common prefix with the previous one, sent within ` +
        `${profiles.openai.ttlSeconds / 60} minutes, at ${profiles.openai.read}, from ${
          n(profiles.openai.minTokens)
        } ` +
        `tokens in 128-token steps. Times are the messages' timestamps. "OC prune": OpenCode's own ` +
        `compaction.prune. Compaction at overflow (a summary request, then the summary and recent messages) is ` +
        `simulated in every run when a request reaches the window less OpenCode's output reserve, and with the ` +
        `plugin the compaction it asks for at the end of a turn that reached compaction.atTokens; a summary is ` +
        `priced as output (${profiles.anthropic.output}x an input token for Anthropic, ${profiles.openai.output}x for ` +
        `OpenAI), the one output that differs between runs.` +
        (runs.some((run) => run.edits.made > 0)
          ? ` "Edits with the file masked": the model's edits of a file it had read or written, made while no ` +
            `copy of that content was in what its request sent (pruned, cleared, or summarised away by a ` +
            `compaction). ` +
            (sent.reReadMasked
              ? `The model is taken to read each such file again before editing it, and the cost figures include ` +
                `that: one more request, and the file's content sent from then on.`
              : `Replayed as recorded (--blind-edits): no cost figure includes a re-read.`)
          : "")
    )
  )
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
  if (options.nextStep !== undefined) out.push("", ...wrap(options.nextStep))
  return `${out.join("\n")}\n`
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

const profileLabel: Readonly<Record<PricingName, string>> = {
  anthropic: "Anthropic cache",
  "anthropic-1h": "Anthropic cache, 1 h",
  openai: "OpenAI cache",
  "per-request": "per request",
  none: "no cache"
}

const share = (part: number, whole: number) => (whole === 0 ? 0 : part / whole)
const ratio = (value: number, of: number) => (of === 0 ? "n/a" : `${(value / of).toFixed(2)}x`)
