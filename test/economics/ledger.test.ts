import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import type { ToolCall } from "../../src/engine/calls.ts"
import { idHandle, inputPlaceholder, outputPlaceholder, recallHandle } from "../../src/engine/placeholders.ts"
import type { Reason } from "../../src/engine/strategies/candidate.ts"
import { dcp } from "../../src/hooks/command.ts"
import { discard, extract } from "../../src/hooks/tools.ts"
import { Ledger, type Prune } from "../../src/services/Ledger.ts"
import { Persistence, PersistenceError } from "../../src/services/Persistence.ts"
import { estimateTokens } from "../../src/services/Tokenizer.ts"
import { emptySessionFile } from "../../src/state/schema.ts"
import { fromFile, type SessionState } from "../../src/state/session.ts"
import { assistant, fresh, sessionID, tool, user } from "../support/history.ts"
import { pluginUnder, tempDir } from "../support/layers.ts"
import { call as makeCall, worktree } from "../engine/support.ts"
import { pipelineUnder, send, stateOf, withoutTail } from "../pipeline/helpers.ts"
import { autoUnder, read } from "./support.ts"

const stateFor = (id: string): SessionState => fromFile(emptySessionFile(id, 0), false)

const readCall = (callID: string, outputTokens = 500) =>
  makeCall({ callID, tool: "read", input: { filePath: `${worktree}/src/${callID}.ts` }, outputTokens })
const bashCall = (callID: string, outputTokens = 500) =>
  makeCall({ callID, tool: "bash", input: { command: `npm run ${callID}` }, outputTokens })

const prune = (call: ToolCall, reason: Reason, id: number): Prune => ({ call, reason, id })

/** The plugin's Ledger under a fresh root, with the estimate tokenizer (four characters a token). */
const withLedger = <A, E, R>(program: (ledger: Ledger["Service"]) => Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const root = yield* tempDir
    return yield* Ledger.use(program).pipe(Effect.provide(pluginUnder(root)))
  }).pipe(Effect.scoped)

describe("Ledger.saving", () => {
  it.effect("is the output's tokens less the placeholder's", () =>
    withLedger((ledger) =>
      Effect.gen(function*() {
        const call = readCall("a", 500)
        const placeholder = estimateTokens(outputPlaceholder(call, "discard", 7, recallHandle))
        assert.strictEqual(ledger.saving(call, "discard", 7, recallHandle), 500 - placeholder)
      })
    ))

  it.effect("for a superseded write, is the content's tokens less the input placeholder's", () =>
    withLedger((ledger) =>
      Effect.gen(function*() {
        const call = makeCall({
          tool: "write",
          input: { filePath: "src/a.ts", content: "x".repeat(4000) },
          inputTokens: { filePath: 2, content: 1000 }
        })
        const placeholder = estimateTokens(inputPlaceholder(call, "supersedeWrites", "content", 3, recallHandle))
        assert.strictEqual(ledger.saving(call, "supersedeWrites", 3, recallHandle), 1000 - placeholder)
      })
    ))

  it.effect("depends on the handle the placeholder carries", () =>
    withLedger((ledger) =>
      Effect.gen(function*() {
        const call = readCall("a", 500)
        const withId = 500 - estimateTokens(outputPlaceholder(call, "discard", 7, idHandle))
        assert.strictEqual(ledger.saving(call, "discard", 7, idHandle), withId)
      })
    ))

  it.effect("is never negative: an output smaller than its placeholder saves 0", () =>
    withLedger((ledger) =>
      Effect.gen(function*() {
        assert.strictEqual(ledger.saving(readCall("a", 2), "deduplication", 1, recallHandle), 0)
      })
    ))

  it.effect("is 0 for a call with nothing to replace", () =>
    withLedger((ledger) =>
      Effect.gen(function*() {
        const running = makeCall({ tool: "bash", input: { command: "npm run dev" }, status: "running" })
        const nonText = makeCall({ tool: "bash", input: { command: "ls" }, hasTextOutput: false })
        assert.strictEqual(ledger.saving(running, "discard", 1, recallHandle), 0)
        assert.strictEqual(ledger.saving(nonText, "discard", 2, recallHandle), 0)
      })
    ))
})

describe("Ledger.record", () => {
  it.effect("marks each call pruned with its saving, and returns what it recorded", () =>
    withLedger((ledger) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const call = readCall("a", 500)
        const saving = ledger.saving(call, "discard", 1, recallHandle)
        const recorded = yield* ledger.record(state, [prune(call, "discard", 1)], recallHandle)
        assert.deepStrictEqual(recorded.map((entry) => [entry.id, entry.tool, entry.reason, entry.tokens]), [[1, "read", "discard", saving]])
        assert.strictEqual(state.pruned.get("a")?.tokens, saving)
        assert.strictEqual(state.pruned.get("a")?.reason, "discard")
      })
    ))

  it.effect("does not record an automatic prune that would make the request bigger (minSaving)", () =>
    withLedger((ledger) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const recorded = yield* ledger.record(state, [prune(readCall("tiny", 2), "deduplication", 1)], recallHandle, { minSaving: 1 })
        assert.deepStrictEqual(recorded, [])
        assert.strictEqual(state.pruned.size, 0)
        assert.strictEqual(state.stats.calls, 0)
        assert.strictEqual(state.stats.applications.count, 0)
        assert.isFalse(state.dirty)
      })
    ))

  it.effect("records a prune saving exactly minSaving", () =>
    withLedger((ledger) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const call = readCall("a", 500)
        const saving = ledger.saving(call, "deduplication", 1, recallHandle)
        const recorded = yield* ledger.record(state, [prune(call, "deduplication", 1)], recallHandle, { minSaving: saving })
        assert.strictEqual(recorded.length, 1)
      })
    ))

  it.effect("skips calls already pruned: a prune is counted once", () =>
    withLedger((ledger) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const call = readCall("a")
        yield* ledger.record(state, [prune(call, "discard", 1)], recallHandle)
        const again = yield* ledger.record(state, [prune(call, "extract", 1)], recallHandle)
        assert.deepStrictEqual(again, [])
        assert.strictEqual(state.stats.calls, 1)
        assert.strictEqual(state.pruned.get("a")?.reason, "discard")
      })
    ))

  it.effect("tallies the session's savings by reason and by tool", () =>
    withLedger((ledger) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const calls = [readCall("a", 500), readCall("b", 700), bashCall("c", 900)]
        const [a, b, c] = calls.map((call, i) =>
          ledger.saving(call, i === 2 ? "discard" : "deduplication", i + 1, recallHandle))
        yield* ledger.record(state, [prune(calls[0]!, "deduplication", 1), prune(calls[1]!, "deduplication", 2)], recallHandle)
        yield* ledger.record(state, [prune(calls[2]!, "discard", 3)], recallHandle)
        assert.strictEqual(state.stats.calls, 3)
        assert.strictEqual(state.stats.tokens, a! + b! + c!)
        assert.deepStrictEqual(state.stats.byReason, {
          deduplication: { calls: 2, tokens: a! + b! },
          discard: { calls: 1, tokens: c! }
        })
        assert.deepStrictEqual(state.stats.byTool, { read: { calls: 2, tokens: a! + b! }, bash: { calls: 1, tokens: c! } })
      })
    ))

  it.effect("notes the last prune: reason, calls and tokens", () =>
    withLedger((ledger) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        yield* ledger.record(state, [prune(readCall("a"), "discard", 1)], recallHandle)
        const recorded = yield* ledger.record(state, [prune(readCall("b"), "sweep", 2), prune(readCall("c"), "sweep", 3)], recallHandle)
        const { at: _at, ...last } = state.stats.lastPrune!
        assert.deepStrictEqual(last, { reason: "sweep", calls: 2, tokens: recorded[0]!.tokens + recorded[1]!.tokens })
      })
    ))

  it.effect("counts an application on a warm cache with the tokens rebuilt", () =>
    withLedger((ledger) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        yield* ledger.record(state, [prune(readCall("a"), "deduplication", 1)], recallHandle, {
          minSaving: 1,
          rebuild: { cold: false, tokens: 1234 }
        })
        assert.deepStrictEqual(state.stats.applications, { count: 1, cold: 0, rebuiltTokens: 1234 })
      })
    ))

  it.effect("counts an application on a cold cache as cold, with nothing rebuilt", () =>
    withLedger((ledger) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        yield* ledger.record(state, [prune(readCall("a"), "deduplication", 1)], recallHandle, {
          minSaving: 1,
          rebuild: { cold: true, tokens: 1234 }
        })
        assert.deepStrictEqual(state.stats.applications, { count: 1, cold: 1, rebuiltTokens: 0 })
      })
    ))

  it.effect("counts no application when nothing was recorded", () =>
    withLedger((ledger) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        yield* ledger.record(state, [], recallHandle, { minSaving: 1, rebuild: { cold: false, tokens: 500 } })
        assert.deepStrictEqual(state.stats.applications, { count: 0, cold: 0, rebuiltTokens: 0 })
      })
    ))
})

describe("Ledger.lifetime", () => {
  it.effect("starts at zero", () =>
    withLedger((ledger) =>
      Effect.gen(function*() {
        const lifetime = yield* ledger.lifetime
        assert.deepStrictEqual([lifetime.sessions, lifetime.calls, lifetime.tokens], [0, 0, 0])
      })
    ))

  it.effect("adds every record, counting a session once", () =>
    withLedger((ledger) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const first = yield* ledger.record(state, [prune(readCall("a"), "deduplication", 1)], recallHandle)
        const second = yield* ledger.record(state, [prune(readCall("b"), "discard", 2)], recallHandle)
        const lifetime = yield* ledger.lifetime
        assert.strictEqual(lifetime.sessions, 1)
        assert.strictEqual(lifetime.calls, 2)
        assert.strictEqual(lifetime.tokens, first[0]!.tokens + second[0]!.tokens)
        assert.deepStrictEqual(lifetime.byReason, {
          deduplication: { calls: 1, tokens: first[0]!.tokens },
          discard: { calls: 1, tokens: second[0]!.tokens }
        })
      })
    ))

  it.effect("concurrent records for two sessions add up", () =>
    withLedger((ledger) =>
      Effect.gen(function*() {
        const one = stateFor("ses_one")
        const two = stateFor("ses_two")
        const recorded = yield* Effect.all([
          ledger.record(one, [prune(readCall("a", 500), "discard", 1), prune(readCall("b", 600), "discard", 2)], recallHandle),
          ledger.record(two, [prune(bashCall("c", 700), "sweep", 1)], recallHandle),
          ledger.record(two, [prune(bashCall("d", 800), "sweep", 2)], recallHandle)
        ], { concurrency: "unbounded" })
        const tokens = recorded.flat().reduce((sum, entry) => sum + entry.tokens, 0)
        const lifetime = yield* ledger.lifetime
        assert.deepStrictEqual([lifetime.sessions, lifetime.calls, lifetime.tokens], [2, 4, tokens])
        assert.strictEqual(lifetime.byReason.sweep?.calls, 2)
      })
    ))

  it.effect("includes deltas that could not be written yet", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const lifetimeUnwritable = Layer.effect(
        Persistence,
        Effect.gen(function*() {
          const inner = yield* Persistence
          return Persistence.of({
            ...inner,
            addToLifetime: () => Effect.fail(new PersistenceError({ operation: "lock", path: "lifetime", cause: new Error("busy") }))
          })
        })
      ).pipe(Layer.provide(Persistence.layerMemory))
      const [recorded, lifetime] = yield* Effect.gen(function*() {
        const ledger = yield* Ledger
        const recorded = yield* ledger.record(stateFor("ses_a"), [prune(readCall("a"), "discard", 1)], recallHandle)
        yield* ledger.flush
        return [recorded, yield* ledger.lifetime] as const
      }).pipe(Effect.provide(pluginUnder(root, { persistence: lifetimeUnwritable })))
      assert.deepStrictEqual([lifetime.sessions, lifetime.calls, lifetime.tokens], [1, 1, recorded[0]!.tokens])
    }).pipe(Effect.scoped))

  it.effect("survives a restart: a new layer on the same root reads the same totals", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const before = yield* Ledger.use((ledger) =>
        ledger.record(stateFor("ses_a"), [prune(readCall("a"), "discard", 1), prune(readCall("b"), "discard", 2)], recallHandle).pipe(
          Effect.andThen(ledger.lifetime)
        )
      ).pipe(Effect.provide(pluginUnder(root)))
      const after = yield* Ledger.use((ledger) => ledger.lifetime).pipe(Effect.provide(pluginUnder(root)))
      assert.strictEqual(after.calls, 2)
      assert.deepStrictEqual(
        { sessions: after.sessions, calls: after.calls, tokens: after.tokens, byReason: after.byReason },
        { sessions: before.sessions, calls: before.calls, tokens: before.tokens, byReason: before.byReason }
      )
    }).pipe(Effect.scoped))

  it.effect("adds to the totals written before a restart", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* Ledger.use((ledger) => ledger.record(stateFor("ses_a"), [prune(readCall("a"), "discard", 1)], recallHandle)).pipe(
        Effect.provide(pluginUnder(root))
      )
      const after = yield* Ledger.use((ledger) =>
        ledger.record(stateFor("ses_b"), [prune(readCall("b"), "discard", 1)], recallHandle).pipe(Effect.andThen(ledger.lifetime))
      ).pipe(Effect.provide(pluginUnder(root)))
      assert.deepStrictEqual([after.sessions, after.calls], [2, 2])
    }).pipe(Effect.scoped))
})

describe("the ledger through the transform", () => {
  const history = [
    user("list twice"),
    assistant([
      tool({ tool: "bash", callID: "c1", input: { command: "ls" }, output: "a.ts" }),
      tool({ tool: "bash", callID: "c2", input: { command: "ls" }, output: "a.ts" })
    ])
  ]

  it.effect("a duplicate smaller than its placeholder is not pruned, even in immediate mode", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const [sent, state] = yield* Effect.all([send(fresh(history)), stateOf(sessionID)]).pipe(
        Effect.provide(pipelineUnder(root))
      )
      assert.deepStrictEqual(withoutTail(sent), history)
      assert.deepStrictEqual(state.pruned, {})
      assert.strictEqual(state.stats.applications.count, 0)
    }).pipe(Effect.scoped))
})

describe("applications of prunes the model or the user asks for", () => {
  /** Four reads of different files, about 2.5k tokens each: IDs 1 to 4. */
  const reads = [
    user("read four files"),
    ...["a", "b", "c", "d"].map((name, i) => assistant([read(`c${i + 1}`, `src/${name}.ts`)]))
  ]

  it.effect("a discard counts as an application on a warm cache, with the cache it makes the provider rebuild", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const state = yield* Effect.gen(function*() {
        yield* send(fresh(reads))
        yield* discard(sessionID, ["noise", "3"])
        return yield* stateOf(sessionID)
      }).pipe(Effect.provide(autoUnder(root)))
      assert.strictEqual(state.stats.applications.count, 1)
      assert.strictEqual(state.stats.applications.cold, 0)
      // From the third of four calls to the end: about half of a context of about 10k tokens.
      assert.isAbove(state.stats.applications.rebuiltTokens, 4000)
      assert.isBelow(state.stats.applications.rebuiltTokens, 7000)
    }).pipe(Effect.scoped))

  it.effect("an extract counts the cache it makes the provider rebuild", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const state = yield* Effect.gen(function*() {
        yield* send(fresh(reads))
        yield* extract(sessionID, ["1"], ["a.ts: nothing relevant"])
        return yield* stateOf(sessionID)
      }).pipe(Effect.provide(autoUnder(root)))
      assert.strictEqual(state.stats.applications.count, 1)
      assert.isAbove(state.stats.applications.rebuiltTokens, 9000)
    }).pipe(Effect.scoped))

  it.effect("a sweep on a warm cache counts the cache it makes the provider rebuild", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const state = yield* Effect.gen(function*() {
        yield* send(fresh(reads))
        yield* TestClock.adjust("1 minute")
        yield* dcp(sessionID, "sweep 1")
        return yield* stateOf(sessionID)
      }).pipe(Effect.provide(autoUnder(root)))
      assert.strictEqual(state.stats.applications.count, 1)
      assert.strictEqual(state.stats.applications.cold, 0)
      assert.isAbove(state.stats.applications.rebuiltTokens, 0)
    }).pipe(Effect.scoped))

  it.effect("a sweep after the cache expired counts as cold, with nothing rebuilt", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const state = yield* Effect.gen(function*() {
        yield* send(fresh(reads))
        yield* TestClock.adjust("6 minutes")
        yield* dcp(sessionID, "sweep 1")
        return yield* stateOf(sessionID)
      }).pipe(Effect.provide(autoUnder(root)))
      assert.deepStrictEqual(state.stats.applications, { count: 1, cold: 1, rebuiltTokens: 0 })
    }).pipe(Effect.scoped))
})
