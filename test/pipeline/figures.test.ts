import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import fc from "fast-check"
import { figuresOf } from "../../src/engine/figures.ts"
import { SessionStore } from "../../src/services/SessionStore.ts"
import { ToolCache } from "../../src/services/ToolCache.ts"
import { build, generatedConfig, historySpec } from "../support/generate.ts"
import { pluginUnder, tempDir } from "../support/layers.ts"
import { projectConfig } from "../support/pluginTest.ts"
import { send } from "./helpers.ts"

const session = "ses_figures0000000000000001"

/**
 * The figures every report shows (src/engine/figures.ts) after each request of a growing session: the request path
 * keeps them in step with what it prunes, and they must say what the stored prunes say.
 */
describe("the figures after every request", () => {
  it.effect("count the stored prunes of the calls in the request, and those not sent yet", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(fc.tuple(historySpec({ maxMessages: 14 }), generatedConfig), ([spec, config]) =>
          Effect.runPromise(Effect.scoped(Effect.gen(function*() {
            const messages = build(spec, session)
            const root = yield* tempDir
            yield* projectConfig(root, { ...config, strategies: { repeats: { enabled: true } } })
            yield* Effect.gen(function*() {
              const store = yield* SessionStore
              const cache = yield* ToolCache
              for (let n = 1; n <= messages.length; n++) {
                yield* send(structuredClone(messages.slice(0, n)))
                const index = Option.getOrUndefined(yield* cache.latest(session))
                yield* store.use(session, (state) =>
                  Effect.sync(() => {
                    const figures = figuresOf(state, index)
                    const inView = [...state.pruned].filter(([callID]) =>
                      index?.byCallId.has(callID) ?? true
                    )
                    const queued = inView.filter(([callID]) => state.undelivered.has(callID))
                    const sum = (entries: typeof inView) =>
                      entries.reduce((total, [, record]) => total + record.tokens, 0)
                    // A folded call counts once: under its own prune, or as folded when its fold alone takes it out.
                    const folds = foldsOf(state, (callID) => index?.byCallId.has(callID) ?? true)
                    assert.deepStrictEqual(figures.inEffect, {
                      calls: inView.length + folds.all.calls,
                      tokens: sum(inView) + folds.all.tokens
                    })
                    assert.strictEqual(figures.queued.calls - folds.queued.calls, queued.length)
                    assert.strictEqual(figures.queued.tokens - folds.queued.tokens, sum(queued))
                  }))
              }
            }).pipe(Effect.provide(pluginUnder(root)))
          })))),
        { numRuns: 40 }
      )
    ))
})

/** The folds' tokens, and their calls that no prune of their own takes out: all of them, and those not sent yet. */
const foldsOf = (
  state: {
    readonly folds: ReadonlyMap<string, { calls: ReadonlyArray<string>; tokens: number }>
    readonly undeliveredFolds: ReadonlySet<string>
    readonly pruned: ReadonlyMap<string, unknown>
  },
  present: (callID: string) => boolean
) => {
  const all = { calls: 0, tokens: 0 }
  const queued = { calls: 0, tokens: 0 }
  for (const [key, record] of state.folds) {
    const only = record.calls.filter((callID) => !state.pruned.has(callID) && present(callID)).length
    all.calls += only
    all.tokens += record.tokens
    if (!state.undeliveredFolds.has(key)) continue
    queued.calls += only
    queued.tokens += record.tokens
  }
  return { all, queued }
}
