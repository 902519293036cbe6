/**
 * One replay of a generated session, in its own process (so its peak RSS is its own), through the shared driver
 * (src/simulator/drive.ts): every model request the session made, in order, the way OpenCode calls the plugin, with
 * OpenCode's compaction at overflow, priced under Anthropic's and OpenAI's prompt-cache rules.
 *
 * `plugin: "real"` drives the real hooks, built as the offline analyser builds them (src/simulator/plugin.ts: the
 * production graph with a recording test host, here with the production tokenizer unless told otherwise); `"none"` is OpenCode without a plugin, `"prune"` OpenCode with its own
 * `compaction.prune: true`: the baselines a user really has.
 *
 * Usage (normally started by bench/run.ts): node bench/replay.ts '<ReplayOptions as JSON>'
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { setImmediate as tick } from "node:timers/promises"
import { freezeShared } from "../src/simulator/copy.ts"
import { costWithoutRebuilds, o200kCount, type Priced } from "../src/simulator/cost.ts"
import { addedTokens, drive, type DrivenPlugin, noPlugin } from "../src/simulator/drive.ts"
import type { Edits } from "../src/simulator/edits.ts"
import type { Fidelity } from "../src/simulator/fidelity.ts"
import { type DriveModel, usableWindow } from "../src/simulator/opencode.ts"
import { hostToolDefinitions } from "../src/simulator/prompt.ts"
import { profiles } from "../src/pricing/profiles.ts"
import { generate, projectDir, sessionID } from "../src/simulator/generator/generate.ts"
import { systemPrompt } from "../src/simulator/generator/project.ts"

export type Baseline = "none" | "prune"

export interface ReplayOptions {
  readonly size: number
  readonly seed: number
  /** The real plugin, or no plugin with OpenCode's own behaviour: `none` (its defaults) or `prune` (`compaction.prune`). */
  readonly plugin: "real" | Baseline
  /** Module exporting what bench/harness.ts exports (its Bun bundle, or the source file itself). */
  readonly harness: string
  /** Written to `<tempRoot>/config/opencode/dcp.jsonc`, the global config file the plugin reads. */
  readonly config: Record<string, unknown>
  /** Count tokens exactly (o200k) for the cost figures; off, four characters a token (for CPU profiles). */
  readonly accounting: boolean
  /**
   * The plugin's token counter: the production layer (default: estimates on the request path), o200k for every count
   * (`exact`, diagnostic) or 4 characters a token (`estimate`, diagnostic).
   */
  readonly tokenizer?: "default" | "estimate" | "exact"
  /**
   * Simulate OpenCode's compaction at overflow (default). Off, every request sends the whole history however long:
   * the worst case for latency (a model with a window larger than the session, or `compaction.auto: false`).
   */
  readonly compaction?: boolean
  /** Another plugin adds a system text of its own after this one's, in every run (see `DriveOptions.otherSystem`). */
  readonly otherSystem?: boolean
  /**
   * The model edits a file whose every copy was masked as recorded, without reading it again first (diagnostic). By
   * default it reads it again, and that is priced (`DriveOptions.reReadMasked`).
   */
  readonly blindEdits?: boolean
  /** Where to write the ReplayResult as JSON. */
  readonly out: string
}

export interface ReplayResult {
  readonly size: number
  readonly plugin: ReplayOptions["plugin"]
  readonly requests: number
  readonly toolCalls: number
  readonly errors: number
  readonly turns: number
  readonly coldRequests: number
  /** Characters of every tool output, input and text in the session, MB. */
  readonly historyMB: number
  /** Runtime built and config resolved (real plugin only), ms. */
  readonly setupMs: number
  /** Per request, ms: the messages transform and the system transform. */
  readonly transformMs: ReadonlyArray<number>
  readonly systemMs: ReadonlyArray<number>
  /**
   * Where the rest of the replay's wall time went, ms: generating the session, fresh copies, pricing, the session.idle
   * hook, the pause after each request (the plugin's background work: state written behind), forced collections.
   */
  readonly phasesMs: Readonly<Record<"generate" | "copy" | "accounting" | "idle" | "background" | "gc", number>>
  readonly rssBeforeReplayMB: number
  /** VmHWM at the end of the replay, before any accounting. */
  readonly peakRssMB: number
  /** Largest heap in use after a forced full collection (sampled every 100 requests): what stays alive. */
  readonly liveHeapMB: number
  readonly pruned: number | undefined
  /** Pruned calls at the end of the session, by the reason the plugin recorded (strategy or tool). */
  readonly prunedBy: Record<string, number> | undefined
  readonly notes: number | undefined
  readonly toasts: ReadonlyArray<string>
  readonly accounting: Accounting
}

export interface Accounting {
  /** Per pricing profile (anthropic, openai). */
  readonly priced: Readonly<Record<string, Priced>>
  /**
   * Per pricing profile: the same requests if no change ever forced a rewrite (`costWithoutRebuilds`), and the output
   * of the run's compaction summaries.
   */
  readonly withoutRebuilds: Readonly<Record<string, number>>
  /** Tokens of what the plugin added (tool definitions, system section, synthetic messages), summed over requests. */
  readonly addedTokens: number
  /** Tokens of the session's last request. */
  readonly lastContextTokens: number
  /** Requests larger than the model's usable window (its context less OpenCode's output reserve). */
  readonly requestsOverWindow: number
  /** Compactions OpenCode made at overflow (each one a summary request). */
  readonly compactions: number
  /** Summary requests longer than the model's window, which a provider refuses (the compaction fails). */
  readonly summariesOverWindow: number
  /** Outputs OpenCode's own `compaction.prune` cleared. */
  readonly openCodePruned: number
  /** The model's edits of files it had seen, and those made with the file's content masked in what was sent. */
  readonly edits: Edits
  /** Requests the model spent reading masked files again before editing them (`reReadMasked`). */
  readonly reReads: number
  /** What the model used of earlier tool outputs and the requests still showed (src/simulator/fidelity.ts). */
  readonly fidelity: Omit<Fidelity, "misses"> & { readonly missed: number }
}

const pricedProfiles = [profiles.anthropic, profiles.openai]

/** The figure without the list of misses, which a long session's JSON need not carry. */
const fidelitySummary = ({ misses, ...rest }: Fidelity): Accounting["fidelity"] => ({ ...rest, missed: misses.length })

const model: DriveModel = { providerID: "anthropic", modelID: "claude-sonnet-4-5", context: 200_000, output: 64_000 }

interface Inspected {
  readonly pruned: number | undefined
  readonly prunedBy: Record<string, number> | undefined
  readonly notes: number | undefined
  readonly toasts: Array<string>
}

interface Plugin extends DrivenPlugin {
  readonly inspect: () => Promise<Inspected>
  readonly dispose: () => Promise<void>
}

const withoutPlugin = (): Plugin => ({
  ...noPlugin,
  inspect: async () => ({ pruned: undefined, prunedBy: undefined, notes: undefined, toasts: [] }),
  dispose: async () => {}
})

/** The real plugin as the analyser replays it (src/simulator/plugin.ts), loaded from the harness module. */
const realPlugin = async (
  harness: string,
  config: Record<string, unknown>,
  tokenizer: "default" | "estimate" | "exact"
): Promise<Plugin> => {
  const h: typeof import("./harness.ts") = await import(harness)
  const root = mkdtempSync(join(tmpdir(), "dcp-bench-"))
  // The project directory stays the generated one, so paths in tool inputs are project-relative as in a real session.
  const plugin = await h.replayedPlugin({
    root,
    directory: projectDir,
    worktree: projectDir,
    globalConfig: JSON.stringify(config, null, 2),
    tokenizer: tokenizer === "estimate"
      ? h.Tokenizer.layerEstimate
      : tokenizer === "exact"
      ? h.Tokenizer.layerExact
      : undefined
  })
  return {
    hooks: plugin.hooks,
    setTime: plugin.setTime,
    compactionsAsked: plugin.compactionsAsked,
    inspect: async () => {
      const reasons = await plugin.outcome(sessionID).then((outcome) => [...outcome.pruned.values()], () => undefined)
      const prunedBy: Record<string, number> = {}
      for (const reason of reasons ?? []) prunedBy[reason] = (prunedBy[reason] ?? 0) + 1
      const { notes, toasts } = plugin.recorded()
      return {
        pruned: reasons?.length,
        prunedBy: reasons === undefined ? undefined : prunedBy,
        notes: notes.length,
        toasts: toasts.map((t) => `${t.title ?? ""}: ${t.message}`.replace(/\s+/g, " "))
      }
    },
    dispose: async () => {
      await plugin.dispose()
      rmSync(root, { recursive: true, force: true })
    }
  }
}

const peakRssMB = (): number => {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync("/proc/self/status", "utf8"))
  return match === null ? process.resourceUsage().maxRSS / 1024 : Number(match[1]) / 1024
}

/** Forces a full collection when the runtime allows it (node --expose-gc, Bun). */
const collect = (): boolean => {
  const bun = (globalThis as { Bun?: { gc: (force: boolean) => void } }).Bun
  if (bun !== undefined) bun.gc(true)
  else if (typeof globalThis.gc === "function") globalThis.gc()
  else return false
  return true
}

/** Requests between forced collections: keeps peak RSS from depending on when V8 chose to collect. */
const collectEvery = 100

/** What `--other-system` adds: a few lines of instructions, as plugins that steer the model add. */
const otherPluginSystem = [
  "## Project conventions",
  "- Prefer small, focused changes; keep the existing code style.",
  "- Run the tests after every change and report what failed.",
  "- Ask before adding a dependency."
].join("\n")

export const replay = async (options: ReplayOptions): Promise<ReplayResult> => {
  const generateStart = performance.now()
  const session = generate({ seed: options.seed, toolCalls: options.size })
  freezeShared(session.messages)
  const generateMs = performance.now() - generateStart
  const setupStart = performance.now()
  const plugin = options.plugin === "real"
    ? await realPlugin(options.harness, options.config, options.tokenizer ?? "default")
    : withoutPlugin()
  const setupMs = performance.now() - setupStart
  const count = options.accounting ? await o200kCount() : (text: string) => Math.ceil(text.length / 4)

  let backgroundMs = 0
  let gcMs = 0
  let liveHeapMB = 0
  const sample = () => {
    const start = performance.now()
    if (collect()) liveHeapMB = Math.max(liveHeapMB, process.memoryUsage().heapUsed / 1024 / 1024)
    gcMs += performance.now() - start
  }
  sample()
  const rssBeforeReplayMB = process.memoryUsage().rss / 1024 / 1024

  const driven = await drive({
    sessionID,
    messages: session.messages,
    plugin,
    system: systemPrompt,
    hostTools: hostToolDefinitions,
    model,
    profiles: pricedProfiles,
    count,
    compactAtOverflow: options.compaction ?? true,
    openCodePrune: options.plugin === "prune",
    ...(options.otherSystem === true ? { otherSystem: otherPluginSystem } : {}),
    reReadMasked: options.blindEdits !== true,
    fidelity: options.accounting,
    directory: projectDir,
    between: async (request) => {
      // Between requests OpenCode waits for the model; background work (state written behind) runs then.
      const start = performance.now()
      await tick()
      backgroundMs += performance.now() - start
      if (request % collectEvery === 0) sample()
    }
  })
  sample()
  const peak = peakRssMB()
  const inspected = await plugin.inspect()
  await plugin.dispose()

  const usable = usableWindow(model)
  return {
    size: options.size,
    plugin: options.plugin,
    requests: driven.requests,
    toolCalls: session.stats.toolCalls,
    errors: session.stats.errors,
    turns: session.stats.turns,
    coldRequests: driven.pausesOverTtl,
    historyMB: session.stats.chars / 1e6,
    setupMs,
    transformMs: driven.transformMs,
    systemMs: driven.systemMs,
    phasesMs: { generate: generateMs, ...driven.phasesMs, background: backgroundMs, gc: gcMs },
    rssBeforeReplayMB,
    peakRssMB: peak,
    liveHeapMB,
    pruned: inspected.pruned,
    prunedBy: inspected.prunedBy,
    notes: inspected.notes,
    toasts: inspected.toasts,
    accounting: {
      priced: driven.priced,
      withoutRebuilds: Object.fromEntries(
        pricedProfiles.map((profile) => [
          profile.name,
          costWithoutRebuilds(profile, driven.requestTokens) +
          driven.priced[profile.name]!.outputTokens * profile.output
        ])
      ),
      addedTokens: addedTokens(driven),
      lastContextTokens: driven.requestTokens.at(-1) ?? 0,
      requestsOverWindow: driven.requestTokens.filter((tokens) => tokens >= usable).length,
      compactions: driven.compactions,
      summariesOverWindow: driven.summariesOverWindow,
      openCodePruned: driven.openCodePruned,
      edits: driven.edits,
      reReads: driven.reReads,
      fidelity: fidelitySummary(driven.fidelity)
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const options = JSON.parse(process.argv[2] ?? "{}") as ReplayOptions
  const result = await replay(options)
  writeFileSync(options.out, JSON.stringify(result))
  process.exit(0)
}
