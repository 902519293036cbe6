import type { Hooks } from "@opencode-ai/plugin"
import { homedir } from "node:os"
import { Clock, Effect, FileSystem, Layer, ManagedRuntime, Option, Path, Predicate, Schema } from "effect"
import { reportedCacheUsage } from "../commands/breakdown.ts"
import type { PluginConfig } from "../config/schema.ts"
import { isReason, reasonEnabled, reasonName, reasons } from "../engine/reasons.ts"
import { makeHooks } from "../hooks/index.ts"
import { compose, type Services } from "../layers/main.ts"
import { type PricingName, type PricingProfile, profileFor, profiles } from "../pricing/profiles.ts"
import { Config } from "../services/Config.ts"
import { Host, type Note, type Toast } from "../services/Host.ts"
import { Paths } from "../services/Paths.ts"
import { SessionStore } from "../services/SessionStore.ts"
import { replayedClock } from "./clock.ts"
import type { Msg } from "../host/schema.ts"
import type { Priced } from "./cost.ts"
import { drive, type Driven, type DrivenPlugin, type DriveModel } from "./drive.ts"
import { hostToolDefinitions, standInSystemPrompt } from "./prompt.ts"
import type { Session } from "./session.ts"
import type { Blocks } from "./wire.ts"

/**
 * Replays an exported session request by request through the plugin's production graph and hooks, the way
 * OpenCode would have called them, and measures what each request would have sent with and without the plugin.
 *
 * Isolation: config, state and logs live under a temporary root removed at the end, so the user's real state
 * directory and config directory are never written. The user's config files are read (copied into the temporary
 * root, since the plugin writes a default global config when there is none), unless a `--config` file replaces them.
 * The host is scripted: notes and toasts are recorded, never sent. The plugin's clock reads each request's
 * `time.created`, so prompt-cache expiry and the scheduler see the session's real pauses.
 */

export interface ReplayOptions {
  /** A config file used instead of the user's config files. */
  readonly configFile?: string | undefined
  /** Where the user's config files are found: `HOME`, `XDG_CONFIG_HOME`, `OPENCODE_CONFIG_DIR`. */
  readonly env: Readonly<Record<string, string | undefined>>
  /** The model's context window, which the export does not record. */
  readonly contextWindow: number
  /** Called as the replay goes: after every request of each of the three runs (see `Analysis.sent`). */
  readonly onProgress?: ((run: RunName, done: number, total: number) => void) | undefined
}

/** The three replays of a session: OpenCode alone, OpenCode with its own `compaction.prune`, and with the plugin. */
export type RunName = "withoutPlugin" | "withOpenCodePrune" | "withPlugin"

/** A `--config` file that cannot be read, and other input problems found while setting up. */
class BadConfig extends Schema.TaggedError<BadConfig>()("BadConfig", { message: Schema.String }) {}

/** A hook or the plugin's runtime failed outside the plugin's own fail-open handling: a bug, reported in one line. */
class ReplayFailed extends Schema.TaggedError<ReplayFailed>()("ReplayFailed", { message: Schema.String }) {}

/** One replay of the session, priced. */
export interface Run {
  /** By pricing profile name. */
  readonly priced: Readonly<Record<string, Priced>>
  /** Compactions OpenCode would have made when a request reached the window (each one a summary request). */
  readonly compactions: number
  /** Outputs OpenCode's own `compaction.prune` cleared. */
  readonly openCodePruned: number
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
    /** Problems the plugin found in them (it shows these as toasts), one line each. */
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

interface Recorded {
  readonly notes: Array<Note>
  readonly toasts: Array<Toast>
  readonly logs: Array<string>
}

/** The host as far as the plugin talks to it: this session only, with everything it would send recorded. */
const recordingHost = (session: Session, recorded: Recorded) =>
  Layer.succeed(
    Host,
    Host.of({
      session: (id) =>
        Effect.succeed({ id, parentID: id === session.info.id ? session.info.parentID ?? undefined : undefined }),
      messages: (id) => Effect.succeed(id === session.info.id ? session.messages : []),
      notify: (note) =>
        Effect.sync(() => {
          recorded.notes.push(note)
          return { info: { id: `msg_note_${recorded.notes.length}`, role: "user" }, parts: [] }
        }),
      busy: () => Effect.succeed(false),
      announceIdle: () => Effect.void,
      remove: () => Effect.void,
      toast: (toast) => Effect.sync(() => void recorded.toasts.push(toast)),
      log: (level, message) => Effect.sync(() => void recorded.logs.push(`${level}: ${message}`))
    })
  )

const configNames = ["dcp.jsonc", "dcp.json"] as const

/**
 * The config directories the plugin reads, set up under `root`: the global one holds a copy of the user's global
 * file (or of `--config`); `$OPENCODE_CONFIG_DIR` and the project's `.opencode/` are read where they are (the plugin
 * only reads them). Returns the copies' origins, to name the user's files in the report.
 */
const prepareConfig = Effect.fnUntraced(function*(root: string, directory: string | undefined, options: ReplayOptions) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const globalConfigDir = path.join(root, "config", "opencode")
  const emptyProject = path.join(root, "project")
  yield* fs.makeDirectory(globalConfigDir, { recursive: true })
  yield* fs.makeDirectory(emptyProject, { recursive: true })
  const origins = new Map<string, string>()
  if (options.configFile !== undefined) {
    const file = path.resolve(options.configFile)
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError((error) =>
        new BadConfig({
          message: `cannot read the --config file ${options.configFile}: ${
            error.reason._tag === "NotFound"
              ? "no such file"
              : error.reason._tag === "BadResource"
              ? "not a file"
              : error.message
          }`
        })
      )
    )
    const copy = path.join(globalConfigDir, configNames[0])
    yield* fs.writeFileString(copy, text)
    origins.set(copy, file)
    return { globalConfigDir, envConfigDir: Option.none<string>(), projectDir: emptyProject, origins }
  }
  const env = (name: string) => {
    const value = options.env[name]
    return value === undefined || value === "" ? undefined : value
  }
  // Found the way the plugin finds it (src/services/Paths.ts): $XDG_CONFIG_HOME, else ~/.config.
  const configHome = env("XDG_CONFIG_HOME") ?? path.join(env("HOME") ?? homedir(), ".config")
  for (const name of configNames) {
    const file = path.join(configHome, "opencode", name)
    const text = yield* Effect.option(fs.readFileString(file))
    if (Option.isNone(text)) continue
    const copy = path.join(globalConfigDir, name)
    yield* fs.writeFileString(copy, text.value)
    origins.set(copy, file)
    break
  }
  const isDirectory = (dir: string) =>
    fs.stat(dir).pipe(Effect.map((info) => info.type === "Directory"), Effect.orElseSucceed(() => false))
  const projectDir = directory !== undefined && (yield* isDirectory(directory)) ? directory : emptyProject
  return { globalConfigDir, envConfigDir: Option.fromNullishOr(env("OPENCODE_CONFIG_DIR")), projectDir, origins }
})

/** The git root OpenCode reported for the session (`path.root` of an assistant message), else its directory. */
const worktreeOf = (session: Session): string | undefined => {
  for (const message of session.messages) {
    const root = Predicate.isObject(message.info.path) ? message.info.path.root : undefined
    if (typeof root === "string" && root !== "" && root !== "/") return root
  }
  return session.info.directory
}

/**
 * A user message someone typed. Not: notes (ignored text, such as the plugin's own prune notes), OpenCode's own
 * messages (synthetic text, such as "continue" after a compaction), and compaction requests.
 */
const isPrompt = (message: Msg): boolean =>
  !message.parts.some((part) => part.type === "compaction") &&
  message.parts.some((part) =>
    part.type === "file" || (part.type === "text" && part.ignored !== true && part.synthetic !== true)
  )

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
    const tokens = tokensOf(blocks.system(text)) + tokensOf(blocks.boundary("system"))
    if (base.system.has(text)) system += tokens
    else plugin += tokens
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
  openCodePruned: driven.openCodePruned
})

const failed = (what: string) => (cause: unknown) =>
  new ReplayFailed({ message: `${what}: ${cause instanceof Error ? cause.message : String(cause)}` })

/** Where the user's config lives, set up under a temporary root; the plugin's production graph over it. */
export const replay = Effect.fn("analysis.replay")(function*(session: Session, options: ReplayOptions) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const root = yield* fs.makeTempDirectoryScoped({ prefix: "dcp-analyse-" })
  const sessionID = session.info.id
  const { messages, infos } = session
  const worktree = worktreeOf(session)
  const setup = yield* prepareConfig(root, session.info.directory, options)

  const recorded: Recorded = { notes: [], toasts: [], logs: [] }
  const time = { now: infos[0]!.time.created }
  const clock = replayedClock(yield* Clock.clockWith((clock) => Effect.succeed(clock)), time)
  const paths = Paths.of({
    globalConfigDir: setup.globalConfigDir,
    envConfigDir: setup.envConfigDir,
    projectDir: setup.projectDir,
    worktree: worktree ?? setup.projectDir,
    stateDir: path.join(root, "data", "opencode", "storage", "plugin", "dcp"),
    logDir: path.join(setup.globalConfigDir, "logs", "dcp")
  })
  const layer = compose({ paths: Layer.succeed(Paths, paths), host: recordingHost(session, recorded) }).pipe(
    Layer.provideMerge(Layer.succeed(Clock.Clock, clock))
  )
  const runtime: ManagedRuntime.ManagedRuntime<Services, never> = yield* Effect.acquireRelease(
    Effect.sync(() => ManagedRuntime.make(layer)),
    (runtime) => runtime.disposeEffect
  )
  const run = <A>(what: string, program: Effect.Effect<A, unknown, Services>) =>
    Effect.tryPromise({ try: () => runtime.runPromise(program), catch: failed(what) })

  const config = yield* run("loading the config", Config.use((config) => Effect.succeed(config)))
  const current = config.current
  const hooks: Hooks | undefined = current.enabled ? makeHooks(runtime, current) : undefined

  const assistants = infos.filter((info) => info.role === "assistant")
  const lastModel = assistants.at(-1)
  const model: DriveModel = {
    providerID: lastModel?.providerID ?? "anthropic",
    modelID: lastModel?.modelID ?? "unknown",
    context: options.contextWindow,
    output: 32_000
  }
  const sessionProfile = profileFor(model)
  const priced: Array<PricingProfile> = [profiles.anthropic, profiles.openai]
  if (!priced.includes(sessionProfile)) priced.push(sessionProfile)
  const { countTokens } = yield* Effect.promise(() => import("gpt-tokenizer/encoding/o200k_base"))
  const plain = { disallowedSpecial: new Set<string>() }
  // One count per distinct text across the three runs.
  const counted = new Map<string, number>()
  const count = (text: string) => {
    let tokens = counted.get(text)
    if (tokens === undefined) {
      tokens = countTokens(text, plain)
      counted.set(text, tokens)
    }
    return tokens
  }
  const base = standInSystemPrompt(session.info.directory ?? setup.projectDir, time.now)
  const alone: DrivenPlugin = { hooks: undefined, setTime: () => {} }
  const driveWith = (name: RunName, plugin: DrivenPlugin, openCodePrune: boolean) =>
    Effect.tryPromise({
      try: () =>
        drive({
          sessionID,
          messages,
          plugin,
          system: base,
          hostTools: hostToolDefinitions,
          model,
          profiles: priced,
          count,
          compactAtOverflow: true,
          openCodePrune,
          directory: setup.projectDir,
          onProgress: (done, total) => options.onProgress?.(name, done, total)
        }),
      catch: failed(`replaying the session (${name})`)
    })
  const withoutPlugin = yield* driveWith("withoutPlugin", alone, false)
  const withOpenCodePrune = yield* driveWith("withOpenCodePrune", alone, true)
  const withPlugin = yield* driveWith("withPlugin", {
    hooks,
    setTime: (ms) => {
      time.now = ms
    }
  }, false)

  const state = yield* run(
    "reading the session state",
    SessionStore.use((store) =>
      store.use(sessionID, (state) =>
        Effect.succeed({
          subAgent: state.isSubAgent,
          byReason: state.stats.byReason,
          calls: state.stats.calls,
          tokens: state.stats.tokens,
          pruned: new Set(state.pruned.keys())
        }))
    )
  )
  let addedTokens = 0
  for (const [block, times] of withPlugin.builder.added) addedTokens += withPlugin.tokensOf(block) * times
  // Disposing ends the plugin's background work and flushes its batched log lines into `recorded`.
  yield* runtime.disposeEffect

  const last = withPlugin.last
  if (last === undefined) {
    return yield* new ReplayFailed({ message: "the session has no request other than the compaction summariser's" })
  }
  const stored = {
    system: new Set(base),
    tools: new Set(hostToolDefinitions.map(([name]) => name)),
    messageIds: new Set(messages.map((message) => message.info.id))
  }
  const { builder, tokensOf } = withPlugin
  const finalRequest = {
    request: last.index + 1,
    withPlugin: composition(builder.blocks, tokensOf, stored, last),
    withoutPlugin: composition(builder.blocks, tokensOf, stored, {
      definitions: hostToolDefinitions,
      system: base,
      messages: last.visible
    }),
    prunedCalls: last.visible.flatMap((m) =>
      m.parts
    ).filter((part) => part.type === "tool" && typeof part.callID === "string" && state.pruned.has(part.callID)).length
  }

  const known = new Set<string>(reasons)
  const shown = [
    ...reasons,
    ...Object.keys(state.byReason).filter((reason) =>
      !known.has(reason)
    )
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
  const origins = setup.origins
  const files = config.files.flatMap((file) => {
    const origin = origins.get(file)
    if (origin !== undefined) return [origin]
    // The default global config the plugin writes when the user has none: built-in defaults.
    return file.startsWith(root) ? [] : [file]
  })
  const rename = (text: string) => [...origins].reduce((out, [copy, origin]) => out.split(copy).join(origin), text)
  return {
    session: {
      id: sessionID,
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
      explicit: options.configFile !== undefined,
      problems: recorded.toasts.map((toast) =>
        rename(`${toast.title ?? ""}: ${toast.message}`).replace(/\s*\n\s*/g, " ")
      ),
      enabled: current.enabled,
      cacheMode: current.cache.mode,
      contextWindow: options.contextWindow,
      switchedOff: pruned.filter((row) => !row.enabled).map((row) => row.reason)
    },
    finalRequest,
    pruned,
    prunedTotal: { calls: state.calls, tokens: state.tokens },
    modelCalls: withPlugin.modelCalls,
    sent: {
      requests: withoutPlugin.requests,
      profiles: priced.map((profile) => profile.name),
      sessionProfile: sessionProfile.name,
      withoutPlugin: runOf(withoutPlugin),
      withOpenCodePrune: runOf(withOpenCodePrune),
      withPlugin: runOf(withPlugin),
      addedTokens,
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
  } satisfies Analysis
})
