import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import fc from "fast-check"
import type { ToolIndex } from "../../src/engine/calls.ts"
import { protectionFor } from "../../src/engine/request.ts"
import { trackView, type ViewState } from "../../src/engine/view.ts"
import { Paths } from "../../src/services/Paths.ts"
import { SessionStore } from "../../src/services/SessionStore.ts"
import { ToolCache } from "../../src/services/ToolCache.ts"
import { build, generatedConfig } from "../support/generate.ts"
import type { Msg } from "../support/history.ts"
import { eagerFolding, requestsOf, scenario } from "../support/hostChanges.ts"
import { tempDir } from "../support/layers.ts"
import { withRepeatsOf } from "../support/pointers.ts"
import { pipelineUnder, send } from "./helpers.ts"

const session = "ses_incremental0000000000001"

/**
 * What a view says of its request: the calls in it, what is pruned, folded and tagged, and its totals. Not the copies
 * and re-reads among the calls new in the latest pass: those are the pass's, for the request path to act on once.
 */
const summaryOf = (view: ViewState) => ({
  count: view.count,
  positions: [...view.positions].sort(([a], [b]) => a - b),
  tokens: view.tokens,
  prunedTokens: view.prunedTokens,
  // Prunes and folds in the order they were made, for the kept view; in the view's, for one derived afresh.
  folds: view.folds.map((fold) => [fold.key, fold.calls.map((call) => call.callID), fold.tokens] as const).sort((
    [a],
    [b]
  ) => a < b ? -1 : a > b ? 1 : 0),
  foldedTokens: view.foldedTokens,
  applied: view.applied.map((call, i) => [call.callID, view.appliedTexts[i]] as const).sort(([a], [b]) =>
    a < b ? -1 : a > b ? 1 : 0
  ),
  tagged: view.tagged.map((position, i) => [position, view.taggedTokens[i]] as const).sort(([a], [b]) => a - b),
  resultsSince: view.resultsSince,
  reReadTokens: view.reReadTokens
})

/**
 * The view the request path keeps from one request to the next (src/engine/view.ts: extended with the new calls while
 * the history only grows, noted as prunes and folds are made), after every request, against the view derived afresh
 * from the same request, index and state.
 */
describe("the view kept request after request", () => {
  it.effect(
    "is after every request the view derived afresh from it: through growth, undo, requests out of order, compactions, host changes, prunes and folds",
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(
            scenario({ maxMessages: 24, userWeight: 2 }),
            generatedConfig,
            fc.array(fc.boolean(), { minLength: 16, maxLength: 16 }),
            ({ spec, steps }, config, repeats) =>
              Effect.runPromise(Effect.scoped(Effect.gen(function*() {
                const root = yield* tempDir
                const settings = eagerFolding(config, { repeats: true, keepTurns: 1 })
                yield* Effect.gen(function*() {
                  const store = yield* SessionStore
                  const cache = yield* ToolCache
                  const paths = yield* Paths
                  for (const request of requestsOf(build(withRepeatsOf(spec, repeats), session), steps)) {
                    const before: Array<Msg> = structuredClone(request)
                    yield* send(request)
                    const index = Option.getOrUndefined(yield* cache.latest(session)) as ToolIndex | undefined
                    if (index === undefined) continue
                    yield* store.use(session, (state) =>
                      Effect.sync(() => {
                        const kept = state.viewState
                        if (kept === undefined) return
                        const afresh = trackView(undefined, {
                          calls: index.calls,
                          // As the next request over the same history would derive it: no call is new to it, so
                          // what the request path decided of this pass's new calls (a re-read, a repeat) is read from
                          // what it recorded.
                          pass: index.pass + 1,
                          previousPass: index.pass,
                          appendOnly: false,
                          pruned: state.pruned,
                          reReads: state.reReads,
                          revision: state.revision,
                          nudgeAfter: state.nudgeAfter,
                          config: kept.config,
                          protection: protectionFor(kept.config, paths, index),
                          recallHint: kept.recallHint,
                          messages: before,
                          folds: state.folds,
                          userTurns: index.userTurns,
                          byCallId: index.byCallId
                        })
                        const expected = summaryOf(afresh)
                        const actual = summaryOf(kept)
                        for (const key of Object.keys(expected) as Array<keyof typeof expected>) {
                          assert.deepStrictEqual(
                            actual[key],
                            expected[key],
                            `${key}: kept ${JSON.stringify(actual[key])}, afresh ${JSON.stringify(expected[key])}`
                          )
                        }
                      }))
                  }
                }).pipe(Effect.provide(pipelineUnder(root, settings)))
              })))
          ),
          { numRuns: 100 }
        )
      ),
    { timeout: 900_000 }
  )
})
