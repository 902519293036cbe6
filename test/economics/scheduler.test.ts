import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { type Request, Scheduler } from "../../src/services/Scheduler.ts"
import { emptySessionFile } from "../../src/state/schema.ts"
import { fromFile, type SessionState } from "../../src/engine/session.ts"
import { configOf } from "../support/layers.ts"

const cache = { mode: "auto", minPruneTokens: 5000, pressure: 0.5, ttlSeconds: 300 }
const model = (providerID: string, contextLimit: number | undefined) => ({
  providerID,
  modelID: "m",
  npm: undefined,
  contextLimit,
  outputLimit: undefined
})

const schedulerWith = (config: object = {}) =>
  Scheduler.layer.pipe(Layer.provide(configOf({ cache: { ...cache, ...config } })))

const freshState = (): SessionState => fromFile(emptySessionFile("ses_scheduler", 0), false)

/** A small saving on a large context: nothing but the cache's temperature or the mode can make it apply. */
const small = {
  pendingTokens: 100,
  contextTokens: 100_000,
  change: { tokensAfter: 100_000, nearEnd: false },
  compacted: false,
  modelSwitched: false,
  instructionsChanged: false,
  agentSwitch: undefined as Request["agentSwitch"]
}

/** The trigger for a request; `history`: when the history's requests were sent, for a session new to this process. */
const decide = (
  state: SessionState,
  request: Partial<typeof small> = {},
  history: ReadonlyArray<number> = []
) =>
  Scheduler.use((scheduler) => scheduler.decide(state, { ...small, ...request, history: () => history })).pipe(
    Effect.map((decision) => decision.trigger)
  )

describe("Scheduler", () => {
  it.effect("the first request of a session in this process applies pending prunes as cold", () =>
    Effect.gen(function*() {
      assert.strictEqual(yield* decide(freshState()), "cold")
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("the first request in this process, within ttlSeconds of the history's latest request, finds the cache warm", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("10 minutes")
      assert.isUndefined(yield* decide(freshState(), {}, [10 * 60_000 - 60_000]))
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("the first request in this process, longer than ttlSeconds after the history's latest request, is cold", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("10 minutes")
      assert.strictEqual(yield* decide(freshState(), {}, [0]), "cold")
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("a history stamped ahead of the clock counts as just sent", () =>
    Effect.gen(function*() {
      assert.isUndefined(yield* decide(freshState(), {}, [60_000]))
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("this process's own previous request wins over the history's", () =>
    Effect.gen(function*() {
      const state = freshState()
      yield* decide(state)
      yield* TestClock.adjust("10 minutes")
      assert.strictEqual(yield* decide(state, {}, [10 * 60_000 - 60_000]), "cold")
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

  it.effect("a request to another model than the previous one's applies as cold, a second after it", () =>
    Effect.gen(function*() {
      const state = freshState()
      yield* decide(state)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* decide(state, { modelSwitched: true }), "cold")
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("a request after the model changed an instruction file applies as cold, a second after the previous one", () =>
    Effect.gen(function*() {
      const state = freshState()
      yield* decide(state)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* decide(state, { instructionsChanged: true }), "cold")
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("a request to an agent with a prompt of its own applies as cold, a second after the previous one", () =>
    Effect.gen(function*() {
      const state = freshState()
      yield* Scheduler.use((scheduler) => scheduler.agentsConfigured(new Map([["reviewer", "You review code."]])))
      yield* decide(state)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* decide(state, { agentSwitch: { from: "build", to: "reviewer" } }), "cold")
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("a request to another agent with the same prompt (build and plan: the model's own) finds the cache warm", () =>
    Effect.gen(function*() {
      const state = freshState()
      yield* Scheduler.use((scheduler) => scheduler.agentsConfigured(new Map([["reviewer", "You review code."]])))
      yield* decide(state)
      yield* TestClock.adjust("1 second")
      assert.isUndefined(yield* decide(state, { agentSwitch: { from: "build", to: "plan" } }))
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("the next request after the tools changed applies as cold, a second after the previous one", () =>
    Effect.gen(function*() {
      const state = freshState()
      yield* decide(state)
      yield* Scheduler.use((scheduler) => scheduler.toolsChanged)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* decide(state), "cold")
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("a change of the tools makes one request cold, not the ones after it", () =>
    Effect.gen(function*() {
      const state = freshState()
      yield* decide(state)
      yield* Scheduler.use((scheduler) => scheduler.toolsChanged)
      yield* decide(state)
      yield* TestClock.adjust("1 second")
      assert.isUndefined(yield* decide(state))
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("a change of the tools makes the next request of every session cold", () =>
    Effect.gen(function*() {
      const first = freshState()
      const second = fromFile(emptySessionFile("ses_other", 0), false)
      yield* decide(first)
      yield* decide(second)
      yield* Scheduler.use((scheduler) => scheduler.toolsChanged)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* decide(first), "cold")
      assert.strictEqual(yield* decide(second), "cold")
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("a session this process first sees after a change of the tools is not taken as cold for it", () =>
    Effect.gen(function*() {
      yield* Scheduler.use((scheduler) => scheduler.toolsChanged)
      yield* TestClock.adjust("10 minutes")
      assert.isUndefined(yield* decide(freshState(), {}, [10 * 60_000 - 60_000]))
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("the first request after local midnight applies as cold, a minute after the previous one", () =>
    Effect.gen(function*() {
      const state = freshState()
      yield* TestClock.setTime(new Date(2026, 10, 25, 23, 59, 30).getTime())
      yield* decide(state)
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* decide(state), "cold")
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("the first request in this process on the day after the history's latest request is cold, within ttlSeconds", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(new Date(2026, 10, 26, 0, 1).getTime())
      assert.strictEqual(yield* decide(freshState(), {}, [new Date(2026, 10, 25, 23, 59).getTime()]), "cold")
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
      assert.isUndefined(yield* decide(state, { pendingTokens: 0 }))
      assert.strictEqual(state.lastRequestAt, 0)
      yield* TestClock.adjust("1 minute")
      assert.isUndefined(yield* decide(state))
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("a batch of minPruneTokens whose rewrite costs nothing extra applies on a warm cache", () =>
    Effect.gen(function*() {
      const state = freshState()
      yield* decide(state)
      yield* TestClock.adjust("1 minute")
      const change = { tokensAfter: 5000, nearEnd: true }
      assert.strictEqual(yield* decide(state, { pendingTokens: 5000, contextTokens: 100_000, change }), "break-even")
    }).pipe(Effect.provide(schedulerWith())))

  /**
   * The same batch on `requests` requests a minute apart: rewriting 10k after a 5k prune costs 5k x 1.15 = 5750 extra;
   * waiting costs 5k x 0.1 = 500 per request; the session's pace (one warm run so far) expects the cache to serve as
   * many requests again as it has. The triggers of each request, and the state after them.
   */
  const sameBatch = (requests: number) =>
    Effect.gen(function*() {
      const state = freshState()
      const request = { pendingTokens: 5000, contextTokens: 10_000, change: { tokensAfter: 10_000, nearEnd: false } }
      const triggers: Array<string | undefined> = []
      for (let i = 0; i < requests; i++) {
        triggers.push(yield* decide(state, request))
        yield* TestClock.adjust("1 minute")
      }
      return { state, triggers }
    })

  it.effect("a batch that does not pay back waits until what waiting cost adds up to twice the rebuild", () =>
    Effect.gen(function*() {
      const { state, triggers } = yield* sameBatch(25)
      // The first request is cold; then 23 requests wait (23 x 500 = 11,500 = 2 x 5750, cache.patience's default),
      // the 25th applies.
      assert.deepStrictEqual(triggers, ["cold", ...Array(23).fill(undefined), "break-even"])
      assert.strictEqual(state.waited, 0)
    }).pipe(Effect.provide(schedulerWith({ pressure: 1 }))))

  it.effect("with cache.patience 1, what waiting cost has to add up to the rebuild once", () =>
    Effect.gen(function*() {
      const { triggers } = yield* sameBatch(14)
      // 12 x 500 = 6000 >= 5750 after the 12th waiting request: the 14th applies.
      assert.deepStrictEqual(triggers, ["cold", ...Array(12).fill(undefined), "break-even"])
    }).pipe(Effect.provide(schedulerWith({ pressure: 1, patience: 1 }))))

  it.effect("the session's pace comes from its history's requests the first time this process sees it", () =>
    Effect.gen(function*() {
      yield* TestClock.adjust("60 minutes")
      const state = freshState()
      const minute = 60_000
      yield* decide(state, {}, [0, minute, 2 * minute, 30 * minute, 31 * minute, 59 * minute])
      assert.deepStrictEqual(state.pace, { requests: 7, coldGaps: 2, run: 2 })
      assert.strictEqual(yield* Scheduler.use((scheduler) => Effect.succeed(scheduler.horizon(state))), 7 / 3)
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("the pricing follows the model, unless cache.pricing names one", () =>
    Effect.gen(function*() {
      const state = freshState()
      const profile = () => Scheduler.use((scheduler) => Effect.succeed(scheduler.profile(state).name))
      state.model = model("openai", 200_000)
      assert.strictEqual(yield* profile(), "openai")
      state.model = model("anthropic", 200_000)
      assert.strictEqual(yield* profile(), "anthropic")
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("cache.pricing overrides the model's", () =>
    Effect.gen(function*() {
      const state = freshState()
      state.model = model("openai", 200_000)
      assert.strictEqual(
        yield* Scheduler.use((scheduler) => Effect.succeed(scheduler.profile(state).name)),
        "anthropic-1h"
      )
    }).pipe(Effect.provide(schedulerWith({ pricing: "anthropic-1h" }))))

  it.effect("a context at the pressure share of the model's window applies on a warm cache", () =>
    Effect.gen(function*() {
      const state = freshState()
      state.model = model("anthropic", 200_000)
      yield* decide(state)
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* decide(state), "pressure")
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("a model without a known window is never under pressure", () =>
    Effect.gen(function*() {
      const state = freshState()
      state.model = model("anthropic", undefined)
      yield* decide(state)
      yield* TestClock.adjust("1 minute")
      assert.isUndefined(yield* decide(state, { contextTokens: 1_000_000 }))
    }).pipe(Effect.provide(schedulerWith())))

  it.effect("a github-copilot model applies at once on a warm cache", () =>
    Effect.gen(function*() {
      const state = freshState()
      state.model = model("github-copilot", 1_000_000)
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
