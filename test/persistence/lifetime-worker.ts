/**
 * One of two OpenCode processes sharing a state directory: `node lifetime-worker.ts <root> <count> <session>`. Builds
 * the live Persistence layer, prints "ready", waits for a line on stdin (so both processes start updating at the same
 * moment), then records a session's growing totals <count> times (1 call and 10 tokens, then 2 and 20, ...): the session
 * `<session>` each time when it is given, else a session of its own (named after its PID) each time. Prints its start
 * and end time as JSON. After its first update it leaves a mark under `<root>/started/`, and it ends only once the
 * other process has left one: the two processes' updates overlap however the machine schedules them.
 */
import { NodeFileSystem, NodePath } from "@effect/platform-node"
import { Effect, FileSystem, Layer, Schedule } from "effect"
import { createInterface } from "node:readline"
import { Persistence } from "../../src/services/Persistence.ts"
import { pathsUnder } from "../support/paths.ts"
import { onStillClock } from "../support/stillClock.ts"

const [root, count, session] = process.argv.slice(2)
if (root === undefined || count === undefined) throw new Error("usage: lifetime-worker.ts <root> <count> [session]")

const live = Persistence.layer.pipe(
  Layer.provide(pathsUnder(root)),
  Layer.provideMerge(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer))
)
const marks = `${root}/started`

const go = Effect.callback<void>((resume) => {
  const lines = createInterface({ input: process.stdin })
  lines.once("line", () => {
    lines.close()
    resume(Effect.void)
  })
})

const program = Effect.gen(function*() {
  const persistence = yield* Persistence
  const fs = yield* FileSystem.FileSystem
  process.stdout.write("ready\n")
  yield* go
  const start = Date.now()
  for (let i = 1; i <= Number(count); i++) {
    const sessionID = session ?? `ses_${process.pid}_${i}`
    const calls = session === undefined ? 1 : i
    yield* persistence.recordLifetime(
      new Map([[sessionID, { calls, tokens: 10 * calls, byReason: { worker: { calls, tokens: 10 * calls } } }]])
    )
    if (i === 1) {
      yield* fs.makeDirectory(marks, { recursive: true })
      yield* fs.writeFileString(`${marks}/${process.pid}`, "")
    }
  }
  yield* fs.readDirectory(marks).pipe(
    Effect.repeat({
      until: (names) => names.some((name) => name !== String(process.pid)),
      schedule: Schedule.spaced("5 millis")
    })
  )
  process.stdout.write(`${JSON.stringify({ start, end: Date.now() })}\n`)
})

// On the still clock, a worker waits for the other to release the lock however long a busy machine makes that take:
// the test is about lost updates, not about how long a lock is held.
Effect.runPromise(onStillClock(program.pipe(Effect.provide(live)))).catch((error) => {
  process.stderr.write(`${String(error)}\n`)
  process.exit(1)
})
