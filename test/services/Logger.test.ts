import { assert, describe, it } from "@effect/vitest"
import { Effect, FileSystem, Path, Ref } from "effect"
import { SessionId } from "../../src/host/sessionId.ts"
import { HostRecorder } from "../../src/services/Host.ts"
import { enforceBudget, Logger } from "../../src/services/Logger.ts"
import { pluginUnder, platform, tempDir } from "../support/layers.ts"

const withDebug = (root: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    yield* fs.makeDirectory(`${root}/config/opencode`, { recursive: true })
    yield* fs.writeFileString(`${root}/config/opencode/dcp.jsonc`, `{ "debug": true }`)
  })

const sesA = SessionId.make("ses_a")

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
        yield* (yield* Logger).snapshot(sesA, [{ any: "thing" }])
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
        for (let i = 0; i < 12; i++) yield* logger.snapshot(sesA, [{ request: i }])
      }).pipe(Effect.provide(pluginUnder(root)))
      const fs = yield* FileSystem.FileSystem
      const snapshots = (yield* filesUnder(`${logDir(root)}/context`)).filter((name) => name.endsWith(".json"))
      assert.strictEqual(snapshots.length, 10)
      assert.isTrue(snapshots.every((name) => name.startsWith("ses_a/")))
      const mode = Number((yield* fs.stat(`${logDir(root)}/context/${snapshots[0]}`)).mode) & 0o777
      assert.strictEqual(mode, 0o600)
    }).pipe(Effect.provide(platform)))

  it.effect(
    "with debug on, a snapshot of a tool input nested 20,000 deep is written, cut below the depth any message has",
    () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        yield* withDebug(root)
        let deep: unknown = "leaf"
        for (let i = 0; i < 20_000; i++) deep = { a: deep }
        const message = {
          info: { id: "msg_1" },
          parts: [{ type: "tool", state: { input: { filePath: "a.ts", deep } } }]
        }
        yield* Logger.use((logger) => logger.snapshot(sesA, [message])).pipe(Effect.provide(pluginUnder(root)))
        const fs = yield* FileSystem.FileSystem
        const [snapshot] = yield* filesUnder(`${logDir(root)}/context/ses_a`)
        const text = yield* fs.readFileString(`${logDir(root)}/context/ses_a/${snapshot}`)
        assert.isBelow(text.length, 10_000)
        const parsed = JSON.parse(text)
        assert.strictEqual(parsed[0].parts[0].state.input.filePath, "a.ts")
        assert.include(text, '"[nested deeper]"')
      }).pipe(Effect.provide(platform))
  )

  it.effect("with debug on, a snapshot holding a cycle and a BigInt is written with markers in their place", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* withDebug(root)
      const input: Record<string, unknown> = { filePath: "a.ts", size: 10n }
      input.self = input
      yield* Logger.use((logger) => logger.snapshot(sesA, [{ parts: [{ state: { input } }] }])).pipe(
        Effect.provide(pluginUnder(root))
      )
      const fs = yield* FileSystem.FileSystem
      const [snapshot] = yield* filesUnder(`${logDir(root)}/context/ses_a`)
      const parsed = JSON.parse(yield* fs.readFileString(`${logDir(root)}/context/ses_a/${snapshot}`))
      assert.deepStrictEqual(parsed[0].parts[0].state.input, { filePath: "a.ts", size: "10n", self: "[cycle]" })
    }).pipe(Effect.provide(platform)))

  it.effect("with debug on, a snapshot of a long session holds the newest messages and counts the others", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* withDebug(root)
      const messages = Array.from({ length: 3_000 }, (_, i) => ({ info: { id: `msg_${i}` }, text: "x".repeat(2_000) }))
      yield* Logger.use((logger) => logger.snapshot(sesA, messages)).pipe(Effect.provide(pluginUnder(root)))
      const fs = yield* FileSystem.FileSystem
      const [snapshot] = yield* filesUnder(`${logDir(root)}/context/ses_a`)
      const text = yield* fs.readFileString(`${logDir(root)}/context/ses_a/${snapshot}`)
      assert.isBelow(text.length, 300_000)
      const parsed = JSON.parse(text) as Array<unknown>
      const kept = parsed.length - 1
      assert.strictEqual(parsed[0], `[${3_000 - kept} older messages not written]`)
      assert.deepStrictEqual(parsed.at(-1), messages.at(-1))
    }).pipe(Effect.provide(platform)))

  it.effect("a log line is bounded, whatever the values logged with it", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      let deep: unknown = "x".repeat(100_000)
      for (let i = 0; i < 20_000; i++) deep = { a: deep, b: "y".repeat(1000) }
      const logs = yield* Effect.gen(function*() {
        yield* Effect.logWarning("odd input", deep, "z".repeat(100_000))
        return (yield* HostRecorder).logs
      }).pipe(Effect.provide(pluginUnder(root)))
      const [line] = yield* Ref.get(logs)
      assert.isTrue(line!.message.startsWith("odd input {"))
      assert.isBelow(line!.message.length, 20_000)
    }).pipe(Effect.provide(platform)), 60_000)

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
