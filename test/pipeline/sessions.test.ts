import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import fc from "fast-check"
import { event } from "../../src/hooks/session.ts"
import type { SessionFile } from "../../src/state/schema.ts"
import { build, historySpec } from "../support/generate.ts"
import { assistant, type Msg, tool, user } from "../support/history.ts"
import { notes, send, stateOf, pipelineTest } from "./helpers.ts"

const big = (label: string) => Array.from({ length: 150 }, (_, i) => `${label} ${i}: content of the file`).join("\n")

/** The requests of one session: each a longer copy of its history, as OpenCode sends them. */
const requestsOf = (history: ReadonlyArray<Msg>): Array<Array<Msg>> =>
  history.map((_, i) => structuredClone(history.slice(0, i + 1)))

/** Four sessions that use the same callIDs for different things, and prune different calls for different reasons. */
const sessions: Record<string, Array<Msg>> = {
  ses_dup: [
    user("read twice", { session: "ses_dup" }),
    assistant([tool({ tool: "read", callID: "c1", input: { filePath: "src/a.ts" }, output: big("a") })], {
      session: "ses_dup"
    }),
    assistant([tool({ tool: "read", callID: "c2", input: { filePath: "src/a.ts" }, output: big("a") })], {
      session: "ses_dup"
    })
  ],
  ses_write: [
    user("write and read", { session: "ses_write" }),
    assistant(
      [tool({ tool: "write", callID: "c1", input: { filePath: "src/b.ts", content: big("b") }, output: "ok" })],
      {
        session: "ses_write"
      }
    ),
    assistant([tool({ tool: "read", callID: "c2", input: { filePath: "src/b.ts" }, output: big("b") })], {
      session: "ses_write"
    })
  ],
  ses_plain: [
    user("just look", { session: "ses_plain" }),
    assistant([tool({ tool: "grep", callID: "c1", input: { pattern: "TODO" }, output: big("grep") })], {
      session: "ses_plain"
    }),
    assistant([tool({ tool: "glob", callID: "c2", input: { pattern: "**/*.ts" }, output: big("glob") })], {
      session: "ses_plain"
    })
  ],
  ses_other: [
    user("other ids", { session: "ses_other" }),
    assistant([
      tool({ tool: "bash", callID: "x1", input: { command: "ls" }, output: big("ls") }),
      tool({ tool: "bash", callID: "x2", input: { command: "ls" }, output: big("ls") })
    ], { session: "ses_other" })
  ]
}

/** What of a session's state must not depend on other sessions (times aside). */
const essentials = (state: SessionFile) => ({
  ids: state.ids,
  nextId: state.nextId,
  pruned: Object.fromEntries(
    Object.entries(state.pruned).map(([callID, record]) => [callID, [record.reason, record.tokens]])
  ),
  calls: state.stats.calls,
  tokens: state.stats.tokens,
  byReason: state.stats.byReason,
  byTool: state.stats.byTool
})

/** Every request of one session in order, yielding between requests so sessions interleave. */
const runSession = (sessionID: string, history: ReadonlyArray<Msg>) =>
  Effect.gen(function*() {
    const outputs: Array<string> = []
    for (const request of requestsOf(history)) {
      outputs.push(JSON.stringify(yield* send(request)))
      yield* Effect.yieldNow
    }
    yield* event({ type: "session.idle", properties: { sessionID } })
    const state = essentials(yield* stateOf(sessionID))
    const sent = (yield* notes).filter((note) => note.sessionID === sessionID).map((note) => note.text)
    return { outputs, state, notes: sent }
  })

/** Each session alone, in a plugin of its own. */
const isolated = (all: Record<string, ReadonlyArray<Msg>>) =>
  Effect.forEach(Object.entries(all), ([sessionID, history]) => pipelineTest(runSession(sessionID, history)))

/** All sessions at once, interleaved, on one plugin. */
const concurrent = (all: Record<string, ReadonlyArray<Msg>>) =>
  pipelineTest(
    Effect.all(Object.entries(all).map(([sessionID, history]) => runSession(sessionID, history)), {
      concurrency: "unbounded"
    })
  )

describe("parallel sessions", () => {
  it.effect("interleaved sessions on one plugin send exactly what each would send alone", () =>
    Effect.gen(function*() {
      const together = yield* concurrent(sessions)
      const alone = yield* isolated(sessions)
      assert.deepStrictEqual(together.map((run) => run.outputs), alone.map((run) => run.outputs))
    }))

  it.effect("IDs, prunes and stats of one session never appear in another", () =>
    Effect.gen(function*() {
      const [dup, write, plain, other] = yield* concurrent(sessions)
      assert.deepStrictEqual(dup!.state.ids, { c1: 1, c2: 2 })
      assert.deepStrictEqual(Object.keys(dup!.state.pruned), ["c1"])
      assert.deepStrictEqual(Object.keys(dup!.state.byReason), ["deduplication"])
      assert.deepStrictEqual(write!.state.ids, { c1: 1, c2: 2 })
      assert.deepStrictEqual(write!.state.pruned.c1?.[0], "supersedeWrites")
      assert.deepStrictEqual(Object.keys(write!.state.byReason), ["supersedeWrites"])
      assert.deepStrictEqual(plain!.state.pruned, {})
      assert.strictEqual(plain!.state.calls, 0)
      assert.deepStrictEqual(other!.state.ids, { x1: 1, x2: 2 })
      assert.deepStrictEqual(Object.keys(other!.state.pruned), ["x1"])
    }))

  it.effect("each session's note reports only its own prunes", () =>
    Effect.gen(function*() {
      const together = yield* concurrent(sessions)
      const alone = yield* isolated(sessions)
      assert.deepStrictEqual(together.map((run) => run.notes), alone.map((run) => run.notes))
      assert.deepStrictEqual(together[2]!.notes, [])
    }))

  it.effect("generated sessions interleaved on one plugin keep separate state", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(fc.array(historySpec({ maxMessages: 10 }), { minLength: 2, maxLength: 4 }), (specs) =>
          // Each generated case has its own scope, closed before the next: its temp dirs do not pile up.
          Effect.runPromise(Effect.scoped(Effect.gen(function*() {
            const all = Object.fromEntries(specs.map((spec, i) => [`ses_gen${i}`, build(spec, `ses_gen${i}`)]))
            const together = yield* concurrent(all)
            const alone = yield* isolated(all)
            assert.deepStrictEqual(together, alone)
          })))),
        { numRuns: 25 }
      )
    ))

  // With more sessions than SessionStore keeps in memory (32), a session evicted while its state is being written
  // must not be reloaded empty from disk (it once was: IDs restarted and the stale state overwrote the file).
  it.effect("more sessions than are kept in memory, interleaved on one plugin, keep their state", () =>
    Effect.gen(function*() {
      const specs = fc.sample(historySpec({ maxMessages: 12 }), { numRuns: 40, seed: 7 })
      const all = Object.fromEntries(specs.map((spec, i) => [`ses_many${i}`, build(spec, `ses_many${i}`)]))
      const together = yield* concurrent(all)
      const alone = yield* isolated(all)
      assert.deepStrictEqual(together.map((run) => run.state), alone.map((run) => run.state))
    }))
})
