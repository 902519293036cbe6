import { assert, describe, it } from "@effect/vitest"
import { Effect, FileSystem } from "effect"
import { transformOf } from "../support/request.ts"
import { SessionStore } from "../../src/services/SessionStore.ts"
import { Tokenizer } from "../../src/services/Tokenizer.ts"
import { assistant, sessionID, tool, user } from "../support/history.ts"
import { persistenceInMemory, pluginUnder, platform, tempDir } from "../support/layers.ts"

/** Indexes a history and reads back the stable IDs the session got: the same program for every graph. */
const program = Effect.gen(function*() {
  yield* transformOf([
    user("go"),
    assistant([
      tool({ tool: "read", callID: "c1", input: { filePath: "a" }, output: "alpha" }),
      tool({ tool: "read", callID: "c2", input: { filePath: "b" }, output: "beta" })
    ])
  ])
  const store = yield* SessionStore
  yield* store.flush
  return yield* store.use(sessionID, (state) => Effect.succeed(Object.fromEntries(state.ids)))
})

describe("composition root", () => {
  it.effect("the same program gives the same result on the live graph and with test leaves", () =>
    Effect.gen(function*() {
      const live = yield* program.pipe(Effect.provide(pluginUnder(yield* tempDir, { tokenizer: Tokenizer.layer })))
      const test = yield* program.pipe(
        Effect.provide(pluginUnder(yield* tempDir, { persistence: persistenceInMemory }))
      )
      assert.deepStrictEqual(live, { c1: 1, c2: 2 })
      assert.deepStrictEqual(test, live)
    }))

  it.effect("the live graph writes state under the data directory; the memory leaf writes nothing", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const liveRoot = yield* tempDir
      const memoryRoot = yield* tempDir
      yield* program.pipe(Effect.provide(pluginUnder(liveRoot)))
      yield* program.pipe(Effect.provide(pluginUnder(memoryRoot, { persistence: persistenceInMemory })))
      const stateDir = "data/opencode/storage/plugin/dcp"
      assert.isTrue(yield* fs.exists(`${liveRoot}/${stateDir}/${sessionID}.json`))
      assert.isFalse(yield* fs.exists(`${memoryRoot}/${stateDir}`))
    }).pipe(Effect.provide(platform)))
})
