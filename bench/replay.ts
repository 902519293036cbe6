/**
 * One replay of a generated session, in its own process (so its peak RSS is its own): every model request the
 * session made, in order, the way OpenCode calls the plugin. For each request a fresh copy of the history so far
 * goes through `experimental.chat.messages.transform`, then the system prompt through
 * `experimental.chat.system.transform`; `chat.message` announces each user turn and `session.idle` ends it.
 *
 * `plugin: "real"` drives the real hooks (makeHooks over the composed production graph with a recording test host
 * and the production tokenizer); `plugin: "noop"` runs the same loop with hooks that do nothing.
 *
 * Usage (normally started by bench/run.ts): node bench/replay.ts '<ReplayOptions as JSON>'
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { setImmediate as tick } from "node:timers/promises"
import { freezeShared, freshCopy } from "../src/analysis/copy.ts"
import { CacheMeter, type Priced, unitTokens } from "../src/analysis/cost.ts"
import { generate, type Msg, projectDir, sessionID } from "./generate.ts"
import { systemPrompt } from "./prompt.ts"
import { Sent } from "../src/analysis/sent.ts"

export interface ReplayOptions {
  readonly size: number
  readonly seed: number
  readonly plugin: "noop" | "real"
  /** Module exporting what bench/harness.ts exports (its Bun bundle, or the source file itself). */
  readonly harness: string
  /** Written to `<tempRoot>/config/opencode/dcp.jsonc`, the global config file the plugin reads. */
  readonly config: Record<string, unknown>
  /** Count tokens and cache cost of what was sent. */
  readonly accounting: boolean
  /**
   * The plugin's token counter: the production layer (default: estimates on the request path), o200k for every count
   * (`exact`, diagnostic) or 4 characters a token (`estimate`, diagnostic).
   */
  readonly tokenizer?: "default" | "estimate" | "exact"
  /** Where to write the ReplayResult as JSON. */
  readonly out: string
}

export interface ReplayResult {
  readonly size: number
  readonly plugin: "noop" | "real"
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
   * Where the rest of the replay's wall time went, ms: generating the session, fresh copies, unit accounting, the
   * session.idle hook, the pause after each request (the plugin's background work: state written behind), forced
   * collections, counting tokens at the end.
   */
  readonly phasesMs: Readonly<Record<"generate" | "copy" | "accounting" | "idle" | "background" | "gc" | "tokenize", number>>
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
  readonly accounting: Accounting | undefined
}

export interface Accounting {
  readonly priced: Priced
  /** Tokens of what the plugin added (tool definitions, system section, synthetic messages), summed over requests. */
  readonly addedTokens: number
  /** Tokens of the session's last request. */
  readonly lastContextTokens: number
  /** Requests larger than the model's context window (estimated from characters). */
  readonly requestsOverWindow: number
}

const model = {
  id: "claude-sonnet-4-5",
  providerID: "anthropic",
  name: "Claude Sonnet 4.5",
  limit: { context: 200_000, output: 64_000 }
}

interface Hooks {
  readonly "experimental.chat.messages.transform"?: (input: unknown, output: { messages: Array<unknown> }) => Promise<void>
  readonly "experimental.chat.system.transform"?: (input: unknown, output: { system: Array<string> }) => Promise<void>
  readonly "chat.message"?: (input: unknown, output: unknown) => Promise<void>
  readonly event?: (input: unknown) => Promise<void>
  readonly tool?: Record<string, { description: string; args: Record<string, unknown> }>
}

interface Inspected {
  readonly pruned: number | undefined
  readonly prunedBy: Record<string, number> | undefined
  readonly notes: number | undefined
  readonly toasts: Array<string>
}

interface Plugin {
  readonly hooks: Hooks
  /** Sets the time the plugin reads from its Clock: the replayed request's `time.created`, not the wall clock. */
  readonly setTime: (ms: number) => void
  readonly toolDefinitions: ReadonlyArray<readonly [string, string]>
  readonly inspect: () => Promise<Inspected>
  readonly dispose: () => Promise<void>
}

const noopPlugin = (): Plugin => ({
  setTime: () => {},
  hooks: {
    "experimental.chat.messages.transform": async () => {},
    "experimental.chat.system.transform": async () => {},
    "chat.message": async () => {},
    event: async () => {}
  },
  toolDefinitions: [],
  inspect: async () => ({ pruned: undefined, prunedBy: undefined, notes: undefined, toasts: [] }),
  dispose: async () => {}
})

const realPlugin = async (
  harness: string,
  config: Record<string, unknown>,
  tokenizer: "default" | "estimate" | "exact"
): Promise<Plugin> => {
  const h = await import(harness)
  const root = mkdtempSync(join(tmpdir(), "dcp-bench-"))
  mkdirSync(join(root, "config", "opencode"), { recursive: true })
  writeFileSync(join(root, "config", "opencode", "dcp.jsonc"), JSON.stringify(config, null, 2))
  // The production Paths layer over an environment that points at the temp root: the project directory stays the
  // generated one (so paths in tool inputs are project-relative, as in a real session) while config and state live
  // under the temp root, like Paths.layerUnder(root).
  const env = { HOME: root, XDG_CONFIG_HOME: join(root, "config"), XDG_DATA_HOME: join(root, "data") }
  // The replay runs hours of session in seconds. The plugin reads "now" from Effect's Clock (how long since the
  // previous request, i.e. whether the prompt cache is still warm), so it gets the replayed time; sleeping and
  // monotonic time stay real.
  const time = { now: 0 }
  const real = h.Effect.runSync(h.Clock.clockWith((clock: any) => h.Effect.succeed(clock)))
  const replayed = {
    currentTimeMillisUnsafe: () => time.now,
    currentTimeMillis: h.Effect.sync(() => time.now),
    currentTimeNanosUnsafe: () => BigInt(time.now) * 1_000_000n,
    currentTimeNanos: h.Effect.sync(() => BigInt(time.now) * 1_000_000n),
    monotonicTimeNanosUnsafe: () => real.monotonicTimeNanosUnsafe(),
    monotonicTimeNanos: real.monotonicTimeNanos,
    sleep: (duration: unknown) => real.sleep(duration)
  }
  const runtime = h.ManagedRuntime.make(h.compose({
    paths: h.Paths.layer({ directory: projectDir, worktree: projectDir }, env),
    host: h.Host.layerTest({}),
    tokenizer: tokenizer === "estimate"
      ? h.Tokenizer.layerEstimate
      : tokenizer === "exact"
      ? h.Tokenizer.layerExact
      : h.Tokenizer.layer
  }).pipe(h.Layer.provideMerge(h.Layer.succeed(h.Clock.Clock, replayed))))
  const current = await runtime.runPromise(h.Config.use((c: { current: unknown }) => h.Effect.succeed(c.current)))
  const hooks: Hooks = h.makeHooks(runtime, current)
  const schema = h.tool.schema
  const toolDefinitions = Object.entries(hooks.tool ?? {}).map(([name, def]) =>
    [name, JSON.stringify({ description: def.description, input_schema: schema.toJSONSchema(schema.object(def.args)) })] as const
  )
  const attempt = async <A>(program: unknown): Promise<A | undefined> => {
    try {
      return await runtime.runPromise(program)
    } catch {
      return undefined
    }
  }
  return {
    hooks,
    setTime: (ms) => {
      time.now = ms
    },
    toolDefinitions,
    inspect: async () => {
      const reasons = await attempt<Array<string>>(h.SessionStore.use((store: any) =>
        store.use(sessionID, (state: any) => h.Effect.sync(() => [...state.pruned.values()].map((r: any) => String(r.reason))))
      ))
      const prunedBy: Record<string, number> = {}
      for (const reason of reasons ?? []) prunedBy[reason] = (prunedBy[reason] ?? 0) + 1
      const notes = await attempt<ReadonlyArray<unknown>>(h.HostRecorder.use((r: any) => h.Ref.get(r.notes)))
      const toasts = await attempt<ReadonlyArray<{ title?: string; message: string }>>(
        h.HostRecorder.use((r: any) => h.Ref.get(r.toasts))
      )
      return {
        pruned: reasons?.length,
        prunedBy: reasons === undefined ? undefined : prunedBy,
        notes: notes?.length,
        toasts: (toasts ?? []).map((t) => `${t.title ?? ""}: ${t.message}`.replace(/\s+/g, " "))
      }
    },
    dispose: async () => {
      await runtime.dispose()
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

export const replay = async (options: ReplayOptions): Promise<ReplayResult> => {
  const generateStart = performance.now()
  const session = generate({ seed: options.seed, toolCalls: options.size })
  freezeShared(session.messages)
  const generateMs = performance.now() - generateStart
  const setupStart = performance.now()
  const plugin = options.plugin === "real"
    ? await realPlugin(options.harness, options.config, options.tokenizer ?? "default")
    : noopPlugin()
  const setupMs = performance.now() - setupStart
  const { hooks } = plugin

  const sent = new Sent(session.messages, systemPrompt)
  const meter = new CacheMeter()
  const contextChars: Array<number> = []
  const transformMs: Array<number> = []
  const systemMs: Array<number> = []
  let copyMs = 0
  let accountingMs = 0
  let idleMs = 0
  let backgroundMs = 0
  let gcMs = 0
  let coldRequests = 0
  let previousTime: number | undefined
  let liveHeapMB = 0
  const sample = () => {
    const start = performance.now()
    if (collect()) liveHeapMB = Math.max(liveHeapMB, process.memoryUsage().heapUsed / 1024 / 1024)
    gcMs += performance.now() - start
  }
  sample()
  const rssBeforeReplayMB = process.memoryUsage().rss / 1024 / 1024

  for (const [k, request] of session.requests.entries()) {
    plugin.setTime(request.time)
    if (request.user !== undefined) {
      await hooks["chat.message"]?.(
        { sessionID, agent: "build", model: { providerID: model.providerID, modelID: model.id }, messageID: request.user.info.id },
        { message: request.user.info, parts: request.user.parts }
      )
    }
    const copyStart = performance.now()
    const output = { messages: freshCopy(session.messages, request.upTo) as Array<unknown> }
    const system = { system: [...systemPrompt] }
    copyMs += performance.now() - copyStart

    const t0 = performance.now()
    await hooks["experimental.chat.messages.transform"]?.({}, output)
    const t1 = performance.now()
    await hooks["experimental.chat.system.transform"]?.({ sessionID, model }, system)
    const t2 = performance.now()
    transformMs.push(t1 - t0)
    systemMs.push(t2 - t1)

    if (previousTime !== undefined && request.time - previousTime > 300_000) coldRequests++
    previousTime = request.time
    const t3 = performance.now()
    if (options.accounting) {
      meter.record(sent.request(plugin.toolDefinitions, system.system, output.messages as Array<Msg>), request.time)
      contextChars.push(sent.chars)
    }
    const t4 = performance.now()
    accountingMs += t4 - t3
    if (request.endsTurn) await hooks.event?.({ event: { type: "session.idle", properties: { sessionID } } })
    const t5 = performance.now()
    idleMs += t5 - t4
    // Between requests OpenCode waits for the model; background work (state written behind) runs then.
    await tick()
    backgroundMs += performance.now() - t5
    if ((k + 1) % collectEvery === 0) sample()
  }
  sample()
  const peak = peakRssMB()
  const inspected = await plugin.inspect()
  await plugin.dispose()

  let accounting: ReplayResult["accounting"]
  const tokenizeStart = performance.now()
  if (options.accounting) {
    const { countTokens } = await import("gpt-tokenizer/encoding/o200k_base")
    const plain = { disallowedSpecial: new Set<string>() }
    const tokensOf = unitTokens(sent.units, (text) => countTokens(text, plain))
    const priced = meter.priced(tokensOf)
    let addedTokens = 0
    for (const [unit, times] of sent.added) addedTokens += tokensOf(unit) * times
    const lastContextTokens = meter.last.reduce((sum, unit) => sum + tokensOf(unit), 0)
    // Per-request context sizes from characters, at the session's own tokens-per-character rate.
    const perChar = priced.tokens / contextChars.reduce((sum, chars) => sum + chars, 0)
    const overWindow = contextChars.filter((chars) => chars * perChar > model.limit.context).length
    accounting = { priced, addedTokens, lastContextTokens, requestsOverWindow: overWindow }
  }
  const phasesMs = {
    generate: generateMs,
    copy: copyMs,
    accounting: accountingMs,
    idle: idleMs,
    background: backgroundMs,
    gc: gcMs,
    tokenize: performance.now() - tokenizeStart
  }

  return {
    size: options.size,
    plugin: options.plugin,
    requests: session.requests.length,
    toolCalls: session.stats.toolCalls,
    errors: session.stats.errors,
    turns: session.stats.turns,
    coldRequests,
    historyMB: session.stats.chars / 1e6,
    setupMs,
    transformMs,
    systemMs,
    phasesMs,
    rssBeforeReplayMB,
    peakRssMB: peak,
    liveHeapMB,
    pruned: inspected.pruned,
    prunedBy: inspected.prunedBy,
    notes: inspected.notes,
    toasts: inspected.toasts,
    accounting
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const options = JSON.parse(process.argv[2] ?? "{}") as ReplayOptions
  const result = await replay(options)
  writeFileSync(options.out, JSON.stringify(result))
  process.exit(0)
}
