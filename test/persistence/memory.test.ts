import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { emptyLifetime, Persistence } from "../../src/services/Persistence.ts"
import { totalsOf } from "../../src/state/lifetime.ts"
import { hostileSessionIds, sampleSession, validSessionIds } from "./support.ts"

const sessionID = "ses_4f1c2b3a9ffeXYZabc123"

describe("Persistence.layerMemory", () => {
  it.effect("save then load returns the same value", () =>
    Effect.gen(function*() {
      const persistence = yield* Persistence
      yield* persistence.save(sampleSession(sessionID))
      assert.deepStrictEqual(yield* persistence.load(sessionID), Option.some(sampleSession(sessionID)))
    }).pipe(Effect.provide(Persistence.layerMemory)))

  it.effect("load of an unknown session is None", () =>
    Effect.gen(function*() {
      const persistence = yield* Persistence
      assert.deepStrictEqual(yield* persistence.load(sessionID), Option.none())
    }).pipe(Effect.provide(Persistence.layerMemory)))

  it.effect("remove deletes the session, and removing a missing one succeeds", () =>
    Effect.gen(function*() {
      const persistence = yield* Persistence
      yield* persistence.save(sampleSession(sessionID))
      yield* persistence.remove(sessionID)
      yield* persistence.remove(sessionID)
      assert.deepStrictEqual(yield* persistence.load(sessionID), Option.none())
    }).pipe(Effect.provide(Persistence.layerMemory)))

  it.effect("save of a file that breaks the schema fails like on disk", () =>
    Effect.gen(function*() {
      const persistence = yield* Persistence
      const error = yield* Effect.flip(persistence.save({ ...sampleSession(sessionID), nextId: 0 }))
      assert.strictEqual(error._tag, "PersistenceError")
    }).pipe(Effect.provide(Persistence.layerMemory)))

  it.effect("each layer instance starts empty", () =>
    Effect.gen(function*() {
      yield* Persistence.use((p) => p.save(sampleSession(sessionID))).pipe(Effect.provide(Persistence.layerMemory))
      const loaded = yield* Persistence.use((p) => p.load(sessionID)).pipe(Effect.provide(Persistence.layerMemory))
      assert.deepStrictEqual(loaded, Option.none())
    }))

  it.effect("rejects every hostile session ID on load, save and remove", () =>
    Effect.gen(function*() {
      const persistence = yield* Persistence
      for (const [what, bad] of hostileSessionIds) {
        const failures = [
          yield* Effect.flip(persistence.load(bad)),
          yield* Effect.flip(persistence.save(sampleSession(bad))),
          yield* Effect.flip(persistence.remove(bad))
        ]
        for (const error of failures) assert.strictEqual(error._tag, "InvalidSessionId", what)
      }
    }).pipe(Effect.provide(Persistence.layerMemory)))

  it.effect("accepts the same valid IDs as the disk layer", () =>
    Effect.gen(function*() {
      const persistence = yield* Persistence
      for (const id of validSessionIds) {
        yield* persistence.save(sampleSession(id))
        assert.deepStrictEqual(yield* persistence.load(id), Option.some(sampleSession(id)))
      }
    }).pipe(Effect.provide(Persistence.layerMemory)))

  it.effect("lifetime starts empty, keeps each session's own totals, and retires a removed session's", () =>
    Effect.gen(function*() {
      const persistence = yield* Persistence
      assert.deepStrictEqual(yield* persistence.lifetime, emptyLifetime)
      const noise = (calls: number) => ({
        calls,
        tokens: 10 * calls,
        byReason: { noise: { calls, tokens: 10 * calls } }
      })
      yield* persistence.recordLifetime(new Map([["ses_a", noise(2)], ["ses_b", noise(1)]]))
      yield* persistence.recordLifetime(new Map([["ses_a", noise(3)], ["ses_b", noise(1)]]))
      yield* persistence.remove("ses_b")
      const file = yield* persistence.lifetime
      assert.deepStrictEqual(file.sessions, { ses_a: noise(3) })
      assert.deepStrictEqual(totalsOf(file), { sessions: 2, ...noise(4) })
    }).pipe(Effect.provide(Persistence.layerMemory)))
})
