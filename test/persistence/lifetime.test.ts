import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, FileSystem, Layer } from "effect"
import { NodeFileSystem } from "@effect/platform-node"
import { emptyLifetime, lifetimeFileName, Persistence } from "../../src/services/Persistence.ts"
import { sessionIdProblem } from "../../src/host/sessionId.ts"
import type { LifetimeDelta } from "../../src/state/schema.ts"
import { listTree, onDisk, persistenceUnder, platform, sampleSession, tempRoot, withCapturedLogs } from "./support.ts"
import { spawnLifetimeWorker } from "./workers.ts"

const delta = (overrides: Partial<LifetimeDelta> = {}): LifetimeDelta => ({
  sessions: 0,
  calls: 2,
  tokens: 300,
  byReason: { deduplication: { calls: 2, tokens: 300 } },
  ...overrides
})

describe("Persistence.layer: lifetime statistics", () => {
  it.effect("lifetime is zero before anything was recorded, and reading it creates no file", () =>
    onDisk(({ root }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        assert.deepStrictEqual(yield* persistence.lifetime, emptyLifetime)
        assert.deepStrictEqual(yield* listTree(root), [])
      })
    ))

  it.effect("addToLifetime adds calls, tokens and each reason's tally, and returns the new totals", () =>
    onDisk(() =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        yield* persistence.addToLifetime(delta())
        const totals = yield* persistence.addToLifetime(delta({
          calls: 3,
          tokens: 50,
          byReason: { deduplication: { calls: 1, tokens: 20 }, discard: { calls: 2, tokens: 30 } }
        }))
        assert.strictEqual(totals.calls, 5)
        assert.strictEqual(totals.tokens, 350)
        assert.deepStrictEqual(totals.byReason, {
          deduplication: { calls: 3, tokens: 320 },
          discard: { calls: 2, tokens: 30 }
        })
        assert.deepStrictEqual(yield* persistence.lifetime, totals)
      })
    ))

  it.effect("sessions are counted from the deltas that add them", () =>
    onDisk(() =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        yield* persistence.addToLifetime(delta({ sessions: 1 }))
        yield* persistence.addToLifetime(delta())
        yield* persistence.addToLifetime(delta({ sessions: 1 }))
        assert.strictEqual((yield* persistence.lifetime).sessions, 2)
      })
    ))

  it.effect("totals survive a restart (a new layer over the same directory)", () =>
    Effect.gen(function*() {
      const { root } = yield* tempRoot
      yield* Persistence.use((p) => p.addToLifetime(delta())).pipe(Effect.provide(persistenceUnder(root)))
      const totals = yield* Persistence.use((p) => p.lifetime).pipe(Effect.provide(persistenceUnder(root)))
      assert.strictEqual(totals.tokens, 300)
    }).pipe(Effect.provide(platform)))

  it.effect("estimated token figures are rounded and negative ones ignored, so the file stays valid", () =>
    onDisk(() =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        yield* persistence.addToLifetime(delta({ calls: 1, tokens: 10.6, byReason: { x: { calls: -1, tokens: 2.2 } } }))
        const totals = yield* persistence.lifetime
        assert.strictEqual(totals.tokens, 11)
        assert.deepStrictEqual(totals.byReason, { x: { calls: 0, tokens: 2 } })
      })
    ))

  it.effect("the lifetime file name can never be a session file name", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        assert.isDefined(sessionIdProblem(lifetimeFileName.replace(/\.json$/, "")))
        const error = yield* Effect.flip(persistence.load(lifetimeFileName.replace(/\.json$/, "")))
        assert.strictEqual(error._tag, "InvalidSessionId")

        yield* persistence.addToLifetime(delta())
        for (const id of ["lifetime", "lifetime_stats", "lifetime-stats"]) yield* persistence.save(sampleSession(id))
        assert.strictEqual((yield* persistence.lifetime).tokens, 300)
        assert.deepStrictEqual(yield* listTree(stateDir), [
          "lifetime-stats.json",
          "lifetime.json",
          "lifetime.stats.json",
          "lifetime_stats.json"
        ])
      })
    ))

  it.effect("a corrupt lifetime file is moved aside with a warning and totals restart from zero", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        const fs = yield* FileSystem.FileSystem
        yield* fs.makeDirectory(stateDir, { recursive: true })
        yield* fs.writeFileString(`${stateDir}/${lifetimeFileName}`, '{"calls": "many"')

        const { result, logs } = yield* withCapturedLogs(persistence.lifetime)

        assert.deepStrictEqual(result, emptyLifetime)
        const files = yield* listTree(stateDir)
        assert.strictEqual(files.length, 1)
        assert.match(files[0]!, /^lifetime\.stats\.json\.corrupt-[0-9TZ-]+$/)
        assert.strictEqual(logs.length, 1)
        assert.strictEqual(logs[0]!.level, "Warn")
        assert.include(logs[0]!.message, lifetimeFileName)
      })
    ))

  it.effect("addToLifetime over a corrupt lifetime file starts again from the delta", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        const fs = yield* FileSystem.FileSystem
        yield* fs.makeDirectory(stateDir, { recursive: true })
        yield* fs.writeFileString(`${stateDir}/${lifetimeFileName}`, JSON.stringify({ version: 7 }))

        const { result } = yield* withCapturedLogs(persistence.addToLifetime(delta()))

        assert.strictEqual(result.calls, 2)
        assert.deepStrictEqual(yield* persistence.lifetime, result)
      })
    ))

  it.effect("concurrent updates within one process are all counted", () =>
    onDisk(() =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        yield* Effect.forEach(
          Array.from({ length: 50 }, () => delta({ calls: 1, tokens: 10 })),
          persistence.addToLifetime,
          { concurrency: "unbounded" }
        )
        const totals = yield* persistence.lifetime
        assert.strictEqual(totals.calls, 50)
        assert.strictEqual(totals.tokens, 500)
      })
    ))
})

describe("Persistence.layer: the lifetime lock", () => {
  it.effect("no lock file remains after an update", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        yield* persistence.addToLifetime(delta())
        assert.deepStrictEqual(yield* listTree(stateDir), [lifetimeFileName])
      })
    ))

  it.live("an update waits while another process holds the lock, then proceeds", () =>
    Effect.gen(function*() {
      const { root, stateDir } = yield* tempRoot
      const fs = yield* FileSystem.FileSystem
      const lockFile = `${stateDir}/${lifetimeFileName}.lock`
      yield* fs.makeDirectory(stateDir, { recursive: true })
      yield* fs.writeFileString(lockFile, "another process")

      const triedThrice = yield* Deferred.make<void>()
      let attempts = 0
      const countingLockAttempts = Layer.succeed(FileSystem.FileSystem, {
        ...fs,
        link: (from, to) =>
          Effect.suspend(() => {
            if (to === lockFile && ++attempts === 3) Deferred.doneUnsafe(triedThrice, Effect.void)
            return fs.link(from, to)
          })
      })
      const update = yield* Persistence.use((p) => p.addToLifetime(delta())).pipe(
        Effect.provide(persistenceUnder(root, countingLockAttempts)),
        Effect.forkChild
      )
      yield* Deferred.await(triedThrice)
      assert.isUndefined(update.pollUnsafe(), "still waiting for the lock")
      assert.isFalse(yield* fs.exists(`${stateDir}/${lifetimeFileName}`))

      yield* fs.remove(lockFile)
      const totals = yield* Fiber.join(update)
      assert.strictEqual(totals.calls, 2)
    }).pipe(Effect.provide(platform)))

  it.live("a lock left behind by a dead process is broken once stale, with a warning", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        const fs = yield* FileSystem.FileSystem
        const lockFile = `${stateDir}/${lifetimeFileName}.lock`
        yield* fs.makeDirectory(stateDir, { recursive: true })
        yield* fs.writeFileString(lockFile, "crashed process")
        const aMinuteAgo = new Date(Date.now() - 60_000)
        yield* fs.utimes(lockFile, aMinuteAgo, aMinuteAgo)

        const { result, logs } = yield* withCapturedLogs(persistence.addToLifetime(delta()))

        assert.strictEqual(result.calls, 2)
        assert.deepStrictEqual(yield* listTree(stateDir), [lifetimeFileName])
        assert.isTrue(logs.some((line) => line.level === "Warn" && line.message.includes("Broke lock")))
      })
    ))

  it.live("two processes updating at the same time lose no update", () =>
    Effect.gen(function*() {
      const { root } = yield* tempRoot
      const perWorker = 100
      const workers = [yield* spawnLifetimeWorker(root, perWorker), yield* spawnLifetimeWorker(root, perWorker)]
      yield* Effect.forEach(workers, (worker) => worker.ready, { concurrency: "unbounded" })
      yield* Effect.forEach(workers, (worker) => worker.go)
      const exits = yield* Effect.forEach(workers, (worker) => worker.exit, { concurrency: "unbounded" })

      for (const exit of exits) assert.strictEqual(exit.code, 0, exit.stderr)
      const spans = exits.map((exit) => JSON.parse(exit.stdout.split("\n").find((line) => line.startsWith("{"))!))
      assert.isTrue(
        Math.max(...spans.map((s) => s.start)) < Math.min(...spans.map((s) => s.end)),
        "the two workers' updates overlapped in time"
      )
      const totals = yield* Persistence.use((p) => p.lifetime).pipe(
        Effect.provide(persistenceUnder(root, NodeFileSystem.layer))
      )
      assert.strictEqual(totals.calls, 2 * perWorker)
      assert.strictEqual(totals.tokens, 20 * perWorker)
      assert.deepStrictEqual(totals.byReason, { worker: { calls: 2 * perWorker, tokens: 20 * perWorker } })
    }).pipe(Effect.provide(platform)), 60_000)
})
