import { Effect, FileSystem, Option, Path, Predicate, Schema } from "effect"
import { parseConfig } from "../config/load.ts"
import { type PricingProfile, profileFor, profiles } from "../pricing/profiles.ts"
import { configFileNames } from "../services/Config.ts"
import { Paths } from "../services/Paths.ts"
import { o200kCount } from "../simulator/cost.ts"
import { drive, type DrivenPlugin, noPlugin } from "../simulator/drive.ts"
import type { DriveModel } from "../simulator/opencode.ts"
import { replayedPlugin } from "../simulator/plugin.ts"
import { hostToolDefinitions, standInSystemPrompt } from "../simulator/prompt.ts"
import { analysisOf, type RunName } from "./analysis.ts"
import type { Session } from "./session.ts"

/**
 * Replays an exported session request by request through the plugin's production graph and hooks (built as in
 * ../simulator/plugin.ts, driven by ../simulator/drive.ts), the way OpenCode would have called them, and measures what each request would
 * have sent with and without the plugin; ./report.ts makes the analysis of it.
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
  /** Edits of masked files replayed as recorded, with no re-read first (see `DriveOptions.reReadMasked`). */
  readonly blindEdits?: boolean | undefined
  /** Called as the replay goes: after every request of each of the three runs (see `Analysis.sent`). */
  readonly onProgress?: ((run: RunName, done: number, total: number) => void) | undefined
}

/** A `--config` file that cannot be read or used, and other input problems found while setting up. */
class BadConfig extends Schema.TaggedError<BadConfig>()("BadConfig", { message: Schema.String }) {}

/** A hook or the plugin's runtime failed outside the plugin's own fail-open handling: a bug, reported in one line. */
class ReplayFailed extends Schema.TaggedError<ReplayFailed>()("ReplayFailed", { message: Schema.String }) {}

/**
 * The config the plugin reads: a copy of the user's global file (or of `--config`), written under the replay's
 * root; `$OPENCODE_CONFIG_DIR` and the project's `.opencode/` are read where they are (the plugin only reads them).
 */
const userConfig = Effect.fnUntraced(function*(options: ReplayOptions) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
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
    // A file the plugin would ignore whole leaves nothing of what was asked for: a failure, as a missing file is.
    const loaded = parseConfig(text)
    if (loaded.ignored) {
      return yield* new BadConfig({
        message: `the --config file ${options.configFile} is not usable: ${loaded.problems[0]?.message ?? "unknown"}`
      })
    }
    return { global: Option.some({ text, origin: file }), envConfigDir: undefined }
  }
  // Found the way the plugin finds them, from the user's environment.
  const user = yield* Paths.use(Effect.succeed).pipe(Effect.provide(Paths.layer({ directory: "/" }, options.env)))
  let global = Option.none<{ readonly text: string; readonly origin: string }>()
  for (const name of configFileNames) {
    const file = path.join(user.globalConfigDir, name)
    const text = yield* Effect.option(fs.readFileString(file))
    if (Option.isNone(text)) continue
    global = Option.some({ text: text.value, origin: file })
    break
  }
  return { global, envConfigDir: Option.getOrUndefined(user.envConfigDir) }
})

/** The git root OpenCode reported for the session (`path.root` of an assistant message), else its directory. */
const worktreeOf = (session: Session): string | undefined => {
  for (const message of session.messages) {
    const root = Predicate.isObject(message.info.path) ? message.info.path.root : undefined
    if (typeof root === "string" && root !== "" && root !== "/") return root
  }
  return session.info.directory
}

const failed = (what: string) => (cause: unknown) =>
  new ReplayFailed({ message: `${what}: ${cause instanceof Error ? cause.message : String(cause)}` })

/** The session replayed three times under a temporary root (see `RunName`), and the analysis of what was sent. */
export const replay = Effect.fn("analysis.replay")(function*(session: Session, options: ReplayOptions) {
  const fs = yield* FileSystem.FileSystem
  const root = yield* fs.makeTempDirectoryScoped({ prefix: "dcp-analyse-" })
  const sessionID = session.info.id
  const { messages, infos } = session
  const config = yield* userConfig(options)
  // The session's own directory, whether or not it exists here: tool inputs are resolved against it by the rules of
  // the machine the session ran on (engine/pathRules.ts), and nothing under it is written.
  const directory = session.info.directory
  const startTime = infos[0]!.time.created
  const plugin = yield* Effect.acquireRelease(
    Effect.tryPromise({
      try: () =>
        replayedPlugin({
          root,
          directory,
          worktree: worktreeOf(session),
          envConfigDir: config.envConfigDir,
          globalConfig: Option.getOrUndefined(config.global)?.text,
          host: {
            sessions: { [sessionID]: { parentID: session.info.parentID ?? undefined } },
            messages: { [sessionID]: messages }
          },
          startTime
        }),
      catch: failed("loading the config")
    }),
    (plugin) => Effect.promise(plugin.dispose)
  )
  const origins = new Map<string, string>()
  if (Option.isSome(config.global)) origins.set(plugin.globalConfigFile, config.global.value.origin)
  const projectDir = plugin.paths.projectDir

  const lastModel = infos.filter((info) => info.role === "assistant").at(-1)
  const model: DriveModel = {
    providerID: lastModel?.providerID ?? "anthropic",
    modelID: lastModel?.modelID ?? "unknown",
    context: options.contextWindow,
    output: 32_000
  }
  const sessionProfile = profileFor(model)
  const priced: Array<PricingProfile> = [profiles.anthropic, profiles.openai]
  if (!priced.includes(sessionProfile)) priced.push(sessionProfile)
  const exact = yield* Effect.promise(o200kCount)
  // One count per distinct text across the three runs.
  const counted = new Map<string, number>()
  const count = (text: string) => {
    let tokens = counted.get(text)
    if (tokens === undefined) {
      tokens = exact(text)
      counted.set(text, tokens)
    }
    return tokens
  }
  const system = (time: number) => standInSystemPrompt(directory ?? projectDir, time)
  const driveWith = (name: RunName, driven: DrivenPlugin, openCodePrune: boolean) =>
    Effect.tryPromise({
      try: () =>
        drive({
          sessionID,
          messages,
          plugin: driven,
          system,
          hostTools: hostToolDefinitions,
          model,
          profiles: priced,
          count,
          compactAtOverflow: true,
          openCodePrune,
          reReadMasked: options.blindEdits !== true,
          directory: projectDir,
          onProgress: (done, total) => options.onProgress?.(name, done, total)
        }),
      catch: failed(`replaying the session (${name})`)
    })
  const withoutPlugin = yield* driveWith("withoutPlugin", noPlugin, false)
  const withOpenCodePrune = yield* driveWith("withOpenCodePrune", noPlugin, true)
  const withPlugin = yield* driveWith("withPlugin", plugin, false)

  const state = yield* Effect.tryPromise({
    try: () => plugin.outcome(sessionID),
    catch: failed("reading the session state")
  })
  // Disposing ends the plugin's background work and flushes its batched log lines to the recording host.
  yield* Effect.promise(plugin.dispose)

  const last = withPlugin.last
  if (last === undefined) {
    return yield* new ReplayFailed({ message: "the session has no request other than the compaction summariser's" })
  }
  return analysisOf({
    session,
    explicitConfig: options.configFile !== undefined,
    contextWindow: options.contextWindow,
    root,
    origins,
    config: plugin.config,
    runs: { withoutPlugin, withOpenCodePrune, withPlugin },
    profiles: priced,
    sessionProfile,
    reReadMasked: options.blindEdits !== true,
    system: system(last.time),
    count,
    state,
    recorded: plugin.recorded(),
    last
  })
})
