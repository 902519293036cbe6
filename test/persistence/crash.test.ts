import { assert, describe, it } from "@effect/vitest"
import { Effect, FileSystem, Layer } from "effect"
import { Persistence } from "../../src/services/Persistence.ts"
import { totalsOf } from "../../src/state/lifetime.ts"
import { currentOwner, ownerTag } from "../../src/state/owner.ts"
import { lifetimeFileName, listTree, persistenceUnder, platform, tempRoot, withCapturedLogs } from "./support.ts"
import { spawnStalledWorker } from "./workers.ts"

/**
 * What a process killed in the middle of a write, or while holding the lifetime lock, leaves in the state directory,
 * and what the next start makes of it. The workers are real processes, stopped at the worst moment (their temporary
 * written and flushed, not yet renamed) and then killed with SIGKILL, or left running.
 */

/** One OpenCode start and stop over `root` (its log lines kept out of the test output): stopping waits for the clean-up. */
const startAndStop = (root: string) =>
  withCapturedLogs(Persistence.use((p) => p.lifetime).pipe(Effect.provide(persistenceUnder(root))))

/** The temporaries in `stateDir` whose names record process `pid`. */
const temporariesOf = (stateDir: string, pid: number) =>
  Effect.map(
    listTree(stateDir),
    (files) => files.filter((f) => f.endsWith(".tmp") && new RegExp(`[.-]${pid}[.-]`).test(f))
  )

const record = new Map([["ses_a", { calls: 2, tokens: 300, byReason: { deduplication: { calls: 2, tokens: 300 } } }]])

/** The real file system, counting attempts to create `lockFile` (each waiter's poll is one), by link or by write. */
const countingLockAttempts = (lockFile: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    let attempts = 0
    const layer = Layer.succeed(FileSystem.FileSystem, {
      ...fs,
      link: (from, to) =>
        Effect.suspend(() => {
          if (to === lockFile) attempts++
          return fs.link(from, to)
        }),
      writeFileString: (file, data, options) =>
        Effect.suspend(() => {
          if (file === lockFile) attempts++
          return fs.writeFileString(file, data, options)
        })
    })
    return { layer, attempts: () => attempts }
  })

describe("Persistence.layer: temporaries of interrupted writes", () => {
  it.live("a writer killed mid-write leaves a temporary, and the next start removes it", () =>
    Effect.gen(function*() {
      const { root, stateDir } = yield* tempRoot
      const writer = yield* spawnStalledWorker(root, "session")
      yield* writer.ready
      assert.strictEqual((yield* temporariesOf(stateDir, writer.pid)).length, 1)

      const exit = yield* writer.kill
      assert.strictEqual(exit.signal, "SIGKILL")
      assert.strictEqual((yield* temporariesOf(stateDir, writer.pid)).length, 1, "the crash left its temporary")

      yield* startAndStop(root)
      assert.deepStrictEqual(yield* listTree(stateDir), [])
    }).pipe(Effect.provide(platform)))

  it.live("the next start removes a killed writer's temporary, never a running writer's", () =>
    Effect.gen(function*() {
      const { root, stateDir } = yield* tempRoot
      const killed = yield* spawnStalledWorker(root, "session")
      const running = yield* spawnStalledWorker(root, "session")
      yield* Effect.all([killed.ready, running.ready], { concurrency: "unbounded" })
      const runningTemporary = yield* temporariesOf(stateDir, running.pid)
      assert.strictEqual(runningTemporary.length, 1)
      yield* killed.kill

      yield* startAndStop(root)

      assert.deepStrictEqual(yield* listTree(stateDir), runningTemporary)
      assert.isTrue(yield* running.running)
    }).pipe(Effect.provide(platform)))

  it.live("the start-up clean-up reports what it removed", () =>
    Effect.gen(function*() {
      const { root, stateDir } = yield* tempRoot
      const writer = yield* spawnStalledWorker(root, "lifetime")
      yield* writer.ready
      const left = (yield* listTree(stateDir)).filter((f) => f !== lifetimeFileName)
      yield* writer.kill

      const { result: removed } = yield* withCapturedLogs(
        Persistence.use((p) => p.leftoversRemoved).pipe(Effect.provide(persistenceUnder(root)))
      )

      assert.strictEqual(left.length, 2)
      assert.include(left, `${lifetimeFileName}.lock`)
      assert.deepStrictEqual([...removed].sort(), left)
      assert.deepStrictEqual(yield* listTree(stateDir), [])
    }).pipe(Effect.provide(platform)))

  it.live("a PID now used by a newer process does not keep a dead writer's temporary", () =>
    Effect.gen(function*() {
      const { root, stateDir } = yield* tempRoot
      const fs = yield* FileSystem.FileSystem
      const running = yield* spawnStalledWorker(root, "session")
      yield* running.ready
      const ownTemporary = yield* temporariesOf(stateDir, running.pid)
      // Written by a process that had the running worker's PID before it, and started at another time.
      const self = yield* currentOwner
      const earlier = `ses_old.json.${ownerTag({ host: self.host, pid: running.pid, started: "1" })}.x1.tmp`
      yield* fs.writeFileString(`${stateDir}/${earlier}`, "{}")

      yield* startAndStop(root)

      // Only Linux says when a process started; elsewhere a running PID keeps its temporaries.
      const kept = process.platform === "linux" ? ownTemporary : [earlier, ...ownTemporary].sort()
      assert.deepStrictEqual(yield* listTree(stateDir), kept)
    }).pipe(Effect.provide(platform)))

  it.live("a temporary whose writer cannot be checked is removed only once it is an hour old", () =>
    Effect.gen(function*() {
      const { root, stateDir } = yield* tempRoot
      const fs = yield* FileSystem.FileSystem
      yield* fs.makeDirectory(stateDir, { recursive: true })
      const otherMachine = (name: string) =>
        `${name}.json.${ownerTag({ host: "0123456789ab", pid: 4242, started: "77" })}.x1.tmp`
      const olderRelease = (name: string) => `${name}.json.4242.x1.tmp`
      const fresh = [otherMachine("ses_a"), olderRelease("ses_b")]
      const old = [otherMachine("ses_c"), olderRelease("ses_d")]
      const twoHoursAgo = new Date(Date.now() - 2 * 60 * 60_000)
      for (const name of [...fresh, ...old]) yield* fs.writeFileString(`${stateDir}/${name}`, "{}")
      for (const name of old) yield* fs.utimes(`${stateDir}/${name}`, twoHoursAgo, twoHoursAgo)

      yield* startAndStop(root)

      assert.deepStrictEqual(yield* listTree(stateDir), [...fresh].sort())
    }).pipe(Effect.provide(platform)))
})

describe("Persistence.layer: status files of a crashed process", () => {
  it.live(
    "a status writer killed mid-write leaves a temporary in status/, and the next start removes it",
    () =>
      Effect.gen(function*() {
        const { root, stateDir } = yield* tempRoot
        const writer = yield* spawnStalledWorker(root, "status")
        yield* writer.ready
        const left = yield* temporariesOf(stateDir, writer.pid)
        assert.lengthOf(left, 1)
        assert.match(left[0]!, /^status\/ses_stalled\.json\./)
        yield* writer.kill

        const { result: removed } = yield* withCapturedLogs(
          Persistence.use((p) => p.leftoversRemoved).pipe(Effect.provide(persistenceUnder(root)))
        )

        assert.deepStrictEqual(removed, left)
        assert.deepStrictEqual(yield* listTree(stateDir), ["status"])
      }).pipe(Effect.provide(platform))
  )

  it.live("the next start keeps the status temporary of a writer still running", () =>
    Effect.gen(function*() {
      const { root, stateDir } = yield* tempRoot
      const running = yield* spawnStalledWorker(root, "status")
      yield* running.ready
      const temporary = yield* temporariesOf(stateDir, running.pid)

      yield* startAndStop(root)

      assert.deepStrictEqual(yield* listTree(stateDir), ["status", ...temporary])
      assert.isTrue(yield* running.running)
    }).pipe(Effect.provide(platform)), 30_000)
})

describe("Persistence.layer: the lifetime lock of a crashed process", () => {
  it.live("a lock whose holder was killed is broken at once, not when it turns stale", () =>
    Effect.gen(function*() {
      const { root, stateDir } = yield* tempRoot
      const fs = yield* FileSystem.FileSystem
      const lockFile = `${stateDir}/${lifetimeFileName}.lock`
      const holder = yield* spawnStalledWorker(root, "lifetime")
      yield* holder.ready
      assert.isTrue(yield* fs.exists(lockFile))
      yield* holder.kill

      const counting = yield* countingLockAttempts(lockFile)
      const { result, logs } = yield* withCapturedLogs(
        Persistence.use((p) => p.recordLifetime(record)).pipe(Effect.provide(persistenceUnder(root, counting.layer)))
      )

      assert.strictEqual(totalsOf(result).calls, 2)
      // The start-up clean-up or the update itself breaks it; either way no waiter polls it until it is stale.
      assert.isAtMost(counting.attempts(), 2)
      assert.isTrue(
        logs.some((line) =>
          line.level === "Warn" && line.message.includes(`process ${holder.pid} on this machine, is no longer running`)
        ),
        JSON.stringify(logs)
      )
      assert.deepStrictEqual(yield* listTree(stateDir), [lifetimeFileName])
    }).pipe(Effect.provide(platform)))

  it.live(
    "a lock held by a running process is not broken, however old: the update gives up, the holder keeps it",
    () =>
      Effect.gen(function*() {
        const { root, stateDir } = yield* tempRoot
        const fs = yield* FileSystem.FileSystem
        const lockFile = `${stateDir}/${lifetimeFileName}.lock`
        const holder = yield* spawnStalledWorker(root, "lifetime")
        yield* holder.ready
        const token = yield* fs.readFileString(lockFile)
        // Older than the age at which a lock whose holder cannot be checked counts as abandoned.
        const aMinuteAgo = new Date(Date.now() - 60_000)
        yield* fs.utimes(lockFile, aMinuteAgo, aMinuteAgo)

        const update = yield* Effect.result(
          Persistence.use((p) => p.recordLifetime(record)).pipe(Effect.provide(persistenceUnder(root)))
        )

        assert.isTrue(yield* holder.running)
        if (process.platform === "linux") {
          assert.strictEqual(update._tag === "Failure" && update.failure.operation, "lock")
          assert.strictEqual(yield* fs.readFileString(lockFile), token)
        } else {
          // Elsewhere the kernel does not say when a process started: an old lock of a running PID may belong to a
          // process that reused the PID, and is broken by its age.
          assert.strictEqual(update._tag, "Success")
        }
      }).pipe(Effect.provide(platform))
  )
})
