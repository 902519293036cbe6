/**
 * An OpenCode process caught in the middle of an atomic write: `node stalled-worker.ts <root> session|status|lifetime`.
 * Builds the live Persistence layer over a file system whose `rename` never completes, starts saving a session
 * ("session"), a status for the terminal UI ("status") or adding to the lifetime totals ("lifetime", which takes the
 * lifetime lock first), and prints "ready"
 * once the write has reached the rename: its temporary is written and flushed, and (for "lifetime") the lock is held.
 * It then waits for ever, for the test to kill it (a crash at the worst moment) or to leave it running.
 */
import { NodeFileSystem, NodePath } from "@effect/platform-node"
import { Deferred, Effect, FileSystem, Layer } from "effect"
import { Persistence } from "../../src/services/Persistence.ts"
import { sampleSession, sampleStatus } from "./support.ts"
import { pathsUnder } from "../support/paths.ts"

const [root, what] = process.argv.slice(2)
if (root === undefined || (what !== "session" && what !== "status" && what !== "lifetime")) {
  throw new Error("usage: stalled-worker.ts <root> session|status|lifetime")
}

const program = Effect.gen(function*() {
  const reached = yield* Deferred.make<void>()
  const renameStalls = Layer.effect(
    FileSystem.FileSystem,
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      return { ...fs, rename: () => Deferred.succeed(reached, undefined).pipe(Effect.andThen(Effect.never)) }
    })
  ).pipe(Layer.provide(NodeFileSystem.layer))
  const live = Persistence.layer.pipe(
    Layer.provide(pathsUnder(root)),
    Layer.provide(Layer.mergeAll(renameStalls, NodePath.layer))
  )
  const write = Persistence.use((persistence) =>
    what === "session"
      ? persistence.save(sampleSession("ses_stalled"))
      : what === "status"
      ? persistence.saveStatus(sampleStatus("ses_stalled"))
      : persistence.recordLifetime(new Map([["ses_stalled", { calls: 1, tokens: 10, byReason: {} }]]))
  ).pipe(Effect.provide(live))
  yield* Effect.forkChild(write)
  yield* Deferred.await(reached)
  process.stdout.write("ready\n")
  // A fiber waiting for ever does not keep Node's event loop alive; a timer does.
  setInterval(() => undefined, 60_000)
  return yield* Effect.never
})

Effect.runPromise(program).catch((error) => {
  process.stderr.write(`${String(error)}\n`)
  process.exit(1)
})
