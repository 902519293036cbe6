import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, FileSystem, Layer } from "effect"
import { NodeFileSystem } from "@effect/platform-node"
import { sessionIdProblem } from "../../src/host/sessionId.ts"
import { Persistence } from "../../src/services/Persistence.ts"
import { emptyLifetime } from "../../src/state/lifetime.ts"
import { totalsOf } from "../../src/state/lifetime.ts"
import type { SessionTotals } from "../../src/state/schema.ts"
import {
  lifetimeFileName,
  listTree,
  onDisk,
  persistenceUnder,
  platform,
  sampleSession,
  storedSession,
  tempRoot,
  withCapturedLogs
} from "./support.ts"
import { spawnLifetimeWorker, spawnSessionWorker } from "./workers.ts"
import { onStillClock } from "../support/stillClock.ts"

const totals = (calls: number, tokens = 100 * calls, reason = "deduplication"): SessionTotals => ({
  calls,
  tokens,
  byReason: { [reason]: { calls, tokens } }
})
const records = (entries: Record<string, SessionTotals>) => new Map(Object.entries(entries))

describe("Persistence.layer: lifetime statistics", () => {
  it.effect("lifetime is empty before anything was recorded, and reading it creates no file", () =>
    onDisk(({ root }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        assert.deepStrictEqual(yield* persistence.lifetime, emptyLifetime)
        assert.deepStrictEqual(yield* listTree(root), [])
      })
    ))

  it.effect("each session's own totals are kept, and the lifetime totals are their sum", () =>
    onDisk(() =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        yield* persistence.recordLifetime(records({ ses_a: totals(2), ses_b: totals(3, 50, "discard") }))
        const file = yield* persistence.lifetime
        assert.deepStrictEqual(file.sessions, { ses_a: totals(2), ses_b: totals(3, 50, "discard") })
        assert.deepStrictEqual(totalsOf(file), {
          sessions: 2,
          calls: 5,
          tokens: 250,
          byReason: { deduplication: { calls: 2, tokens: 200 }, discard: { calls: 3, tokens: 50 } }
        })
      })
    ))

  it.effect("a session's newer totals replace its record: the same prunes recorded again count once", () =>
    onDisk(() =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        yield* persistence.recordLifetime(records({ ses_a: totals(2) }))
        yield* persistence.recordLifetime(records({ ses_a: totals(2) }))
        yield* persistence.recordLifetime(records({ ses_a: totals(3) }))
        assert.deepStrictEqual(totalsOf(yield* persistence.lifetime), { sessions: 1, ...totals(3) })
      })
    ))

  it.effect("of two processes' totals for one session, the larger stays: totals never go back", () =>
    onDisk(() =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        yield* persistence.recordLifetime(records({ ses_a: totals(5) }))
        yield* persistence.recordLifetime(records({ ses_a: totals(3) }))
        yield* persistence.recordLifetime(records({ ses_a: totals(5, 400) }))
        assert.deepStrictEqual((yield* persistence.lifetime).sessions, { ses_a: totals(5, 500) })
      })
    ))

  it.effect("a deleted session's totals are kept, retired from the per-session records", () =>
    onDisk(() =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        yield* persistence.save(sampleSession("ses_a"))
        yield* persistence.recordLifetime(records({ ses_a: totals(2), ses_b: totals(1) }))
        yield* persistence.remove("ses_a")
        const file = yield* persistence.lifetime
        assert.deepStrictEqual(file.sessions, { ses_b: totals(1) })
        assert.deepStrictEqual(file.retired, { sessions: 1, ...totals(2) })
        assert.deepStrictEqual(totalsOf(file), { sessions: 2, ...totals(3) })
      })
    ))

  it.effect("totals survive a restart (a new layer over the same directory)", () =>
    Effect.gen(function*() {
      const { root } = yield* tempRoot
      yield* Persistence.use((p) => p.recordLifetime(records({ ses_a: totals(3) }))).pipe(
        Effect.provide(persistenceUnder(root))
      )
      const file = yield* Persistence.use((p) => p.lifetime).pipe(Effect.provide(persistenceUnder(root)))
      assert.strictEqual(totalsOf(file).tokens, 300)
    }).pipe(Effect.provide(platform)))

  it.effect("estimated token figures are rounded and negative ones ignored, so the file stays valid", () =>
    onDisk(() =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        yield* persistence.recordLifetime(
          records({ ses_a: { calls: 1, tokens: 10.6, byReason: { x: { calls: -1, tokens: 2.2 } } } })
        )
        const file = yield* persistence.lifetime
        assert.strictEqual(totalsOf(file).tokens, 11)
        assert.deepStrictEqual(totalsOf(file).byReason, { x: { calls: 0, tokens: 2 } })
      })
    ))

  it.effect("the lifetime file name can never be a session file name", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        assert.isDefined(sessionIdProblem(lifetimeFileName.replace(/\.json$/, "")))
        const error = yield* Effect.flip(persistence.load(lifetimeFileName.replace(/\.json$/, "")))
        assert.strictEqual(error._tag, "InvalidSessionId")

        yield* persistence.recordLifetime(records({ ses_a: totals(3) }))
        for (const id of ["lifetime", "lifetime_stats", "lifetime-stats"]) yield* persistence.save(sampleSession(id))
        assert.strictEqual(totalsOf(yield* persistence.lifetime).tokens, 300)
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

  it.effect("recording over a corrupt lifetime file starts again from the records", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        const fs = yield* FileSystem.FileSystem
        yield* fs.makeDirectory(stateDir, { recursive: true })
        yield* fs.writeFileString(`${stateDir}/${lifetimeFileName}`, JSON.stringify({ version: 7 }))

        const { result } = yield* withCapturedLogs(persistence.recordLifetime(records({ ses_a: totals(2) })))

        assert.strictEqual(totalsOf(result).calls, 2)
        assert.deepStrictEqual(yield* persistence.lifetime, result)
      })
    ))

  it.effect("concurrent updates within one process are all kept", () =>
    onDisk(() =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        yield* Effect.forEach(
          Array.from({ length: 50 }, (_, i) => records({ [`ses_${i}`]: totals(1, 10) })),
          persistence.recordLifetime,
          { concurrency: "unbounded" }
        )
        const sum = totalsOf(yield* persistence.lifetime)
        assert.strictEqual(sum.calls, 50)
        assert.strictEqual(sum.tokens, 500)
      })
    ))
})

describe("Persistence.layer: lifetime files of version 1", () => {
  /** A version 1 file: one running sum, here 10 calls in 3 sessions. */
  const version1 = {
    version: 1,
    updatedAt: 1,
    sessions: 3,
    calls: 10,
    tokens: 5_000,
    byReason: { deduplication: { calls: 8, tokens: 4_000 }, discard: { calls: 2, tokens: 1_000 } }
  }
  const withVersion1 = (stateDir: string) =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const persistence = yield* Persistence
      // One session of the three still has its state file: 2 prunes (1,200 and 80 tokens).
      yield* persistence.save(sampleSession("ses_kept"))
      yield* fs.writeFileString(`${stateDir}/${lifetimeFileName}`, JSON.stringify(version1))
    })

  it.effect("is migrated: the sessions on disk get records, the rest of the sum is retired, the totals stay", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        yield* withVersion1(stateDir)
        const { result: file } = yield* withCapturedLogs(Persistence.use((p) => p.lifetime))
        assert.strictEqual(file.version, 2)
        assert.deepStrictEqual(file.sessions, {
          ses_kept: {
            calls: 2,
            tokens: 1_280,
            byReason: { deduplication: { calls: 1, tokens: 1_200 }, discard: { calls: 1, tokens: 80 } }
          }
        })
        const { version: _, updatedAt: _at, ...sum } = version1
        assert.deepStrictEqual(totalsOf(file), sum)
      })
    ))

  it.effect("a session that goes on after the migration is not counted twice", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        yield* withVersion1(stateDir)
        const persistence = yield* Persistence
        const { result: file } = yield* withCapturedLogs(
          persistence.recordLifetime(records({ ses_kept: { calls: 3, tokens: 1_380, byReason: {} } }))
        )
        assert.strictEqual(totalsOf(file).calls, 11)
        assert.strictEqual(totalsOf(file).tokens, 5_100)
      })
    ))
})

describe("Persistence.layer: the lifetime lock", () => {
  it.effect("no lock file remains after an update", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        yield* persistence.recordLifetime(records({ ses_a: totals(2) }))
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
      const update = yield* Persistence.use((p) => p.recordLifetime(records({ ses_a: totals(2) }))).pipe(
        Effect.provide(persistenceUnder(root, countingLockAttempts)),
        Effect.forkChild
      )
      yield* Deferred.await(triedThrice)
      assert.isUndefined(update.pollUnsafe(), "still waiting for the lock")
      assert.isFalse(yield* fs.exists(`${stateDir}/${lifetimeFileName}`))

      yield* fs.remove(lockFile)
      const file = yield* Fiber.join(update)
      assert.strictEqual(totalsOf(file).calls, 2)
      // On the still clock the 2-second limit never runs out: the update waits for the lock's removal, not for time.
    }).pipe(onStillClock, Effect.provide(platform)))

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

        const { result, logs } = yield* withCapturedLogs(persistence.recordLifetime(records({ ses_a: totals(2) })))

        assert.strictEqual(totalsOf(result).calls, 2)
        assert.deepStrictEqual(yield* listTree(stateDir), [lifetimeFileName])
        assert.isTrue(logs.some((line) => line.level === "Warn" && line.message.includes("Broke lock")))
      })
    ))

  /** Two worker processes started together; the totals they left. */
  const twoWorkers = (perWorker: number, session?: string) =>
    Effect.gen(function*() {
      const { root } = yield* tempRoot
      const workers = [
        yield* spawnLifetimeWorker(root, perWorker, session),
        yield* spawnLifetimeWorker(root, perWorker, session)
      ]
      yield* Effect.forEach(workers, (worker) => worker.ready, { concurrency: "unbounded" })
      yield* Effect.forEach(workers, (worker) => worker.go)
      const exits = yield* Effect.forEach(workers, (worker) => worker.exit, { concurrency: "unbounded" })

      for (const exit of exits) assert.strictEqual(exit.code, 0, exit.stderr)
      const spans = exits.map((exit) => JSON.parse(exit.stdout.split("\n").find((line) => line.startsWith("{"))!))
      assert.isTrue(
        Math.max(...spans.map((s) => s.start)) < Math.min(...spans.map((s) => s.end)),
        "the two workers' updates overlapped in time"
      )
      const file = yield* Persistence.use((p) => p.lifetime).pipe(
        Effect.provide(persistenceUnder(root, NodeFileSystem.layer))
      )
      return totalsOf(file)
    })

  it.live("two processes updating at the same time lose no update", () =>
    Effect.gen(function*() {
      const perWorker = 100
      const sum = yield* twoWorkers(perWorker)
      assert.strictEqual(sum.sessions, 2 * perWorker)
      assert.strictEqual(sum.calls, 2 * perWorker)
      assert.strictEqual(sum.tokens, 20 * perWorker)
      assert.deepStrictEqual(sum.byReason, { worker: { calls: 2 * perWorker, tokens: 20 * perWorker } })
    }).pipe(Effect.provide(platform)))

  it.live(
    "two processes recording the same session at the same time count its prunes once",
    () =>
      Effect.gen(function*() {
        const perWorker = 100
        const sum = yield* twoWorkers(perWorker, "ses_shared")
        assert.deepStrictEqual(sum, {
          sessions: 1,
          calls: perWorker,
          tokens: 10 * perWorker,
          byReason: { worker: { calls: perWorker, tokens: 10 * perWorker } }
        })
      }).pipe(Effect.provide(platform))
  )
})

describe("lifetime totals of two OpenCode processes working in one session", () => {
  it.live("each prune is counted once: the totals are what the session's file says", () =>
    Effect.gen(function*() {
      const { root } = yield* tempRoot
      const requests = 30
      const workers = [yield* spawnSessionWorker(root, requests), yield* spawnSessionWorker(root, requests)]
      yield* Effect.forEach(workers, (worker) => worker.ready, { concurrency: "unbounded" })
      yield* Effect.forEach(workers, (worker) => worker.go)
      const exits = yield* Effect.forEach(workers, (worker) => worker.exit, { concurrency: "unbounded" })
      for (const exit of exits) assert.strictEqual(exit.code, 0, exit.stderr)

      const session = yield* storedSession(root, "ses_shared00000000000000001")
      const file = yield* Persistence.use((p) => p.lifetime).pipe(Effect.provide(persistenceUnder(root)))
      assert.strictEqual(session.stats.calls, requests)
      assert.deepStrictEqual(
        { sessions: totalsOf(file).sessions, calls: totalsOf(file).calls, tokens: totalsOf(file).tokens },
        { sessions: 1, calls: session.stats.calls, tokens: session.stats.tokens }
      )
    }).pipe(Effect.provide(platform)))
})
