import { NodeFileSystem, NodePath } from "@effect/platform-node"
import { Effect, FileSystem, Layer, type Path } from "effect"
import { compose } from "../../src/layers/main.ts"
import { Host, type HostFixture } from "../../src/services/Host.ts"
import { Paths } from "../../src/services/Paths.ts"
import type { Persistence } from "../../src/services/Persistence.ts"
import { Tokenizer } from "../../src/services/Tokenizer.ts"

export const platform = Layer.mergeAll(NodeFileSystem.layer, NodePath.layer)

/** A temporary directory removed when the test's scope closes. */
export const tempDir = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  return yield* fs.makeTempDirectoryScoped({ prefix: "dcp-test-" })
}).pipe(Effect.provide(NodeFileSystem.layer))

/**
 * The plugin's production graph under `root`, with a scripted host and (unless a test needs exact counts) the fast
 * token estimate; everything else is live.
 */
export const pluginUnder = (
  root: string,
  options: {
    readonly host?: HostFixture
    readonly tokenizer?: Layer.Layer<Tokenizer>
    readonly persistence?: Layer.Layer<Persistence, never, FileSystem.FileSystem | Path.Path | Paths>
  } = {}
) =>
  compose({
    paths: Paths.layerUnder(root),
    host: Host.layerTest(options.host),
    tokenizer: options.tokenizer ?? Tokenizer.layerEstimate,
    persistence: options.persistence
  })
