import { NodeFileSystem, NodePath } from "@effect/platform-node"
import { readFileSync } from "node:fs"
import { Clock, Effect, type FileSystem, Layer, type Path } from "effect"
import { Compactor } from "../services/Compactor.ts"
import { Config } from "../services/Config.ts"
import { Host, type HostClient } from "../services/Host.ts"
import { Instructions } from "../services/Instructions.ts"
import { Ledger } from "../services/Ledger.ts"
import { Logger } from "../services/Logger.ts"
import { Notifier } from "../services/Notifier.ts"
import { Paths } from "../services/Paths.ts"
import { Persistence } from "../services/Persistence.ts"
import { Pruner } from "../services/Pruner.ts"
import { Scheduler } from "../services/Scheduler.ts"
import { SessionStore } from "../services/SessionStore.ts"
import { Status } from "../services/Status.ts"
import { Tokenizer } from "../services/Tokenizer.ts"
import { ToolCache } from "../services/ToolCache.ts"

/**
 * The composition root. Leaves (where files live, the host, token counting, the disk) are parameters, so tests
 * build exactly the production graph with one leaf swapped.
 */
export interface Leaves<H = never> {
  readonly paths: Layer.Layer<Paths, never, Path.Path>
  /** The host, possibly with companions (a test host also provides what it recorded). */
  readonly host: Layer.Layer<Host | H>
  readonly tokenizer?: Layer.Layer<Tokenizer> | undefined
  readonly persistence?: Layer.Layer<Persistence, never, FileSystem.FileSystem | Path.Path | Paths> | undefined
}

export const compose = <H = never>(leaves: Leaves<H>) => {
  const base = Layer.mergeAll(leaves.paths, leaves.host).pipe(
    Layer.provideMerge(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer))
  )
  const config = Config.layer.pipe(Layer.provide(Logger.boot), Layer.provideMerge(base))
  const logging = Logger.layer.pipe(Layer.provideMerge(config))
  const storage = Layer.mergeAll(leaves.persistence ?? Persistence.layer, leaves.tokenizer ?? Tokenizer.layer).pipe(
    Layer.provideMerge(logging)
  )
  const books = Layer.mergeAll(
    SessionStore.layer,
    ToolCache.layer,
    Ledger.layer,
    Notifier.layer,
    Scheduler.layer,
    Instructions.layer
  ).pipe(
    Layer.provideMerge(storage)
  )
  const pruner = Layer.mergeAll(Pruner.layer, Compactor.layer).pipe(Layer.provideMerge(books))
  return Status.layer.pipe(Layer.provideMerge(pruner))
}

export type Services = Layer.Success<ReturnType<typeof compose<never>>>

/** The plugin's live graph, for the project OpenCode runs in. */
export const layer = (input: { readonly client: unknown; readonly directory: string; readonly worktree: string }) =>
  compose({
    paths: Paths.layer(input),
    host: Host.layer(input.client as HostClient)
  }).pipe(Layer.provideMerge(testClock(process.env.DCP_TEST_CLOCK_FILE)))

/**
 * A test seam, unset in every real install: `DCP_TEST_CLOCK_FILE` names a file holding milliseconds the plugin adds
 * to the system clock, so the end-to-end tier moves the plugin's time past a prompt cache's TTL instead of waiting
 * for it (test/e2e/support/scenario.ts). Read on each use, synchronously, as Effect's clock is read; no file, no
 * offset. Sleeping and monotonic time stay real.
 */
const testClock = (file: string | undefined) => {
  if (file === undefined) return Layer.empty
  const offset = () => {
    try {
      return Number(readFileSync(file, "utf8")) || 0
    } catch {
      return 0
    }
  }
  return Layer.effect(
    Clock.Clock,
    Effect.map(Clock.clockWith(Effect.succeed), (real): Clock.Clock => ({
      currentTimeMillisUnsafe: () => real.currentTimeMillisUnsafe() + offset(),
      currentTimeMillis: Effect.sync(() => real.currentTimeMillisUnsafe() + offset()),
      currentTimeNanosUnsafe: () => real.currentTimeNanosUnsafe() + BigInt(offset()) * 1_000_000n,
      currentTimeNanos: Effect.sync(() => real.currentTimeNanosUnsafe() + BigInt(offset()) * 1_000_000n),
      monotonicTimeNanosUnsafe: () => real.monotonicTimeNanosUnsafe(),
      monotonicTimeNanos: real.monotonicTimeNanos,
      sleep: (duration) => real.sleep(duration)
    }))
  )
}
