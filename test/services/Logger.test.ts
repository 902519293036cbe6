import { assert, describe, it } from "@effect/vitest"
import { Effect, FileSystem, Path, Ref } from "effect"
import { HostRecorder } from "../../src/services/Host.ts"
import { enforceBudget, Logger } from "../../src/services/Logger.ts"
import { pluginUnder, platform, tempDir } from "../support/layers.ts"

const withDebug = (root: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    yield* fs.makeDirectory(`${root}/config/opencode`, { recursive: true })
    yield* fs.writeFileString(`${root}/config/opencode/dcp.jsonc`, `{ "debug": true }`)
  })

const logDir = (root: string) => `${root}/config/opencode/logs/dcp`

const filesUnder = (dir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if (!(yield* fs.exists(dir))) return []
    return [...(yield* fs.readDirectory(dir, { recursive: true }))].sort()
  })

describe("Logger", () => {
  it.effect("without debug, warnings go to OpenCode's log and no file is written", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const logs = yield* Effect.gen(function*() {
        yield* Effect.logWarning("state file moved aside")
        yield* Effect.logInfo("routine detail")
        yield* (yield* Logger).snapshot("ses_a", [{ any: "thing" }])
        return (yield* HostRecorder).logs
      }).pipe(Effect.provide(pluginUnder(root)))
      assert.deepStrictEqual((yield* Ref.get(logs)).map((line) => [line.level, line.message]), [
        ["warn", "state file moved aside"]
      ])
      assert.deepStrictEqual(yield* filesUnder(logDir(root)), [])
    }).pipe(Effect.provide(platform)))

  it.effect("with debug on, every line goes to a private daily file", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* withDebug(root)
      yield* Effect.logInfo("routine detail").pipe(Effect.provide(pluginUnder(root)))
      const fs = yield* FileSystem.FileSystem
      const files = yield* filesUnder(logDir(root))
      assert.strictEqual(files.length, 1)
      assert.match(files[0]!, /^dcp-\d{4}-\d{2}-\d{2}\.log$/)
      const file = `${logDir(root)}/${files[0]}`
      assert.include(yield* fs.readFileString(file), "INFO routine detail")
      assert.strictEqual(Number((yield* fs.stat(file)).mode) & 0o777, 0o600)
    }).pipe(Effect.provide(platform)))

  it.effect("with debug on, snapshots are private, per session, and only the newest are kept", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* withDebug(root)
      yield* Effect.gen(function*() {
        const logger = yield* Logger
        for (let i = 0; i < 12; i++) yield* logger.snapshot("ses_a", [{ request: i }])
        yield* logger.snapshot("../../escape", [])
      }).pipe(Effect.provide(pluginUnder(root)))
      const fs = yield* FileSystem.FileSystem
      const snapshots = (yield* filesUnder(`${logDir(root)}/context`)).filter((name) => name.endsWith(".json"))
      assert.strictEqual(snapshots.length, 10)
      assert.isTrue(snapshots.every((name) => name.startsWith("ses_a/")))
      const mode = Number((yield* fs.stat(`${logDir(root)}/context/${snapshots[0]}`)).mode) & 0o777
      assert.strictEqual(mode, 0o600)
    }).pipe(Effect.provide(platform)))

  it.effect("the log directory is kept under its size budget, oldest files first", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const fs = yield* FileSystem.FileSystem
      const path = yield* Path.Path
      for (const [name, age] of [["old.log", 3], ["mid.log", 2], ["new.log", 1]] as const) {
        yield* fs.writeFileString(path.join(root, name), "x".repeat(1000))
        yield* fs.utimes(
          path.join(root, name),
          new Date(Date.now() - age * 60_000),
          new Date(Date.now() - age * 60_000)
        )
      }
      yield* enforceBudget(fs, path, root, 2500)
      assert.deepStrictEqual(yield* filesUnder(root), ["mid.log", "new.log"])
    }).pipe(Effect.provide(platform)))
})
