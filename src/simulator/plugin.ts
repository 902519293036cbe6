/**
 * The plugin as a replay runs it, for the offline analyser and the benchmark alike: the production graph (`compose`)
 * with the production `Paths` and `Config` layers over a temporary root, the recording host of tests
 * (`Host.layerTest`: notes, toasts and logs are recorded, never sent), and Effect's clock set by the driver.
 */
import type { Hooks } from "@opencode-ai/plugin"
import { mkdir, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { Clock, Effect, Layer, ManagedRuntime, Ref } from "effect"
import { makeHooks } from "../hooks/index.ts"
import { compose, type Services } from "../layers/main.ts"
import { Config } from "../services/Config.ts"
import { Host, type HostFixture, HostRecorder, type Note, type Toast } from "../services/Host.ts"
import { Paths } from "../services/Paths.ts"
import { SessionStore } from "../services/SessionStore.ts"
import type { Tokenizer } from "../services/Tokenizer.ts"
import { replayedClock } from "./clock.ts"
import type { DrivenPlugin } from "./drive.ts"

export interface ReplayedPluginOptions {
  /** An existing directory the caller owns and removes: config under `config/`, state under `data/`. */
  readonly root: string
  /** The project directory (it need not exist); undefined: an empty `project/` under the root. */
  readonly directory?: string | undefined
  /** The git root; undefined, `""` or `"/"`: the project directory. */
  readonly worktree?: string | undefined
  /** `$OPENCODE_CONFIG_DIR`, read where it is. */
  readonly envConfigDir?: string | undefined
  /** Text of the global config file, written under the root; undefined: the plugin writes its default one. */
  readonly globalConfig?: string | undefined
  /** What the host knows of sessions and their messages. */
  readonly host?: HostFixture
  /** Default: the production one. */
  readonly tokenizer?: Layer.Layer<Tokenizer> | undefined
  /** The clock's time (ms) until the driver first sets it. */
  readonly startTime?: number
}

export interface Recorded {
  readonly notes: ReadonlyArray<Note>
  readonly toasts: ReadonlyArray<Toast>
  /** `level: message`, in order. */
  readonly logs: ReadonlyArray<string>
}

/** The plugin's state of a session at the end of a replay, as the analyser and the benchmark report it. */
export interface SessionOutcome {
  readonly subAgent: boolean
  /** Calls pruned by reason (strategy or tool), and their tokens per request. */
  readonly byReason: Readonly<Record<string, { readonly calls: number; readonly tokens: number }>>
  readonly calls: number
  readonly tokens: number
  /** Pruned calls now: call ID -> the reason recorded. */
  readonly pruned: ReadonlyMap<string, string>
}

export interface ReplayedPlugin extends DrivenPlugin {
  readonly config: Config["Service"]
  readonly paths: Paths["Service"]
  /** Where `globalConfig` was written. */
  readonly globalConfigFile: string
  readonly run: <A, E>(program: Effect.Effect<A, E, Services | HostRecorder>) => Promise<A>
  readonly outcome: (sessionID: string) => Promise<SessionOutcome>
  /** What the plugin sent the host so far; after `dispose`, everything (its batched log lines are flushed then). */
  readonly recorded: () => Recorded
  /** Ends the plugin's background work. */
  readonly dispose: () => Promise<void>
}

/** Builds the plugin's runtime, loads its config and makes its hooks (none when the config disables it). */
export const replayedPlugin = async (options: ReplayedPluginOptions): Promise<ReplayedPlugin> => {
  const { root } = options
  const configHome = join(root, "config")
  const globalConfigFile = join(configHome, "opencode", "dcp.jsonc")
  await mkdir(join(configHome, "opencode"), { recursive: true })
  if (options.globalConfig !== undefined) await writeFile(globalConfigFile, options.globalConfig)
  const directory = options.directory ?? join(root, "project")
  if (options.directory === undefined) await mkdir(directory, { recursive: true })
  // The production Paths layer over an environment that points at the root, like Paths.layerUnder(root), but with
  // the replayed project directory (so paths in tool inputs are shown as in the real session).
  const env = {
    HOME: root,
    XDG_CONFIG_HOME: configHome,
    XDG_DATA_HOME: join(root, "data"),
    OPENCODE_CONFIG_DIR: options.envConfigDir
  }
  const time = { now: options.startTime ?? 0 }
  const clock = replayedClock(Effect.runSync(Clock.clockWith(Effect.succeed)), time)
  const runtime = ManagedRuntime.make(
    compose({
      paths: Paths.layer({ directory, worktree: options.worktree }, env),
      host: Host.layerTest(options.host),
      tokenizer: options.tokenizer
    }).pipe(Layer.provideMerge(Layer.succeed(Clock.Clock, clock)))
  )
  const services = Effect.gen(function*() {
    return { config: yield* Config, paths: yield* Paths, recorder: yield* HostRecorder }
  })
  const { config, paths, recorder } = await runtime.runPromise(services).catch(async (error: unknown) => {
    await runtime.dispose()
    throw error
  })
  const current = config.current
  return {
    hooks: current.enabled ? makeHooks(runtime, current) as Hooks : undefined,
    setTime: (ms) => {
      time.now = ms
    },
    compactionsAsked: () => Effect.runSync(Ref.getAndSet(recorder.compactions, [])).length,
    config,
    paths,
    globalConfigFile,
    run: (program) => runtime.runPromise(program),
    outcome: (sessionID) =>
      runtime.runPromise(SessionStore.use((store) =>
        store.use(sessionID, (state) =>
          Effect.sync(() => ({
            subAgent: state.isSubAgent,
            byReason: state.stats.byReason,
            calls: state.stats.calls,
            tokens: state.stats.tokens,
            pruned: new Map([...state.pruned].map(([callID, record]) => [callID, String(record.reason)]))
          })))
      )),
    recorded: () => ({
      notes: Effect.runSync(Ref.get(recorder.notes)),
      toasts: Effect.runSync(Ref.get(recorder.toasts)),
      logs: Effect.runSync(Ref.get(recorder.logs)).map(({ level, message }) => `${level}: ${message}`)
    }),
    dispose: () => runtime.dispose()
  }
}
