import { assert, describe, it } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber, FileSystem, Option, Schema } from "effect"
import { TestClock } from "effect/testing"
import { Persistence } from "../../src/services/Persistence.ts"
import { SessionFile } from "../../src/state/schema.ts"
import {
  hostileSessionIds,
  listTree,
  onDisk,
  persistenceUnder,
  platform,
  renameFails,
  renameHangs,
  sampleSession,
  tempRoot,
  validSessionIds,
  withCapturedLogs
} from "./support.ts"

const sessionID = "ses_4f1c2b3a9ffeXYZabc123"

describe("Persistence.layer: session round trip", () => {
  it.effect("save then load returns the same value", () =>
    onDisk(() =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        yield* persistence.save(sampleSession(sessionID))
        const loaded = yield* persistence.load(sessionID)
        assert.deepStrictEqual(loaded, Option.some(sampleSession(sessionID)))
      })
    ))

  it.effect("load of an unknown session is None and creates nothing", () =>
    onDisk(({ root }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        assert.deepStrictEqual(yield* persistence.load(sessionID), Option.none())
        assert.deepStrictEqual(yield* listTree(root), [])
      })
    ))

  it.effect("save writes <sessionID>.json in the state directory, readable by the owner only", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        const fs = yield* FileSystem.FileSystem
        yield* persistence.save(sampleSession(sessionID))
        assert.deepStrictEqual(yield* listTree(stateDir), [`${sessionID}.json`])
        if (process.platform !== "win32") {
          const info = yield* fs.stat(`${stateDir}/${sessionID}.json`)
          assert.strictEqual(info.mode & 0o777, 0o600)
        }
      })
    ))

  it.effect("a second save replaces the first", () =>
    onDisk(() =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        yield* persistence.save(sampleSession(sessionID))
        const newer = { ...sampleSession(sessionID), nextId: 9, updatedAt: 1_800_000_000_000 }
        yield* persistence.save(newer)
        assert.deepStrictEqual(yield* persistence.load(sessionID), Option.some(newer))
      })
    ))

  it.effect("sessions are kept apart", () =>
    onDisk(() =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        yield* persistence.save(sampleSession("ses_a"))
        yield* persistence.save({ ...sampleSession("ses_b"), nextId: 7 })
        assert.strictEqual(Option.getOrThrow(yield* persistence.load("ses_a")).nextId, 4)
        assert.strictEqual(Option.getOrThrow(yield* persistence.load("ses_b")).nextId, 7)
      })
    ))

  it.effect("remove deletes the session file", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        yield* persistence.save(sampleSession(sessionID))
        yield* persistence.remove(sessionID)
        assert.deepStrictEqual(yield* persistence.load(sessionID), Option.none())
        assert.deepStrictEqual(yield* listTree(stateDir), [])
      })
    ))

  it.effect("removing a session that has no file succeeds, and leaves the other sessions' files alone", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        const other = sampleSession("ses_other00000000000000000001")
        yield* persistence.save(other)
        const before = yield* listTree(stateDir)
        const exit = yield* Effect.exit(persistence.remove(sessionID))
        assert.isTrue(Exit.isSuccess(exit))
        assert.deepStrictEqual(yield* listTree(stateDir), before)
        assert.deepStrictEqual(yield* persistence.load("ses_other00000000000000000001"), Option.some(other))
      })
    ))

  it.effect("a file written by an older release, without the defaulted fields, loads with defaults", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        const fs = yield* FileSystem.FileSystem
        yield* fs.makeDirectory(stateDir, { recursive: true })
        const minimal = { version: 1, sessionID, updatedAt: 5, nextId: 1, stats: { calls: 0, tokens: 0 } }
        yield* fs.writeFileString(`${stateDir}/${sessionID}.json`, JSON.stringify(minimal))
        const loaded = Option.getOrThrow(yield* persistence.load(sessionID))
        assert.deepStrictEqual(loaded.ids, {})
        assert.deepStrictEqual(loaded.pruned, {})
        assert.deepStrictEqual(loaded.findings, [])
      })
    ))

  it.effect("save of a file that breaks the schema fails and leaves the stored file as it was", () =>
    onDisk(() =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        yield* persistence.save(sampleSession(sessionID))
        const broken = { ...sampleSession(sessionID), nextId: 0 }
        const error = yield* Effect.flip(persistence.save(broken))
        assert.strictEqual(error._tag, "PersistenceError")
        assert.deepStrictEqual(yield* persistence.load(sessionID), Option.some(sampleSession(sessionID)))
      })
    ))
})

describe("Persistence.layer: atomic writes", () => {
  it.effect("a write that fails before the rename leaves the old file intact and no temporary behind", () =>
    Effect.gen(function*() {
      const { root, stateDir } = yield* tempRoot
      const old = sampleSession(sessionID)
      yield* Persistence.use((p) => p.save(old)).pipe(Effect.provide(persistenceUnder(root)))

      const error = yield* Persistence.use((p) => p.save({ ...old, nextId: 99 })).pipe(
        Effect.provide(persistenceUnder(root, renameFails)),
        Effect.flip
      )
      assert.strictEqual(error._tag, "PersistenceError")

      assert.deepStrictEqual(yield* listTree(stateDir), [`${sessionID}.json`])
      const loaded = yield* Persistence.use((p) => p.load(sessionID)).pipe(Effect.provide(persistenceUnder(root)))
      assert.deepStrictEqual(loaded, Option.some(old))
    }).pipe(Effect.provide(platform)))

  it.effect("a write interrupted between writing and renaming leaves the old file intact and no temporary behind", () =>
    Effect.gen(function*() {
      const { root, stateDir } = yield* tempRoot
      const fs = yield* FileSystem.FileSystem
      const old = sampleSession(sessionID)
      yield* Persistence.use((p) => p.save(old)).pipe(Effect.provide(persistenceUnder(root)))

      const reached = yield* Deferred.make<void>()
      const fiber = yield* Persistence.use((p) => p.save({ ...old, nextId: 99 })).pipe(
        Effect.provide(persistenceUnder(root, renameHangs(reached))),
        Effect.forkChild
      )
      yield* Deferred.await(reached)
      const during = yield* listTree(stateDir)
      assert.strictEqual(during.length, 2, "the new content is fully written to a temporary beside the target")
      const temporary = during.find((name) => name !== `${sessionID}.json`)!
      const pending = Schema.decodeUnknownSync(Schema.fromJsonString(SessionFile))(
        yield* fs.readFileString(`${stateDir}/${temporary}`)
      )
      assert.strictEqual(pending.nextId, 99)
      yield* Fiber.interrupt(fiber)

      assert.deepStrictEqual(yield* listTree(stateDir), [`${sessionID}.json`])
      const loaded = yield* Persistence.use((p) => p.load(sessionID)).pipe(Effect.provide(persistenceUnder(root)))
      assert.deepStrictEqual(loaded, Option.some(old))
    }).pipe(Effect.provide(platform)))

  it.effect("no temporary file lingers after successful writes", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        yield* Effect.forEach([1, 2, 3, 4, 5], (n) => persistence.save({ ...sampleSession(sessionID), nextId: n }), {
          concurrency: "unbounded"
        })
        assert.deepStrictEqual(yield* listTree(stateDir), [`${sessionID}.json`])
      })
    ))
})

describe("Persistence.layer: corrupt session files are quarantined", () => {
  const corruptions: ReadonlyArray<readonly [string, string, RegExp]> = [
    ["not JSON", "{ this is not json", /JSON/i],
    ["valid JSON failing the schema", JSON.stringify({ version: 1, sessionID, nextId: "one" }), /nextId|updatedAt/],
    ["the wrong session inside", JSON.stringify(sampleSession("ses_other")), /ses_other/],
    ["an empty file", "", /JSON|end/i]
  ]

  for (const [what, content, problem] of corruptions) {
    it.effect(`a session file holding ${what} is moved to .corrupt-<time>, logged, and loads as None`, () =>
      onDisk(({ stateDir }) =>
        Effect.gen(function*() {
          const persistence = yield* Persistence
          const fs = yield* FileSystem.FileSystem
          yield* TestClock.setTime(Date.UTC(2025, 0, 31, 12, 30, 45, 678))
          yield* fs.makeDirectory(stateDir, { recursive: true })
          yield* fs.writeFileString(`${stateDir}/${sessionID}.json`, content)

          const { result, logs } = yield* withCapturedLogs(persistence.load(sessionID))

          assert.deepStrictEqual(result, Option.none())
          const aside = `${sessionID}.json.corrupt-2025-01-31T12-30-45-678Z`
          assert.deepStrictEqual(yield* listTree(stateDir), [aside])
          assert.strictEqual(yield* fs.readFileString(`${stateDir}/${aside}`), content)
          assert.strictEqual(logs.length, 1)
          assert.strictEqual(logs[0]!.level, "Warn")
          assert.include(logs[0]!.message, `${sessionID}.json`)
          assert.include(logs[0]!.message, aside)
          assert.match(logs[0]!.message, problem)
        })
      ))
  }

  it.effect("after a quarantine, saving and loading the session works", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        const fs = yield* FileSystem.FileSystem
        yield* fs.makeDirectory(stateDir, { recursive: true })
        yield* fs.writeFileString(`${stateDir}/${sessionID}.json`, "garbage")
        yield* withCapturedLogs(persistence.load(sessionID))
        yield* persistence.save(sampleSession(sessionID))
        assert.deepStrictEqual(yield* persistence.load(sessionID), Option.some(sampleSession(sessionID)))
      })
    ))
})

describe("Persistence.layer: session IDs are validated before they become file names", () => {
  for (const [what, bad] of hostileSessionIds) {
    it.effect(`rejects ${what} on load, save and remove, touching nothing`, () =>
      onDisk(({ root }) =>
        Effect.gen(function*() {
          const persistence = yield* Persistence
          const fs = yield* FileSystem.FileSystem
          // Files a traversal could reach: they must come out untouched.
          const victims = ["data/opencode/storage/plugin/victim.json", "x.json", "x"]
          yield* fs.makeDirectory(`${root}/data/opencode/storage/plugin`, { recursive: true })
          for (const victim of victims) yield* fs.writeFileString(`${root}/${victim}`, "{ not state")
          const before = yield* listTree(root)

          const failures = [
            yield* Effect.flip(persistence.load(bad)),
            yield* Effect.flip(persistence.save(sampleSession(bad))),
            yield* Effect.flip(persistence.remove(bad))
          ]

          for (const error of failures) {
            assert.strictEqual(error._tag, "InvalidSessionId")
            if (error._tag === "InvalidSessionId") {
              assert.strictEqual(error.sessionID, bad)
              assert.include(error.message, "ASCII letters, digits")
            }
          }
          assert.deepStrictEqual(yield* listTree(root), before)
          for (const victim of victims) assert.strictEqual(yield* fs.readFileString(`${root}/${victim}`), "{ not state")
        })
      ))
  }

  it.effect("accepts OpenCode-style and edge-case valid IDs", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        for (const id of validSessionIds) {
          yield* persistence.save(sampleSession(id))
          assert.deepStrictEqual(yield* persistence.load(id), Option.some(sampleSession(id)))
        }
        assert.deepStrictEqual(yield* listTree(stateDir), validSessionIds.map((id) => `${id}.json`).sort())
      })
    ))

  it.effect("the error message names the bad ID and what a valid one is", () =>
    onDisk(() =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        const error = yield* Effect.flip(persistence.load("../../x"))
        assert.strictEqual(
          error.message,
          `Invalid session ID "../../x": it contains a character other than an ASCII letter, digit, "_" or "-". ` +
            `A session ID is 1 to 128 ASCII letters, digits, "_" or "-", not starting with "-".`
        )
      })
    ))
})
