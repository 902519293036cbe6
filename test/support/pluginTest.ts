/**
 * The preamble of a test on the plugin (as OpenCode's `testEffect` is of its tests): a fresh temporary root, the
 * project config written under it, and the production graph over that root with its leaves swapped for test ones.
 */
import { Effect, FileSystem, type Layer, Path } from "effect"
import type { HostFixture } from "../../src/services/Host.ts"
import type { Paths } from "../../src/services/Paths.ts"
import type { Persistence } from "../../src/services/Persistence.ts"
import type { Tokenizer } from "../../src/services/Tokenizer.ts"
import { platform, pluginUnder, tempDir } from "./layers.ts"

/** Writes the project's `.opencode/dcp.jsonc` under `root` (what `pluginUnder(root)` reads last). */
export const projectConfig = (root: string, config: unknown) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const dir = path.join(root, "project", ".opencode")
    yield* fs.makeDirectory(dir, { recursive: true })
    yield* fs.writeFileString(path.join(dir, "dcp.jsonc"), JSON.stringify(config, null, 2))
  }).pipe(Effect.provide(platform), Effect.orDie)

export interface PluginTestOptions {
  /** The project config; without it the plugin runs on its defaults. */
  readonly config?: object | undefined
  /** What the scripted host holds: a function of the root when it names paths under it. */
  readonly host?: HostFixture | ((root: string) => HostFixture) | undefined
  readonly tokenizer?: Layer.Layer<Tokenizer> | undefined
  readonly persistence?: Layer.Layer<Persistence, never, FileSystem.FileSystem | Path.Path | Paths> | undefined
}

/**
 * `body` on the plugin's production graph under a fresh temporary root, removed when the test ends. `body` is a
 * program, or a function of the root when it needs paths under it.
 */
export const pluginTest = <A, E, R>(
  body: Effect.Effect<A, E, R> | ((root: string) => Effect.Effect<A, E, R>),
  options: PluginTestOptions = {}
) =>
  Effect.gen(function*() {
    const root = yield* tempDir
    if (options.config !== undefined) yield* projectConfig(root, options.config)
    const host = typeof options.host === "function" ? options.host(root) : options.host
    const program = Effect.isEffect(body) ? body : body(root)
    return yield* program.pipe(
      Effect.provide(pluginUnder(root, { host, tokenizer: options.tokenizer, persistence: options.persistence }))
    )
  })
