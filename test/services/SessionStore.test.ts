import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, FileSystem, Option, Ref } from "effect"
import { HostRecorder } from "../../src/services/Host.ts"
import { Persistence } from "../../src/services/Persistence.ts"
import { SessionStore } from "../../src/services/SessionStore.ts"
import { stableId } from "../../src/engine/session.ts"
import { pluginUnder, platform, tempDir } from "../support/layers.ts"
import { pluginTest } from "../support/pluginTest.ts"

const assignIds = (sessionID: string, ...callIDs: Array<string>) =>
  Effect.gen(function*() {
    const store = yield* SessionStore
    return yield* store.use(sessionID, (state) => Effect.sync(() => callIDs.map((callID) => stableId(state, callID))))
  })

describe("SessionStore", () => {
  it.effect("keeps one state per session", () =>
    pluginTest(Effect.gen(function*() {
      assert.deepStrictEqual(yield* assignIds("ses_a", "c1", "c2"), [1, 2])
      assert.deepStrictEqual(yield* assignIds("ses_b", "c9"), [1])
      assert.deepStrictEqual(yield* assignIds("ses_a", "c3", "c1"), [3, 1])
    })))

  it.effect("a session seen again after a restart is reloaded from disk, with its IDs", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* assignIds("ses_a", "c1", "c2").pipe(Effect.provide(pluginUnder(root)))
      assert.deepStrictEqual(yield* assignIds("ses_a", "c2", "c3").pipe(Effect.provide(pluginUnder(root))), [2, 3])
    }))

  it.effect("changes are written behind the request, and flush writes them now", () =>
    pluginTest(Effect.gen(function*() {
      yield* assignIds("ses_a", "c1")
      yield* (yield* SessionStore).flush
      const stored = yield* (yield* Persistence).load("ses_a")
      assert.deepStrictEqual(Option.map(stored, (file) => file.ids), Option.some({ c1: 1 }))
    })))

  it.effect("asks the host whether a session is a sub-agent once per session", () =>
    pluginTest(
      Effect.gen(function*() {
        const store = yield* SessionStore
        const subAgent = yield* store.use("ses_child", (state) => Effect.succeed(state.isSubAgent))
        const main = yield* store.use("ses_main", (state) => Effect.succeed(state.isSubAgent))
        yield* store.use("ses_child", () => Effect.void)
        yield* store.use("ses_main", () => Effect.void)
        assert.isTrue(subAgent)
        assert.isFalse(main)
        assert.strictEqual(yield* Ref.get((yield* HostRecorder).sessionLookups), 2)
      }),
      { host: { sessions: { ses_child: { parentID: "ses_main" } } } }
    ))

  it.effect("when the host cannot be asked, the session is not used and is asked again next time", () =>
    pluginTest(
      Effect.gen(function*() {
        const store = yield* SessionStore
        const first = yield* Effect.exit(store.use("ses_a", () => Effect.void))
        const second = yield* Effect.exit(store.use("ses_a", () => Effect.void))
        assert.isTrue(Exit.isFailure(first))
        assert.isTrue(Exit.isFailure(second))
        assert.strictEqual(yield* Ref.get((yield* HostRecorder).sessionLookups), 2)
      }),
      { host: { failing: true } }
    ))

  it.effect("rejects a session ID that could escape the state directory", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const exit = yield* Effect.exit(assignIds("../../etc/x", "c1").pipe(Effect.provide(pluginUnder(root))))
      assert.isTrue(Exit.isFailure(exit))
      const fs = yield* FileSystem.FileSystem
      assert.isFalse(yield* fs.exists(`${root}/etc`))
    }).pipe(Effect.provide(platform)))

  it.effect("forgetting a deleted session removes its file", () =>
    pluginTest(Effect.gen(function*() {
      const store = yield* SessionStore
      yield* assignIds("ses_a", "c1")
      yield* store.flush
      yield* store.forget("ses_a")
      assert.isTrue(Option.isNone(yield* (yield* Persistence).load("ses_a")))
      assert.deepStrictEqual(yield* assignIds("ses_a", "c5"), [1])
    })))

  it.effect("more sessions than it keeps in memory still keep their state", () =>
    pluginTest(Effect.gen(function*() {
      for (let i = 0; i < 50; i++) yield* assignIds(`ses_${i}`, "c1", `c${i + 2}`)
      yield* (yield* SessionStore).flush
      assert.deepStrictEqual(yield* assignIds("ses_0", "c2", "c100"), [2, 3])
    })))
})
