import type { PluginConfig } from "../config/schema.ts"
import { reportedCacheUsage } from "../commands/breakdown.ts"
import { isDigest as isFoldDigest } from "../engine/fold.ts"
import { isReason, reasonEnabled, reasonName, reasons } from "../engine/reasons.ts"
import type { PricingName, PricingProfile } from "../pricing/profiles.ts"
import type { Config } from "../services/Config.ts"
import type { Msg } from "../host/schema.ts"
import type { Priced } from "../simulator/cost.ts"
import { addedTokens, type Driven } from "../simulator/drive.ts"
import type { Edits } from "../simulator/edits.ts"
import type { Fidelity } from "../simulator/fidelity.ts"
import { isPrompt } from "../simulator/opencode.ts"
import type { Recorded, SessionOutcome } from "../simulator/plugin.ts"
import { hostToolDefinitions } from "../simulator/prompt.ts"
import type { Session } from "./session.ts"
import { type Blocks, splitSystem } from "../simulator/wire.ts"

/**
 * The figures of a replayed session (`Analysis`, what `--json` prints, and what report.ts writes out for a terminal),
 * made from what the replay found (`Replayed`).
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
  /**
   * What the model went on to use of earlier tool outputs, and how much of it its requests still showed (SPEC 9.12,
   * src/simulator/fidelity.ts), with what a recall of each miss would cost.
   */
  readonly fidelity: Fidelity
}

interface Tally {
  readonly calls: number
  readonly tokens: number
}

/** Tokens of one request by kind of content. */
export interface Composition {
  /** OpenCode's system prompt and tool definitions (stand-ins). */
  readonly system: number
  readonly user: number
  readonly assistant: number
  /** The session's tool calls: inputs and outputs (or placeholders), and the digests of folded turns. */
  readonly tools: number
  readonly toolCalls: number
  /** Calls sent as a line of a folded turn's digest, not as a tool part. */
  readonly foldedCalls: number
  /** What the plugin adds: its tool definitions, its system section, the messages it appends. */
  readonly plugin: number
  readonly total: number
}

/** A folded turn's digest, as the plugin writes it into an assistant message (src/engine/fold.ts). */
const isDigest = (part: Msg["parts"][number]): part is Msg["parts"][number] & { readonly text: string } =>
  isFoldDigest(part)

const foldedLines = (text: string): number => text.split("\n").filter((line) => line.startsWith("#")).length

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
  let foldedCalls = 0
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
      } else if (!added && isDigest(part)) {
        tools += tokens
        foldedCalls += foldedLines(part.text)
      } else {
        own += tokens
      }
    }
    if (added) plugin += own
    else if (role === "user") user += own
    else assistant += own
  }
  return {
    system,
    user,
    assistant,
    tools,
    toolCalls,
    foldedCalls,
    plugin,
    total: system + user + assistant + tools + plugin
  }
}

/** Costs to the cent of a token: the sums of 0.1 x and 1.25 x carry float noise otherwise. */
const rounded = (priced: Readonly<Record<string, Priced>>): Record<string, Priced> =>
  Object.fromEntries(Object.entries(priced).map(([name, p]) => [name, { ...p, cost: Math.round(p.cost * 100) / 100 }]))

const roundedCosts = (costs: Readonly<Record<string, number>>): Record<string, number> =>
  Object.fromEntries(Object.entries(costs).map(([name, cost]) => [name, Math.round(cost * 100) / 100]))

const runOf = (driven: Driven): Run => ({
  priced: rounded(driven.priced),
  compactions: driven.compactions,
  openCodePruned: driven.openCodePruned,
  edits: driven.edits,
  reReads: driven.reReads,
  fidelity: { ...driven.fidelity, recallCost: roundedCosts(driven.fidelity.recallCost) }
})

/** What the plugin added, set apart from what OpenCode stored: the base of `composition` for a run. */
const storedIn = (r: Replayed, run: Driven) => ({
  system: new Set(r.system),
  tools: new Set(hostToolDefinitions.map(([name]) => name)),
  // What OpenCode adds to the stored history in a run (compactions, the model's reads of masked files) is not the
  // plugin's.
  messageIds: new Set([...r.session.messages.map((message) => message.info.id), ...run.builder.hostMessages])
})

const finalRequestOf = (r: Replayed): Analysis["finalRequest"] => {
  const { last, state } = r
  const { withoutPlugin, withPlugin } = r.runs
  const final = withoutPlugin.last ?? last
  return {
    request: last.index + 1,
    withPlugin: composition(withPlugin.builder.blocks, withPlugin.tokensOf, storedIn(r, withPlugin), last),
    withoutPlugin: composition(withoutPlugin.builder.blocks, withoutPlugin.tokensOf, storedIn(r, withoutPlugin), {
      definitions: hostToolDefinitions,
      system: r.system,
      messages: final.visible
    }),
    prunedCalls:
      last.visible.flatMap((m) => m.parts).filter((part) =>
        part.type === "tool" && typeof part.callID === "string" && state.pruned.has(part.callID)
      ).length
  }
}

/** Every automatic strategy (a zero says something), then the other reasons that pruned, in the plugin's order. */
const prunedRows = (r: Replayed): Analysis["pruned"] => {
  const { byReason } = r.state
  const current = r.config.current
  const known = new Set<string>(reasons)
  const shown = [...reasons, ...Object.keys(byReason).filter((reason) => !known.has(reason))]
  return shown
    .map((reason) => ({
      reason,
      name: reasonName(reason),
      calls: byReason[reason]?.calls ?? 0,
      tokens: byReason[reason]?.tokens ?? 0,
      enabled: current.enabled && isReason(reason) && reasonEnabled(current, reason)
    }))
    .filter((row, i) => i < 4 || row.calls > 0)
}

const sessionOf = (r: Replayed): Analysis["session"] => {
  const { session, state } = r
  const { messages, infos } = session
  const { withoutPlugin } = r.runs
  const lastModel = infos.filter((info) => info.role === "assistant").at(-1)
  const tools = messages.flatMap((message) => message.parts).filter((part) => part.type === "tool")
  return {
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
  }
}

/** The user's files the config was read from, and its problems, named by those files rather than their copies. */
const configOf = (r: Replayed, pruned: Analysis["pruned"]): Analysis["config"] => {
  const { config, origins } = r
  const current = config.current
  const files = config.files.flatMap((file) => {
    const origin = origins.get(file)
    if (origin !== undefined) return [origin]
    // The default global config the plugin writes when the user has none: built-in defaults.
    return file.startsWith(r.root) ? [] : [file]
  })
  return {
    files,
    explicit: r.explicitConfig,
    // One line per problem, from the config itself: the plugin's toasts group a file's problems and tell more.
    problems: config.reports.flatMap((report) =>
      report.problems.map((problem) => renamed(r, `${report.file}: ${problem.message}`))
    ),
    enabled: current.enabled,
    cacheMode: current.cache.mode,
    contextWindow: r.contextWindow,
    switchedOff: pruned.filter((row) => !row.enabled).map((row) => row.reason)
  }
}

/** `text` with the config copies under the replay's root named as the user's files they copy. */
const renamed = (r: Replayed, text: string) =>
  [...r.origins].reduce((out, [copy, origin]) => out.split(copy).join(origin), text)

const sentOf = (r: Replayed): Analysis["sent"] => {
  const { withoutPlugin, withOpenCodePrune, withPlugin } = r.runs
  return {
    requests: withoutPlugin.requests,
    profiles: r.profiles.map((profile) => profile.name),
    sessionProfile: r.sessionProfile.name,
    withoutPlugin: runOf(withoutPlugin),
    withOpenCodePrune: runOf(withOpenCodePrune),
    withPlugin: runOf(withPlugin),
    reReadMasked: r.reReadMasked,
    addedTokens: addedTokens(withPlugin),
    systemPromptTokens: r.system.reduce((sum, text) => sum + r.count(text), 0),
    hostToolTokens: hostToolDefinitions.reduce(
      (sum, [name, definition]) => sum + r.count(name) + r.count(definition),
      0
    )
  }
}

/** The figures of a replayed session. */
export const analysisOf = (r: Replayed): Analysis => {
  const { session, state, recorded } = r
  const reported = reportedCacheUsage(session.messages)
  const pruned = prunedRows(r)
  return {
    session: sessionOf(r),
    skippedParts: {
      total: Object.values(session.skipped).reduce((sum, n) => sum + n, 0),
      byType: session.skipped
    },
    config: configOf(r, pruned),
    finalRequest: finalRequestOf(r),
    pruned,
    prunedTotal: { calls: state.calls, tokens: state.tokens },
    modelCalls: r.runs.withPlugin.modelCalls,
    sent: sentOf(r),
    reported: {
      requests: reported.requests,
      input: reported.uncached,
      cacheRead: reported.read,
      cacheWrite: reported.write
    },
    notes: recorded.notes.length,
    pluginLog: recorded.logs.map((line) => renamed(r, line))
  }
}
