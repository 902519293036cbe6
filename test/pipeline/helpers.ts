/**
 * Shared set-up for the pipeline tests: config files under a test root, the transform as a program that returns
 * what would be sent, snapshots of a session's state, and the real hook functions over a scripted host.
 */
import type { Hooks } from "@opencode-ai/plugin"
import { Effect, Layer, ManagedRuntime, Ref } from "effect"
import { makeHooks } from "../../src/hooks/index.ts"
import { transformOf } from "../support/request.ts"
import { Config } from "../../src/services/Config.ts"
import { type HostFixture, HostRecorder, type Note } from "../../src/services/Host.ts"
import { SessionStore } from "../../src/services/SessionStore.ts"
import type { Tokenizer } from "../../src/services/Tokenizer.ts"
import type { SessionFile } from "../../src/state/schema.ts"
import { toFile } from "../../src/engine/session.ts"
import type { Msg } from "../support/history.ts"
import { pluginUnder, tempDir } from "../support/layers.ts"
import { pluginTest, type PluginTestOptions, projectConfig } from "../support/pluginTest.ts"
import { syntheticId } from "../support/history.ts"

/**
 * These tests are about what the pipeline prunes, not about when the cache scheduler lets automatic prunes reach
 * the request: unless a test says otherwise, prunes apply at once. And the histories re-read files to make
 * duplicates: repeats, pruned at their first send, are off unless a test is about them (test/pipeline/repeats.test.ts).
 */
const immediate = { cache: { mode: "immediate" }, strategies: { repeats: { enabled: false } } } as const

/** `config` over `immediate`, key by key at every depth, as the plugin merges config files. */
const withImmediate = (config: object = {}): object => merged(immediate, config)

const merged = (base: object, over: object): object => {
  const out: Record<string, unknown> = { ...base }
  for (const [key, value] of Object.entries(over)) {
    const current = out[key]
    out[key] = typeof value === "object" && value !== null && !Array.isArray(value) &&
        typeof current === "object" && current !== null && !Array.isArray(current)
      ? merged(current, value)
      : value
  }
  return out
}

/**
 * `pluginUnder(root)` with the project config `withImmediate(config)` written first: for a test that starts the
 * plugin more than once over the same root (a restart); otherwise `pipelineTest`.
 */
export const pipelineUnder = (root: string, config: object = {}, options: PluginUnderOptions = {}) =>
  Layer.unwrap(Effect.as(projectConfig(root, withImmediate(config)), pluginUnder(root, options)))

/** `pluginTest` with the project config `withImmediate(config)`. */
export const pipelineTest = <A, E, R>(
  body: Effect.Effect<A, E, R> | ((root: string) => Effect.Effect<A, E, R>),
  config: object = {},
  options: Omit<PluginTestOptions, "config"> = {}
) => pluginTest(body, { ...options, config: withImmediate(config) })

/** One request through the transform program: mutates `messages` in place, as OpenCode expects, and returns it. */
export const send = <T extends Array<unknown>>(messages: T) => Effect.as(transformOf(messages), messages)

/** A copy of the session's state as it would be written to disk. */
export const stateOf = (sessionID: string) =>
  Effect.gen(function*() {
    const store = yield* SessionStore
    return yield* store.use(sessionID, (state) => Effect.sync((): SessionFile => structuredClone(toFile(state))))
  })

export const notes = Effect.gen(function*() {
  const recorder = yield* HostRecorder
  return yield* Ref.get(recorder.notes)
}) as Effect.Effect<ReadonlyArray<Note>, never, HostRecorder>

/** The text of the synthetic message the transform appended, if any. */
export const tailOf = (messages: ReadonlyArray<unknown>): string | undefined => {
  const last = messages[messages.length - 1] as Msg | undefined
  if (last === undefined || last.info.id !== syntheticId) return undefined
  const part = last.parts[0] as Record<string, any>
  return part.type === "text" ? part.text : part.state.output
}

/** The messages without the synthetic tail. */
export const withoutTail = <T>(messages: ReadonlyArray<T>): Array<T> =>
  tailOf(messages) === undefined ? [...messages] : messages.slice(0, -1)

/** A text as sent with its call's ID tag at its head: the handle discard and extract take. */
export const tagged = (id: number, text: string): string => `[id ${id}]\n${text}`

/**
 * A copy of `messages` with the listed calls' outputs (a failed call's error) tagged with their IDs: what the
 * transform sends for a history in which it prunes nothing.
 */
export const withTags = <T extends ReadonlyArray<Msg>>(messages: T, ids: Readonly<Record<string, number>>): T => {
  const copy = structuredClone(messages)
  for (const message of copy) {
    for (const part of message.parts) {
      const id = ids[String(part.callID)]
      if (part.type !== "tool" || id === undefined) continue
      const state = part.state as Record<string, unknown>
      const key = state.status === "error" ? "error" : "output"
      state[key] = tagged(id, String(state[key]))
    }
  }
  return copy
}

export const idle = (sessionID: string) => ({ event: { type: "session.idle", properties: { sessionID } } as never })

/** Everything `pluginUnder` provides: the plugin's services and the test host's recorder. */
export type PluginServices = Layer.Success<ReturnType<typeof pluginUnder>>

export interface PluginUnderOptions {
  readonly host?: HostFixture
  readonly tokenizer?: Layer.Layer<Tokenizer>
  /** Project config, on top of `immediate`. */
  readonly config?: object
}

/**
 * The real hook functions (`makeHooks`) on a runtime over the production graph under a fresh temporary root with a
 * scripted host, as `src/plugin.ts` builds them, with the project config `withImmediate(options.config)`. `run`
 * executes a program on the same runtime (to inspect services); `call` awaits a hook. The runtime is disposed and
 * the root removed when the test ends.
 */
export const pluginHooks = (options: PluginUnderOptions = {}) =>
  Effect.gen(function*() {
    const root = yield* tempDir
    yield* projectConfig(root, withImmediate(options.config))
    const runtime = yield* Effect.acquireRelease(
      Effect.sync(() => ManagedRuntime.make(pluginUnder(root, options))),
      (runtime) => Effect.promise(() => runtime.dispose())
    )
    const run = <A, E>(program: Effect.Effect<A, E, PluginServices>) =>
      Effect.promise(() => runtime.runPromise(program))
    const config = yield* run(Config.use((config) => Effect.succeed(config.current)))
    const hooks: Hooks = makeHooks(runtime as never, config)
    const call = <A>(f: () => Promise<A>) => Effect.promise(f)
    /** Rewrites the project's config file while the plugin runs, as a user editing it would. */
    const editConfig = (next: object) => projectConfig(root, withImmediate(next))
    return { hooks, run, call, config, editConfig }
  })

/**
 * A Claude model as OpenCode hands it to the system transform, served through `@ai-sdk/anthropic`: one the plugin keeps
 * a cache breakpoint of its own for (src/engine/anchor.ts).
 */
export const claude = {
  providerID: "anthropic",
  id: "claude-sonnet-4-5",
  api: { id: "claude-sonnet-4-5", npm: "@ai-sdk/anthropic" },
  limit: { context: 200_000, output: 32_000 }
}
