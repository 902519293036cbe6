import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Layer, type Scope } from "effect"
import { replayedClock } from "../../src/simulator/clock.ts"
import fc from "fast-check"
import { build, type HistorySpec, historySpec } from "../support/generate.ts"
import type { Msg } from "../support/history.ts"
import { pluginUnder, tempDir } from "../support/layers.ts"
import { send, stateOf } from "../pipeline/helpers.ts"
import { projectConfig } from "../support/pluginTest.ts"
import { syntheticId } from "../support/history.ts"

/**
 * The prompt cache only pays when what a request sent is sent again, byte for byte, by every later request: OpenCode
 * places the provider's cache breakpoints on the last two messages, so any earlier byte that moves or changes makes
 * every entry after it useless. The invariant, request after request of generated sessions: every message the
 * previous request sent (its trailing note aside) is sent again identical, except the tool parts of calls whose prune
 * this request applies and the messages of a turn it folds; and the previous request's messages come first, in order.
 */

const session = "ses_appendonly000000000000001"

interface Case {
  readonly spec: HistorySpec
  readonly config: object
  /** Minutes between consecutive requests: some longer than the cache's life. */
  readonly pauses: ReadonlyArray<number>
}

const cases: fc.Arbitrary<Case> = fc.record({
  spec: historySpec({ maxMessages: 20 }).map((spec) => ({
    // A compaction replaces the history OpenCode sends: the invariant holds between compactions.
    messages: spec.messages.map((message) => (message.kind === "assistant" ? { ...message, summary: false } : message))
  })),
  config: fc.record({
    cache: fc.record({
      mode: fc.constantFrom("auto", "immediate"),
      minPruneTokens: fc.constantFrom(0, 2000),
      horizon: fc.constantFrom("auto", 1000)
    }),
    strategies: fc.record({
      staleOutputs: fc.record({
        trigger: fc.constantFrom(0, 2000, 20_000),
        keepRecent: fc.constantFrom(1, 3),
        keepFiles: fc.constantFrom(0, 2),
        clearAtLeast: fc.constantFrom(0, 500)
      }),
      repeats: fc.record({ enabled: fc.boolean() })
    }),
    tools: fc.record({
      settings: fc.record({ nudgeFrequency: fc.constantFrom(1, 3), nudgeMinTokens: fc.constantFrom(0, 8000) })
    })
  }),
  pauses: fc.array(fc.constantFrom(0, 1, 1, 1, 10), { minLength: 30, maxLength: 30 })
})

const withoutNote = (messages: ReadonlyArray<Msg>) =>
  messages.length > 0 && messages[messages.length - 1]!.info.id === syntheticId ? messages.slice(0, -1) : [...messages]

/** Where `next` breaks the invariant against `previous`, or undefined. */
const violation = (
  previous: ReadonlyArray<Msg>,
  next: ReadonlyArray<Msg>,
  applied: ReadonlySet<string>,
  folded: ReadonlySet<string> = new Set()
): string | undefined => {
  const sent = withoutNote(previous)
  if (next.length < sent.length) return `request shrank from ${sent.length} to ${next.length} messages`
  const inFolded = turnsOf(next, folded)
  for (let m = 0; m < sent.length; m++) {
    const before = sent[m]!
    const after = next[m]!
    if (JSON.stringify(before.info) !== JSON.stringify(after.info)) return `message ${m}: info changed`
    if (inFolded.has(m)) continue
    if (before.parts.length !== after.parts.length) return `message ${m}: part count changed`
    for (let p = 0; p < before.parts.length; p++) {
      const a = before.parts[p]!
      const b = after.parts[p]!
      if (JSON.stringify(a) === JSON.stringify(b)) continue
      if (b.type === "tool" && applied.has(String(b.callID))) continue
      return `message ${m} part ${p} (${String(a.type)} ${
        String(a.callID ?? "")
      }) changed without a prune applied to it:\n` +
        `  before: ${JSON.stringify(a).slice(0, 300)}\n  after:  ${JSON.stringify(b).slice(0, 300)}`
    }
  }
  return undefined
}

/** A message the user typed: what opens a turn. */
const typed = (message: Msg) =>
  message.info.role === "user" &&
  message.parts.some((part) => part.type === "text" && part.synthetic !== true && part.ignored !== true)

/** The indexes of the messages of the turns keyed (by the ID of the message that opens each) in `keys`. */
const turnsOf = (messages: ReadonlyArray<Msg>, keys: ReadonlySet<string>): Set<number> => {
  const found = new Set<number>()
  let inside = false
  for (let m = 0; m < messages.length; m++) {
    const message = messages[m]!
    if (m === 0 || typed(message)) inside = keys.has(String(message.info.id))
    if (inside) found.add(m)
  }
  return found
}

// Each generated case runs in its own scope, closed before the next case: its temp dirs and layers do not pile up.
const property = (check: (value: Case) => Effect.Effect<void, unknown, Scope.Scope>) =>
  Effect.promise(() =>
    fc.assert(
      fc.asyncProperty(cases, (value) => Effect.runPromise(Effect.scoped(check(value)))),
      { numRuns: 60 }
    )
  )

describe("what is sent is append-only", () => {
  it.effect("every request sends what the previous one sent, changed only where it applies a prune", () => {
    let foldsApplied = 0
    return Effect.tap(
      property(({ config, pauses, spec }) =>
        Effect.gen(function*() {
          const root = yield* tempDir
          yield* projectConfig(root, config)
          const history = build(spec, session)
          const time = { now: 0 }
          const clock = replayedClock(yield* Clock.clockWith((clock) => Effect.succeed(clock)), time)
          yield* Effect.gen(function*() {
            let previous: Array<Msg> | undefined
            let pruned = new Set<string>()
            let folds = new Set<string>()
            // One request per assistant message (what OpenCode sends before it), and a last one with everything.
            const ends = [
              ...history.flatMap((message, i) => (message.info.role === "assistant" ? [i] : [])),
              history.length
            ]
            for (const [k, end] of ends.entries()) {
              time.now += pauses[k % pauses.length]! * 60_000
              const sent = yield* send(structuredClone(history.slice(0, end)))
              const state = yield* stateOf(session)
              const now = new Set(Object.keys(state.pruned))
              const applied = new Set([...now].filter((callID) => !pruned.has(callID)))
              const foldsNow = new Set(Object.keys(state.folds))
              const folded = new Set([...foldsNow].filter((key) => !folds.has(key)))
              foldsApplied += folded.size
              if (previous !== undefined) {
                const problem = violation(previous, sent, applied, folded)
                assert.isUndefined(problem, `request ${k} of ${ends.length}: ${problem}`)
              }
              previous = sent
              pruned = now
              folds = foldsNow
            }
          }).pipe(Effect.provide(pluginUnder(root).pipe(Layer.provideMerge(Layer.succeed(Clock.Clock, clock)))))
        })
      ),
      () => Effect.sync(() => assert.isAbove(foldsApplied, 0, "some generated sessions fold old turns"))
    )
  })

  it("the check itself catches a message the previous request sent that changed", () => {
    const message = (id: string, output: string): Msg => ({
      info: { id, role: "assistant" },
      parts: [{ id: `${id}-p`, type: "tool", callID: `${id}-c`, state: { status: "completed", output } }]
    })
    const before = [message("a", "one"), message("b", "two")]
    assert.isUndefined(violation(before, [...before, message("c", "three")], new Set()))
    assert.isDefined(violation(before, [message("a", "one"), message("b", "TWO")], new Set()))
    assert.isUndefined(violation(before, [message("a", "one"), message("b", "[pruned]")], new Set(["b-c"])))
    assert.isDefined(violation(before, [message("a", "one")], new Set()))
  })
})
