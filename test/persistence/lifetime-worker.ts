/**
 * One of two OpenCode processes sharing a state directory: `node lifetime-worker.ts <root> <count>`. Builds the live
 * Persistence layer, prints "ready", waits for a line on stdin (so both processes start updating at the same moment),
 * adds one call and 10 tokens to the lifetime totals <count> times, then prints its start and end time as JSON.
 */
import { NodeFileSystem, NodePath } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { createInterface } from "node:readline"
import { Persistence } from "../../src/services/Persistence.ts"
import { Paths } from "../../src/services/Paths.ts"

const [root, count] = process.argv.slice(2)
if (root === undefined || count === undefined) throw new Error("usage: lifetime-worker.ts <root> <count>")

const live = Persistence.layer.pipe(
  Layer.provide(Paths.layerUnder(root)),
  Layer.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer))
)

const go = Effect.callback<void>((resume) => {
  const lines = createInterface({ input: process.stdin })
  lines.once("line", () => {
    lines.close()
    resume(Effect.void)
  })
})

const program = Effect.gen(function*() {
  const persistence = yield* Persistence
  process.stdout.write("ready\n")
  yield* go
  const start = Date.now()
  for (let i = 0; i < Number(count); i++) {
    yield* persistence.addToLifetime({
      sessions: 0,
      calls: 1,
      tokens: 10,
      byReason: { worker: { calls: 1, tokens: 10 } }
    })
  }
  process.stdout.write(`${JSON.stringify({ start, end: Date.now() })}\n`)
})

Effect.runPromise(program.pipe(Effect.provide(live))).catch((error) => {
  process.stderr.write(`${String(error)}\n`)
  process.exit(1)
})
