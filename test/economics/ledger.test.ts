import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import type { ToolCall } from "../../src/engine/calls.ts"
import type { PrunedCall } from "../../src/engine/notes.ts"
import { idOnlyHint, inputPlaceholder, outputPlaceholder, recallToolHint } from "../../src/engine/placeholders.ts"
import type { Reason } from "../../src/engine/reasons.ts"
import { dcp } from "../../src/hooks/command.ts"
import { discard, extract } from "../../src/hooks/tools.ts"
import { profiles } from "../../src/pricing/profiles.ts"
import { Ledger } from "../../src/services/Ledger.ts"
import { Notifier } from "../../src/services/Notifier.ts"
import { Persistence, PersistenceError } from "../../src/services/Persistence.ts"
import type { Delivery, Prune } from "../../src/engine/request.ts"
import { Pruner } from "../../src/services/Pruner.ts"
import { Tokenizer } from "../../src/services/Tokenizer.ts"
import { emptySessionFile } from "../../src/state/schema.ts"
import { fromFile, type SessionState } from "../../src/engine/session.ts"
import { assistant, fresh, sessionID, tool, user } from "../support/history.ts"
import { pluginUnder, tempDir } from "../support/layers.ts"
import { call as makeCall, worktree } from "../engine/support.ts"
import { notes, send, stateOf, withoutTail, pipelineTest } from "../pipeline/helpers.ts"
import { read, autoTest } from "./support.ts"
import { pluginTest } from "../support/pluginTest.ts"

const stateFor = (id: string): SessionState => fromFile(emptySessionFile(id, 0), false)

const readCall = (callID: string, outputTokens = 500, position = 0) =>
  makeCall({ callID, tool: "read", input: { filePath: `${worktree}/src/${callID}.ts` }, outputTokens, position })
const bashCall = (callID: string, outputTokens = 500) =>
  makeCall({ callID, tool: "bash", input: { command: `npm run ${callID}` }, outputTokens })

const prune = (call: ToolCall, reason: Reason, id: number): Prune => ({ call, reason, id })

/** A delivered prune as the ledger receives it. */
const entry = (id: number, reason: Reason, tokens: number, tool = "read"): PrunedCall => ({
  id,
  tool,
  keyParameter: `src/${id}.ts`,
  reason,
  tokens
})

const warm = { cold: false, rebuiltTokens: 0, cost: 0 } as const
const noReReads = { tokens: 0, first: [] } as const

/**
 * A request carrying `calls` on a warm Anthropic cache: 10k tokens, 1k of them the system prompt; its earliest change
 * leaves 4k tokens after it, too far back for the cache to find an earlier entry.
 */
const request = (calls: ReadonlyArray<ToolCall>, options: Partial<Delivery> = {}): Delivery => ({
  profile: profiles.anthropic,
  cold: false,
  calls,
  contextTokens: 10_000,
  systemTokens: 1_000,
  prunedTokens: 0,
  folds: [],
  reReads: noReReads,
  change: { tokensAfter: 4_000, nearEnd: false },
  ...options
})

/**
 * The plugin's Ledger and Pruner under a fresh root, with the estimate tokenizer (four characters a token), and the
 * count it estimates.
 */
const withBooks = <A, E, R>(
  program: (books: {
    readonly ledger: Ledger["Service"]
    readonly pruner: Pruner["Service"]
    readonly tokens: (text: string) => number
  }) => Effect.Effect<A, E, R>
) =>
  Effect.gen(function*() {
    const root = yield* tempDir
    return yield* Effect.gen(function*() {
      return yield* program({ ledger: yield* Ledger, pruner: yield* Pruner, tokens: (yield* Tokenizer).estimate })
    }).pipe(Effect.provide(pluginUnder(root)))
  })

describe("Ledger.saving", () => {
  it.effect("is the output's tokens less the placeholder's", () =>
    withBooks(({ ledger, tokens }) =>
      Effect.sync(() => {
        const call = readCall("a", 500)
        const placeholder = tokens(outputPlaceholder(call, "discard", 7, recallToolHint))
        assert.strictEqual(ledger.saving(call, "discard", 7, recallToolHint), 500 - placeholder)
      })
    ))

  it.effect("for a superseded write, is the content's tokens less the input placeholder's", () =>
    withBooks(({ ledger, tokens }) =>
      Effect.sync(() => {
        const call = makeCall({
          tool: "write",
          input: { filePath: "src/a.ts", content: "x".repeat(4000) },
          inputTokens: { filePath: 2, content: 1000 }
        })
        const placeholder = tokens(inputPlaceholder(call, "supersedeWrites", "content", 3, recallToolHint))
        assert.strictEqual(ledger.saving(call, "supersedeWrites", 3, recallToolHint), 1000 - placeholder)
      })
    ))

  it.effect("depends on the recall hint the placeholder carries", () =>
    withBooks(({ ledger, tokens }) =>
      Effect.sync(() => {
        const call = readCall("a", 500)
        const withId = 500 - tokens(outputPlaceholder(call, "discard", 7, idOnlyHint))
        assert.strictEqual(ledger.saving(call, "discard", 7, idOnlyHint), withId)
      })
    ))

  it.effect("is never negative: an output smaller than its placeholder saves 0", () =>
    withBooks(({ ledger }) =>
      Effect.sync(() => {
        assert.strictEqual(ledger.saving(readCall("a", 2), "deduplication", 1, recallToolHint), 0)
      })
    ))

  it.effect("is 0 for a call with nothing to replace", () =>
    withBooks(({ ledger }) =>
      Effect.sync(() => {
        const running = makeCall({ tool: "bash", input: { command: "npm run dev" }, status: "running" })
        const nonText = makeCall({ tool: "bash", input: { command: "ls" }, hasTextOutput: false })
        assert.strictEqual(ledger.saving(running, "discard", 1, recallToolHint), 0)
        assert.strictEqual(ledger.saving(nonText, "discard", 2, recallToolHint), 0)
      })
    ))
})

describe("Pruner.apply", () => {
  it.effect("records each call pruned with its saving, pending until a request carries it, and returns what it recorded", () =>
    withBooks(({ ledger, pruner }) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const call = readCall("a", 500)
        const saving = ledger.saving(call, "discard", 1, recallToolHint)
        const recorded = yield* pruner.apply(state, [prune(call, "discard", 1)], recallToolHint)
        assert.deepStrictEqual(recorded.map((entry) => [entry.id, entry.tool, entry.reason, entry.tokens]), [[
          1,
          "read",
          "discard",
          saving
        ]])
        const { at: _at, ...record } = state.pruned.get("a")!
        assert.deepStrictEqual(record, { reason: "discard", tokens: saving, pending: true })
        assert.deepStrictEqual([...state.undelivered], ["a"])
      })
    ))

  it.effect("counts nothing: neither the session's statistics nor the lifetime totals", () =>
    withBooks(({ ledger, pruner }) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        yield* pruner.apply(state, [prune(readCall("a"), "discard", 1)], recallToolHint)
        const lifetime = yield* ledger.lifetime
        assert.deepStrictEqual(state.stats, emptySessionFile(state.sessionID, 0).stats)
        assert.deepStrictEqual([lifetime.sessions, lifetime.calls, lifetime.tokens], [0, 0, 0])
      })
    ))

  it.effect("does not record an automatic prune that would make the request bigger (minSaving)", () =>
    withBooks(({ pruner }) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const recorded = yield* pruner.apply(state, [prune(readCall("tiny", 2), "deduplication", 1)], recallToolHint, {
          minSaving: 1
        })
        assert.deepStrictEqual(recorded, [])
        assert.strictEqual(state.pruned.size, 0)
        assert.strictEqual(state.undelivered.size, 0)
        assert.isFalse(state.dirty)
      })
    ))

  it.effect("records a prune saving exactly minSaving", () =>
    withBooks(({ ledger, pruner }) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const call = readCall("a", 500)
        const saving = ledger.saving(call, "deduplication", 1, recallToolHint)
        const recorded = yield* pruner.apply(state, [prune(call, "deduplication", 1)], recallToolHint, {
          minSaving: saving
        })
        assert.strictEqual(recorded.length, 1)
      })
    ))

  it.effect("skips calls already pruned: the first prune stands", () =>
    withBooks(({ pruner }) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const call = readCall("a")
        yield* pruner.apply(state, [prune(call, "discard", 1)], recallToolHint)
        const again = yield* pruner.apply(state, [prune(call, "extract", 1)], recallToolHint)
        assert.deepStrictEqual(again, [])
        assert.strictEqual(state.pruned.get("a")?.reason, "discard")
      })
    ))
})

describe("Pruner.deliver", () => {
  it.effect("counts a pending prune in the session's statistics when a request carries it, and it is pending no more", () =>
    withBooks(({ pruner }) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const call = readCall("a")
        const [recorded] = yield* pruner.apply(state, [prune(call, "discard", 1)], recallToolHint)
        yield* pruner.deliver(state, request([call]))
        assert.deepStrictEqual([state.stats.calls, state.stats.tokens], [1, recorded!.tokens])
        assert.isUndefined(state.pruned.get("a")?.pending)
        assert.strictEqual(state.undelivered.size, 0)
      })
    ))

  it.effect("leaves pending the prunes of calls the request does not carry", () =>
    withBooks(({ pruner }) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const [a, b] = [readCall("a"), readCall("b")]
        yield* pruner.apply(state, [prune(a, "discard", 1), prune(b, "discard", 2)], recallToolHint)
        yield* pruner.deliver(state, request([a]))
        assert.strictEqual(state.stats.calls, 1)
        assert.isTrue(state.pruned.get("b")?.pending)
        assert.deepStrictEqual([...state.undelivered], ["b"])
      })
    ))

  it.effect("counts a prune once: later requests that carry it count nothing more", () =>
    withBooks(({ pruner }) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const call = readCall("a")
        yield* pruner.apply(state, [prune(call, "discard", 1)], recallToolHint)
        yield* pruner.deliver(state, request([call]))
        yield* pruner.deliver(state, request([call]))
        assert.strictEqual(state.stats.calls, 1)
        assert.strictEqual(state.stats.applications.count, 1)
      })
    ))

  it.effect("tallies the session's savings by reason and by tool", () =>
    withBooks(({ pruner }) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const calls = [readCall("a", 500), readCall("b", 700), bashCall("c", 900)]
        const first = yield* pruner.apply(state, [
          prune(calls[0]!, "deduplication", 1),
          prune(calls[1]!, "deduplication", 2)
        ], recallToolHint)
        yield* pruner.deliver(state, request(calls))
        const second = yield* pruner.apply(state, [prune(calls[2]!, "discard", 3)], recallToolHint)
        yield* pruner.deliver(state, request(calls))
        const [a, b, c] = [...first, ...second].map((entry) => entry.tokens)
        assert.strictEqual(state.stats.calls, 3)
        assert.strictEqual(state.stats.tokens, a! + b! + c!)
        assert.deepStrictEqual(state.stats.byReason, {
          deduplication: { calls: 2, tokens: a! + b! },
          discard: { calls: 1, tokens: c! }
        })
        assert.deepStrictEqual(state.stats.byTool, {
          read: { calls: 2, tokens: a! + b! },
          bash: { calls: 1, tokens: c! }
        })
      })
    ))

  it.effect("notes the last request's prunes: reason, calls and tokens", () =>
    withBooks(({ pruner }) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const calls = [readCall("a"), readCall("b"), readCall("c")]
        yield* pruner.apply(state, [prune(calls[0]!, "discard", 1)], recallToolHint)
        yield* pruner.deliver(state, request(calls))
        const recorded = yield* pruner.apply(
          state,
          [prune(calls[1]!, "sweep", 2), prune(calls[2]!, "sweep", 3)],
          recallToolHint
        )
        yield* pruner.deliver(state, request(calls))
        const { at: _at, ...last } = state.stats.lastPrune!
        assert.deepStrictEqual(last, { reason: "sweep", calls: 2, tokens: recorded[0]!.tokens + recorded[1]!.tokens })
      })
    ))

  it.effect("counts an application on a warm cache: under Anthropic's rules the provider rebuilds all after the system prompt", () =>
    withBooks(({ pruner }) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const call = readCall("a", 500, 3)
        yield* pruner.apply(state, [prune(call, "deduplication", 1)], recallToolHint)
        yield* pruner.deliver(state, request([call]))
        assert.deepStrictEqual(state.stats.applications, { count: 1, cold: 0, rebuiltTokens: 9_000 })
      })
    ))

  it.effect("under prefix caching, counts the cache rebuilt from the request's earliest change on", () =>
    withBooks(({ pruner }) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const calls = [readCall("a", 500, 1), readCall("b", 500, 3)]
        yield* pruner.apply(
          state,
          [prune(calls[1]!, "deduplication", 2), prune(calls[0]!, "deduplication", 1)],
          recallToolHint
        )
        const change = { tokensAfter: 3_000, nearEnd: true }
        yield* pruner.deliver(state, request(calls, { profile: profiles.openai, change }))
        assert.deepStrictEqual(state.stats.applications, { count: 1, cold: 0, rebuiltTokens: 3_000 })
      })
    ))

  it.effect("counts an application on a cold cache as cold, with nothing rebuilt", () =>
    withBooks(({ pruner }) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const call = readCall("a")
        yield* pruner.apply(state, [prune(call, "deduplication", 1)], recallToolHint)
        yield* pruner.deliver(state, request([call], { cold: true }))
        assert.deepStrictEqual(state.stats.applications, { count: 1, cold: 1, rebuiltTokens: 0 })
      })
    ))

  it.effect("a repeat, pruned in content sent for the first time, is counted but is no application: nothing cached changed", () =>
    withBooks(({ pruner }) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const call = readCall("b", 500, 1)
        yield* pruner.apply(state, [{ call, reason: "repeat", id: 2, of: { id: 1, kind: "same" } }], recallToolHint)
        yield* pruner.deliver(state, request([call]))
        assert.strictEqual(state.stats.calls, 1)
        assert.deepStrictEqual(state.stats.applications, { count: 0, cold: 0, rebuiltTokens: 0 })
        assert.strictEqual(state.stats.cost.rebuilt, 0)
      })
    ))

  it.effect("counts no application when the request carries no pending prune", () =>
    withBooks(({ pruner }) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        yield* pruner.deliver(state, request([readCall("a")]))
        assert.deepStrictEqual(state.stats.applications, { count: 0, cold: 0, rebuiltTokens: 0 })
        assert.strictEqual(state.stats.calls, 0)
      })
    ))

  it.effect("charges every request, whether or not it carries a new prune", () =>
    withBooks(({ pruner }) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        yield* pruner.deliver(state, request([readCall("a")], { prunedTokens: 1_000 }))
        yield* pruner.deliver(state, request([readCall("a")], { prunedTokens: 1_000 }))
        assert.strictEqual(state.stats.cost.requests, 2)
        assert.strictEqual(state.stats.cost.saved, 2 * 1_000 * profiles.anthropic.read)
      })
    ))

  it.effect("prices a warm application's rebuild at the write premium over the read price", () =>
    withBooks(({ pruner }) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const call = readCall("a", 500, 3)
        yield* pruner.apply(state, [prune(call, "deduplication", 1)], recallToolHint)
        yield* pruner.deliver(state, request([call]))
        assert.strictEqual(state.stats.cost.rebuilt, 9_000 * (profiles.anthropic.write - profiles.anthropic.read))
      })
    ))

  it.effect("reports the prunes it delivers in the session's next note, not before", () =>
    withBooks(({ pruner }) =>
      Effect.gen(function*() {
        const notifier = yield* Notifier
        const state = stateFor(sessionID)
        const call = readCall("a")
        yield* pruner.apply(state, [prune(call, "discard", 1)], recallToolHint)
        yield* notifier.idle(sessionID)
        const before = yield* notes
        yield* pruner.deliver(state, request([call]))
        yield* notifier.idle(sessionID)
        const after = yield* notes
        assert.strictEqual(before.length, 0)
        assert.strictEqual(after.length, 1)
        assert.include(after[0]!.text, "(1 discarded)")
      })
    ))

  it.effect("does not report a sweep: the user asked for it and was told", () =>
    withBooks(({ pruner }) =>
      Effect.gen(function*() {
        const notifier = yield* Notifier
        const state = stateFor(sessionID)
        const calls = [readCall("a"), readCall("b")]
        yield* pruner.apply(state, [prune(calls[0]!, "sweep", 1), prune(calls[1]!, "discard", 2)], recallToolHint)
        yield* pruner.deliver(state, request(calls))
        yield* notifier.idle(sessionID)
        const sent = yield* notes
        assert.deepStrictEqual(sent.map((note) => note.text.includes("swept")), [false])
        assert.include(sent[0]!.text, "(1 discarded)")
      })
    ))
})

describe("Pruner.restore", () => {
  it.effect("returns the tokens the prunes took out, and automatic rules leave the calls alone from then on", () =>
    withBooks(({ pruner }) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const calls = [readCall("a"), readCall("b")]
        const recorded = yield* pruner.apply(
          state,
          [prune(calls[0]!, "discard", 1), prune(calls[1]!, "discard", 2)],
          recallToolHint
        )
        const tokens = pruner.restore(state, ["a", "b", "unknown"])
        assert.strictEqual(tokens, recorded[0]!.tokens + recorded[1]!.tokens)
        assert.strictEqual(state.pruned.size, 0)
        assert.deepStrictEqual([...state.restored], ["a", "b"])
      })
    ))

  it.effect("a pending prune restored before any request carried it leaves no trace", () =>
    withBooks(({ ledger, pruner }) =>
      Effect.gen(function*() {
        const state = stateFor(sessionID)
        const call = readCall("a")
        yield* pruner.apply(state, [prune(call, "discard", 1)], recallToolHint)
        pruner.restore(state, ["a"])
        yield* pruner.deliver(state, request([call]))
        const lifetime = yield* ledger.lifetime
        assert.deepStrictEqual([state.stats.calls, state.stats.applications.count, state.pruned.size], [0, 0, 0])
        assert.strictEqual(lifetime.calls, 0)
      })
    ))

  it.effect("restoring a delivered prune keeps what it saved in the statistics", () =>
    withBooks(({ pruner }) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        const call = readCall("a")
        const recorded = yield* pruner.apply(state, [prune(call, "discard", 1)], recallToolHint)
        yield* pruner.deliver(state, request([call]))
        pruner.restore(state, ["a"])
        assert.deepStrictEqual([state.stats.calls, state.stats.tokens], [1, recorded[0]!.tokens])
      })
    ))
})

describe("Ledger.charge", () => {
  type Request = Parameters<Ledger["Service"]["charge"]>[1]
  const charge = (
    request: Omit<Request, "fresh" | "contextTokens" | "reReads"> & Partial<Pick<Request, "fresh" | "reReads">>
  ) =>
    withBooks(({ ledger }) =>
      Effect.sync(() => {
        const state = stateFor("ses_a")
        ledger.charge(state, { fresh: 0, contextTokens: 10_000, reReads: noReReads, ...request })
        return state.stats.cost
      })
    )

  it.effect("prices the pruned tokens of a warm request at the cache's read price, under the session's profile", () =>
    Effect.gen(function*() {
      const cost = yield* charge({ profile: profiles.anthropic, cold: false, pruned: 1_000 })
      assert.deepStrictEqual(cost, {
        profile: "anthropic",
        requests: 1,
        saved: 1_000 * profiles.anthropic.read,
        rebuilt: 0,
        reReads: 0,
        reRead: 0
      })
    }))

  it.effect("prices them at the write price when the cache had expired", () =>
    Effect.gen(function*() {
      const cost = yield* charge({ profile: profiles.anthropic, cold: true, pruned: 1_000 })
      assert.strictEqual(cost.saved, 1_000 * profiles.anthropic.write)
    }))

  it.effect("prices content sent for the first time at the write price on a warm cache", () =>
    Effect.gen(function*() {
      const cost = yield* charge({ profile: profiles.anthropic, cold: false, pruned: 1_000, fresh: 400 })
      assert.strictEqual(cost.saved, 600 * profiles.anthropic.read + 400 * profiles.anthropic.write)
    }))

  it.effect("saves nothing where the provider bills per request", () =>
    Effect.gen(function*() {
      const cost = yield* charge({ profile: profiles["per-request"], cold: false, pruned: 1_000 })
      assert.deepStrictEqual([cost.requests, cost.saved], [1, 0])
    }))

  it.effect("without a prompt cache, saves every pruned token at full price", () =>
    Effect.gen(function*() {
      const cost = yield* charge({ profile: profiles.none, cold: false, pruned: 1_000 })
      assert.strictEqual(cost.saved, 1_000)
    }))

  it.effect("a read of a masked file, first sent: the request that asked for it from the cache, the file written", () =>
    Effect.gen(function*() {
      const read = readCall("r", 600)
      // 10,000 tokens sent, the read among them: the model asked for it in a request of the others.
      const cost = yield* charge({
        profile: profiles.anthropic,
        cold: false,
        pruned: 1_000,
        reReads: { tokens: read.totalTokens, first: [read] }
      })
      assert.deepStrictEqual([cost.reReads, cost.reRead], [
        1,
        (10_000 - read.totalTokens) * profiles.anthropic.read + read.totalTokens * profiles.anthropic.write
      ])
    }))

  it.effect("records a read of a masked file first sent, with its tokens, for the requests after", () =>
    withBooks(({ ledger }) =>
      Effect.sync(() => {
        const state = stateFor("ses_a")
        const read = readCall("r", 600)
        ledger.charge(state, {
          profile: profiles.anthropic,
          cold: false,
          pruned: 1_000,
          fresh: 0,
          contextTokens: 10_000,
          reReads: { tokens: read.totalTokens, first: [read] }
        })
        assert.deepStrictEqual([...state.reReads], [["r", read.totalTokens]])
      })
    ))

  it.effect("a read of a masked file sent before costs its tokens from the cache, on every request", () =>
    Effect.gen(function*() {
      const cost = yield* charge({
        profile: profiles.anthropic,
        cold: false,
        pruned: 1_000,
        reReads: { tokens: 600, first: [] }
      })
      assert.deepStrictEqual([cost.reReads, cost.reRead, cost.saved], [
        0,
        600 * profiles.anthropic.read,
        1_000 * profiles.anthropic.read
      ])
    }))
})

describe("Ledger.lifetime", () => {
  it.effect("starts at zero", () =>
    withBooks(({ ledger }) =>
      Effect.gen(function*() {
        const lifetime = yield* ledger.lifetime
        assert.deepStrictEqual([lifetime.sessions, lifetime.calls, lifetime.tokens], [0, 0, 0])
      })
    ))

  it.effect("adds every delivery, counting a session once", () =>
    withBooks(({ ledger }) =>
      Effect.gen(function*() {
        const state = stateFor("ses_a")
        yield* ledger.deliver(state, [entry(1, "deduplication", 400)], warm)
        yield* ledger.deliver(state, [entry(2, "discard", 300)], warm)
        const lifetime = yield* ledger.lifetime
        assert.deepStrictEqual([lifetime.sessions, lifetime.calls, lifetime.tokens], [1, 2, 700])
        assert.deepStrictEqual(lifetime.byReason, {
          deduplication: { calls: 1, tokens: 400 },
          discard: { calls: 1, tokens: 300 }
        })
      })
    ))

  it.effect("concurrent deliveries for two sessions add up", () =>
    withBooks(({ ledger }) =>
      Effect.gen(function*() {
        const one = stateFor("ses_one")
        const two = stateFor("ses_two")
        yield* Effect.all([
          ledger.deliver(one, [entry(1, "discard", 500), entry(2, "discard", 600)], warm),
          ledger.deliver(two, [entry(1, "sweep", 700, "bash")], warm),
          ledger.deliver(two, [entry(2, "sweep", 800, "bash")], warm)
        ], { concurrency: "unbounded" })
        const lifetime = yield* ledger.lifetime
        assert.deepStrictEqual([lifetime.sessions, lifetime.calls, lifetime.tokens], [2, 4, 2_600])
        assert.deepStrictEqual(lifetime.byReason.sweep, { calls: 2, tokens: 1_500 })
      })
    ))

  it.effect("includes totals that could not be written yet", () =>
    Effect.gen(function*() {
      const lifetimeUnwritable = Layer.effect(
        Persistence,
        Effect.gen(function*() {
          const inner = yield* Persistence
          return Persistence.of({
            ...inner,
            recordLifetime: () =>
              Effect.fail(new PersistenceError({ operation: "lock", path: "lifetime", cause: new Error("busy") }))
          })
        })
      ).pipe(Layer.provide(Persistence.layer))
      const lifetime = yield* pluginTest(
        Effect.gen(function*() {
          const ledger = yield* Ledger
          yield* ledger.deliver(stateFor("ses_a"), [entry(1, "discard", 400)], warm)
          yield* ledger.flush
          return yield* ledger.lifetime
        }),
        { persistence: lifetimeUnwritable }
      )
      assert.deepStrictEqual([lifetime.sessions, lifetime.calls, lifetime.tokens], [1, 1, 400])
    }))

  it.effect("survives a restart: a new layer on the same root reads the same totals", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* Ledger.use((ledger) =>
        ledger.deliver(stateFor("ses_a"), [entry(1, "discard", 400), entry(2, "discard", 300)], warm)
      ).pipe(Effect.provide(pluginUnder(root)))
      const after = yield* Ledger.use((ledger) => ledger.lifetime).pipe(Effect.provide(pluginUnder(root)))
      assert.deepStrictEqual(
        { sessions: after.sessions, calls: after.calls, tokens: after.tokens, byReason: after.byReason },
        { sessions: 1, calls: 2, tokens: 700, byReason: { discard: { calls: 2, tokens: 700 } } }
      )
    }))

  it.effect("adds to the totals written before a restart", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* Ledger.use((ledger) => ledger.deliver(stateFor("ses_a"), [entry(1, "discard", 400)], warm)).pipe(
        Effect.provide(pluginUnder(root))
      )
      const after = yield* Ledger.use((ledger) =>
        ledger.deliver(stateFor("ses_b"), [entry(1, "discard", 300)], warm).pipe(Effect.andThen(ledger.lifetime))
      ).pipe(Effect.provide(pluginUnder(root)))
      assert.deepStrictEqual([after.sessions, after.calls, after.tokens], [2, 2, 700])
    }))
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
      const [sent, state] = yield* pipelineTest(Effect.all([send(fresh(history)), stateOf(sessionID)]))
      assert.deepStrictEqual(withoutTail(sent), history)
      assert.deepStrictEqual(state.pruned, {})
      assert.strictEqual(state.stats.applications.count, 0)
    }))
})

describe("applications of prunes the model or the user asks for", () => {
  /** Four reads of different files, about 2.5k tokens each: IDs 1 to 4. */
  const reads = [
    user("read four files"),
    ...["a", "b", "c", "d"].map((name, i) => assistant([read(`c${i + 1}`, `src/${name}.ts`)]))
  ]

  it.effect("a discard is counted when the next request carries it, not when the model asks", () =>
    Effect.gen(function*() {
      const [asked, sent] = yield* autoTest(Effect.gen(function*() {
        yield* send(fresh(reads))
        yield* discard(sessionID, ["noise", "3"])
        const asked = yield* stateOf(sessionID)
        yield* send(fresh(reads))
        return [asked, yield* stateOf(sessionID)] as const
      }))
      assert.deepStrictEqual([asked.stats.calls, asked.stats.applications.count], [0, 0])
      assert.isTrue(asked.pruned.c3?.pending)
      assert.deepStrictEqual([sent.stats.calls, sent.stats.applications.count], [1, 1])
      assert.isUndefined(sent.pruned.c3?.pending)
    }))

  it.effect("a discard counts as an application on a warm cache, with the cache it makes the provider rebuild", () =>
    Effect.gen(function*() {
      const state = yield* autoTest(Effect.gen(function*() {
        yield* send(fresh(reads))
        yield* discard(sessionID, ["noise", "3"])
        yield* send(fresh(reads))
        return yield* stateOf(sessionID)
      }))
      assert.strictEqual(state.stats.applications.cold, 0)
      // From the third of four calls to the end, as now sent: its placeholder and the fourth read (about 2.5k tokens).
      assert.isAbove(state.stats.applications.rebuiltTokens, 2000)
      assert.isBelow(state.stats.applications.rebuiltTokens, 3000)
    }))

  it.effect("an extract counts the cache it makes the provider rebuild", () =>
    Effect.gen(function*() {
      const state = yield* autoTest(Effect.gen(function*() {
        yield* send(fresh(reads))
        yield* extract(sessionID, ["1"], ["a.ts: nothing relevant"])
        yield* send(fresh(reads))
        return yield* stateOf(sessionID)
      }))
      // From the first call on, as now sent: its placeholder and three reads of about 2.5k tokens.
      assert.strictEqual(state.stats.applications.count, 1)
      assert.isAbove(state.stats.applications.rebuiltTokens, 7000)
      assert.isBelow(state.stats.applications.rebuiltTokens, 8000)
    }))

  it.effect("a sweep on a warm cache counts the cache it makes the provider rebuild", () =>
    Effect.gen(function*() {
      const state = yield* autoTest(Effect.gen(function*() {
        yield* send(fresh(reads))
        yield* TestClock.adjust("1 minute")
        yield* dcp(sessionID, "sweep 1")
        yield* send(fresh(reads))
        return yield* stateOf(sessionID)
      }))
      assert.strictEqual(state.stats.applications.count, 1)
      assert.strictEqual(state.stats.applications.cold, 0)
      assert.isAbove(state.stats.applications.rebuiltTokens, 0)
    }))

  it.effect("a sweep sent after the cache expired counts as cold, with nothing rebuilt", () =>
    Effect.gen(function*() {
      const state = yield* autoTest(Effect.gen(function*() {
        yield* send(fresh(reads))
        yield* TestClock.adjust("6 minutes")
        yield* dcp(sessionID, "sweep 1")
        yield* send(fresh(reads))
        return yield* stateOf(sessionID)
      }))
      assert.deepStrictEqual(state.stats.applications, { count: 1, cold: 1, rebuiltTokens: 0 })
    }))
})
