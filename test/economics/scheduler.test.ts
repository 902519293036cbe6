import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { Config } from "../../src/services/Config.ts"
import { Scheduler } from "../../src/services/Scheduler.ts"
import { emptySessionFile } from "../../src/state/schema.ts"
import { fromFile, type SessionState } from "../../src/state/session.ts"

const cache = { mode: "auto", minPruneTokens: 5000, pressure: 0.5, ttlSeconds: 300 }

const schedulerWith = (config: object = {}) =>
  Scheduler.layer.pipe(Layer.provide(Config.layerFrom({ cache: { ...cache, ...config } })))

const freshState = (): SessionState => fromFile(emptySessionFile("ses_scheduler", 0), false)

/** A small saving on a small context: nothing but the cache's temperature or the mode can make it apply. */
const small = { pendingTokens: 100, contextTokens: 1000 }

const decide = (
  state: SessionState,
  request: { pendingTokens: number; contextTokens: number; historyRequestAt?: number } = small
) => Scheduler.use((scheduler) => scheduler.decide(state, request))

describe("Scheduler", () => {
  it.effect("the first request of a session in this process applies pending prunes as cold", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* decide(freshState()), "cold")
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("the first request in this process, within ttlSeconds of the history's latest request, finds the cache warm", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("10 minutes")
      const historyRequestAt = 10 * 60_000 - 60_000
      assert.isUndefined(yield* decide(freshState(), { ...small, historyRequestAt }))
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("the first request in this process, longer than ttlSeconds after the history's latest request, is cold", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("10 minutes")
      assert.strictEqual(yield* decide(freshState(), { ...small, historyRequestAt: 0 }), "cold")
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("a history stamped ahead of the clock counts as just sent", () =>
    Effect.gen(function*() {
      assert.isUndefined(yield* decide(freshState(), { ...small, historyRequestAt: 60_000 }))
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("this process's own previous request wins over the history's", () =>
    Effect.gen(function*() {
      const state = freshState()
      yield* decide(state)
      yield* TestClock.adjust("10 minutes")
      const historyRequestAt = 10 * 60_000 - 60_000
      assert.strictEqual(yield* decide(state, { ...small, historyRequestAt }), "cold")
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("a request a minute after the previous one keeps a small saving pending", () =>
    Effect.gen(function*() {
      const state = freshState()
      yield* decide(state)
      yield* TestClock.adjust("1 minute")
      assert.isUndefined(yield* decide(state))
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("a request after exactly ttlSeconds still finds the cache warm", () =>
    Effect.gen(function*() {
      const state = freshState()
      yield* decide(state)
      yield* TestClock.adjust("300 seconds")
      assert.isUndefined(yield* decide(state))
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("a request after more than ttlSeconds of idle time applies as cold", () =>
    Effect.gen(function*() {
      const state = freshState()
      yield* decide(state)
      yield* TestClock.adjust("300001 millis")
      assert.strictEqual(yield* decide(state), "cold")
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("the idle time is measured from the previous request, not the first", () =>
    Effect.gen(function*() {
      const state = freshState()
      yield* decide(state)
      yield* TestClock.adjust("4 minutes")
      yield* decide(state)
      yield* TestClock.adjust("4 minutes")
      assert.isUndefined(yield* decide(state))
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("a request with nothing pending is still recorded, so the next one is not cold", () =>
    Effect.gen(function*() {
      const state = freshState()
      assert.isUndefined(yield* decide(state, { pendingTokens: 0, contextTokens: 1000 }))
      assert.strictEqual(state.lastRequestAt, 0)
      yield* TestClock.adjust("1 minute")
      assert.isUndefined(yield* decide(state))
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("a pending saving of minPruneTokens on a warm cache applies as a batch", () =>
    Effect.gen(function*() {
      const state = freshState()
      yield* decide(state)
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* decide(state, { pendingTokens: 5000, contextTokens: 1000 }), "batch")
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("a context at the pressure share of the model's window applies on a warm cache", () =>
    Effect.gen(function*() {
      const state = freshState()
      state.model = { providerID: "anthropic", contextLimit: 2000 }
      yield* decide(state)
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* decide(state, { pendingTokens: 100, contextTokens: 1000 }), "pressure")
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("a model without a known window is never under pressure", () =>
    Effect.gen(function*() {
      const state = freshState()
      state.model = { providerID: "anthropic", contextLimit: undefined }
      yield* decide(state)
      yield* TestClock.adjust("1 minute")
      assert.isUndefined(yield* decide(state, { pendingTokens: 100, contextTokens: 1_000_000 }))
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("a github-copilot model applies at once on a warm cache", () =>
    Effect.gen(function*() {
      const state = freshState()
      state.model = { providerID: "github-copilot", contextLimit: 128_000 }
      yield* decide(state)
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* decide(state), "immediate")
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("cache.mode immediate applies at once on a warm cache", () =>
    Effect.gen(function*() {
      const state = freshState()
      yield* decide(state)
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* decide(state), "immediate")
    }).pipe(Effect.provide(schedulerWith({ mode: "immediate" }))))

  it.effect("each session has its own idle time", () =>
    Effect.gen(function*() {
      const busy = freshState()
      const quiet = fromFile(emptySessionFile("ses_other", 0), false)
      yield* decide(busy)
      yield* decide(quiet)
      yield* TestClock.adjust("4 minutes")
      yield* decide(busy)
      yield* TestClock.adjust("2 minutes")
      assert.isUndefined(yield* decide(busy))
      assert.strictEqual(yield* decide(quiet), "cold")
    }).pipe(Effect.provide(schedulerWith())))
})
