import { assert, describe as effectDescribe, it as effectIt } from "@effect/vitest"
import { Effect, Layer, Ref } from "effect"
import { TestClock } from "effect/testing"
import { describe, it } from "vitest"
import { reportedCacheUsage } from "../../src/commands/breakdown.ts"
import { formatStats } from "../../src/commands/format.ts"
import { type Reason, reasonName } from "../../src/engine/reasons.ts"
import { dcp } from "../../src/hooks/command.ts"
import { compose } from "../../src/layers/main.ts"
import { Host, HostError, HostRecorder } from "../../src/services/Host.ts"
import { Tokenizer } from "../../src/services/Tokenizer.ts"
import { emptySessionFile, type LifetimeTotals, type SessionStats } from "../../src/state/schema.ts"
import { assistant, fresh, type Msg, sessionID, user } from "../support/history.ts"
import { tempDir } from "../support/layers.ts"
import { send } from "../pipeline/helpers.ts"
import { autoUnder, muchLater, read } from "./support.ts"
import { pathsUnder } from "../support/paths.ts"

const noStats: SessionStats = emptySessionFile("ses_none", 0).stats
const someStats: SessionStats = {
  ...noStats,
  calls: 2,
  tokens: 5000,
  byReason: { deduplication: { calls: 2, tokens: 5000 } },
  byTool: { read: { calls: 2, tokens: 5000 } }
}
const lifetime: LifetimeTotals = { sessions: 0, calls: 0, tokens: 0, byReason: {} }
const nothingNow = {
  inEffect: { calls: 0, tokens: 0 },
  folded: { turns: 0, calls: 0, tokens: 0 },
  queued: { calls: 0, tokens: 0 },
  waiting: undefined
}

const stats = (session: SessionStats, cache?: Parameters<typeof formatStats>[0]["cache"]) =>
  formatStats({
    session,
    figures: nothingNow,
    lifetime,
    now: 0,
    reasonName: (reason) => reasonName(reason as Reason),
    cache,
    ttlSeconds: 300,
    pressure: 0.9
  }).split("\n")

const cacheLine = (lines: ReadonlyArray<string>) => lines.find((line) => line.startsWith("  prompt cache:"))
const providerLine = (lines: ReadonlyArray<string>) => lines.find((line) => line.startsWith("  provider:"))
const costLine = (lines: ReadonlyArray<string>) => lines.find((line) => line.startsWith("  cost ("))

describe("formatStats: the prompt-cache line", () => {
  it("is absent before any prune reached the model", () => {
    assert.isUndefined(cacheLine(stats(noStats)))
  })

  it("counts applications, the cold ones, and the cache rebuilt for the warm ones", () => {
    assert.strictEqual(
      cacheLine(stats({ ...someStats, applications: { count: 3, cold: 1, rebuiltTokens: 24_000 } })),
      "  prompt cache: prunes reached the model 3 times (1 with the cache already expired); ~24k cached tokens were rebuilt for them (estimated)."
    )
  })

  it("says no cache was rebuilt when every application found it expired", () => {
    assert.strictEqual(
      cacheLine(stats({ ...someStats, applications: { count: 1, cold: 1, rebuiltTokens: 0 } })),
      "  prompt cache: prunes reached the model 1 time (1 with the cache already expired); no cache was rebuilt for them."
    )
  })
})

describe("formatStats: the cost line", () => {
  const cost = (saved: number, rebuilt: number, requests = 12, reReads = 0, reRead = 0) => ({
    profile: "anthropic",
    requests,
    saved,
    rebuilt,
    reReads,
    reRead
  })

  it("is absent before any request was charged", () => {
    assert.isUndefined(costLine(stats(noStats)))
  })

  it("is absent when pruning neither saved nor cost anything", () => {
    assert.isUndefined(costLine(stats({ ...noStats, cost: cost(0, 0) })))
  })

  it("names the pricing, what the pruned tokens would have cost, the rebuilds and the net saving", () => {
    assert.strictEqual(
      costLine(stats({ ...someStats, cost: cost(30_000, 11_500) })),
      "  cost (anthropic pricing, Anthropic's prompt cache; estimated, in input tokens): the pruned tokens would have cost ~30k over 12 requests; cache rebuilds cost ~12k; net ~19k saved."
    )
  })

  it("names the model's reads of masked files and takes what they cost from the net saving", () => {
    assert.strictEqual(
      costLine(stats({ ...someStats, cost: cost(30_000, 11_500, 12, 2, 8_000) })),
      "  cost (anthropic pricing, Anthropic's prompt cache; estimated, in input tokens): the pruned tokens would have cost ~30k over 12 requests; cache rebuilds cost ~12k; the model read 2 masked files again, for ~8k; net ~11k saved."
    )
  })

  it("says so when the rebuilds cost more than pruning saved", () => {
    assert.strictEqual(
      costLine(stats({ ...someStats, cost: cost(2_000, 11_500, 1) })),
      "  cost (anthropic pricing, Anthropic's prompt cache; estimated, in input tokens): the pruned tokens would have cost ~2k over 1 request; cache rebuilds cost ~12k; net ~9.5k more than without pruning."
    )
  })
})

describe("formatStats: the provider line", () => {
  it("shows the cache reads, writes and uncached input the provider reported", () => {
    assert.strictEqual(
      providerLine(stats(someStats, { requests: 3, read: 12_000, write: 2000, uncached: 500 })),
      "  provider: 3 requests, ~12k tokens read from cache, ~2k written to it, ~500 uncached (as reported)."
    )
  })

  it("says when the provider reported no prompt-cache usage", () => {
    assert.strictEqual(
      providerLine(stats(someStats, { requests: 1, read: 0, write: 0, uncached: 900 })),
      "  provider: 1 request, ~900 input tokens, no prompt-cache usage reported."
    )
  })

  it("is absent without requests or without the stored session", () => {
    assert.isUndefined(providerLine(stats(someStats, { requests: 0, read: 0, write: 0, uncached: 0 })))
    assert.isUndefined(providerLine(stats(someStats)))
  })

  it("is shown even when nothing was pruned", () => {
    assert.isDefined(providerLine(stats(noStats, { requests: 1, read: 10, write: 0, uncached: 0 })))
  })
})

/** An assistant message with the token usage the provider reported for its request. */
const reported = (message: Msg, tokens: { input: number; read: number; write: number }): Msg => ({
  ...message,
  info: {
    ...message.info,
    tokens: { input: tokens.input, output: 50, reasoning: 0, cache: { read: tokens.read, write: tokens.write } }
  }
})

describe("reportedCacheUsage", () => {
  it("sums what the provider reported over the session's assistant messages", () => {
    const messages = [
      user("go"),
      reported(assistant([]), { input: 100, read: 0, write: 4000 }),
      reported(assistant([]), { input: 20, read: 4000, write: 300 })
    ]
    assert.deepStrictEqual(reportedCacheUsage(messages), { requests: 2, read: 4000, write: 4300, uncached: 120 })
  })

  it("ignores user messages, messages without usage and values that are not numbers", () => {
    const noUsage = assistant([])
    delete noUsage.info.tokens
    const odd = {
      ...noUsage,
      info: { ...noUsage.info, tokens: { input: "many", cache: { read: Number.NaN, write: 7 } } }
    }
    assert.deepStrictEqual(reportedCacheUsage([user("go"), noUsage, odd, null, "x"]), {
      requests: 1,
      read: 0,
      write: 7,
      uncached: 0
    })
  })

  it("is zero for an empty session", () => {
    assert.deepStrictEqual(reportedCacheUsage([]), { requests: 0, read: 0, write: 0, uncached: 0 })
  })
})

/** The stored session: a duplicate read (c1 of c3), and what the provider reported for the two requests. */
const stored: Array<Msg> = [
  user("read a.ts, then again"),
  reported(assistant([read("c1", "src/a.ts")]), { input: 3000, read: 0, write: 0 }),
  reported(assistant([read("c3", "src/a.ts")]), { input: 200, read: 2800, write: 2600 })
]

const lastNote = Effect.gen(function*() {
  const recorder = yield* HostRecorder
  return (yield* Ref.get(recorder.notes)).at(-1)?.text ?? ""
})

/** What `/dcp stats` prints after `requests` ran. */
const statsAfter = <E, R>(requests: Effect.Effect<unknown, E, R>) =>
  Effect.gen(function*() {
    yield* requests
    yield* dcp(sessionID, "stats")
    return yield* lastNote
  })

/** The plugin in auto mode (`cache` keys on top), over a host whose stored session is `stored`. */
const withStored = (root: string, cache: object = {}) =>
  autoUnder(root, cache, {}, { host: { messages: { [sessionID]: stored } } })

/** Long after the history's latest request, the whole session in one request: its duplicate applies, cold. */
const coldRequest = Effect.gen(function*() {
  yield* muchLater
  yield* send(fresh(stored))
})

/** Part of the session, then all of it a minute later: the duplicate is found on a warm cache. */
const warmRequests = Effect.gen(function*() {
  yield* send(fresh(stored.slice(0, 2)))
  yield* TestClock.adjust("1 minute")
  yield* send(fresh(stored))
})

effectDescribe("/dcp stats", () => {
  effectIt.effect("shows the prompt-cache line once a prune was applied", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const note = yield* statsAfter(coldRequest).pipe(Effect.provide(withStored(root)))
      assert.include(
        note.replace(/\s+/g, " "),
        " prompt cache: prunes reached the model 1 time (1 with the cache already expired); no cache was rebuilt for them."
      )
    }))

  effectIt.effect("counts a warm application's rebuilt cache", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const note = yield* statsAfter(warmRequests).pipe(Effect.provide(withStored(root, { mode: "immediate" })))
      // Wrapping a long line only changes where its spaces are.
      assert.match(
        note.replace(/\s+/g, " "),
        / prompt cache: prunes reached the model 1 time \(0 with the cache already expired\); ~[\d.]+k? cached tokens were rebuilt for them \(estimated\)\./
      )
    }))

  effectIt.effect("has no prompt-cache line while prunes are only pending", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const note = yield* statsAfter(warmRequests).pipe(Effect.provide(withStored(root)))
      assert.notInclude(note, "prompt cache:")
      assert.include(note, "This session: nothing pruned yet.")
    }))

  effectIt.effect("says why automatic prunes wait for the cache", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const note = yield* statsAfter(warmRequests).pipe(Effect.provide(withStored(root)))
      assert.match(
        note.replace(/\s+/g, " "),
        / waiting for the cache: 1 call, ~[\d.]+k? tokens: too few tokens to be worth a prompt-cache rebuild yet\. They apply when the cache goes cold \(5 min without a request, another model, a new day\), at a compaction, or at 80% of the window\./
      )
    }))

  effectIt.effect(
    "shows what pruning saved under the provider's pricing (a prefix cache for the scripted provider)",
    () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const note = yield* statsAfter(coldRequest).pipe(Effect.provide(withStored(root)))
        assert.match(
          note.replace(/\s+/g, " "),
          / cost \(openai pricing, a prefix cache; estimated, in input tokens\): the pruned tokens would have cost ~[\d.]+k? over 1 request; cache rebuilds cost ~0; net ~[\d.]+k? saved\./
        )
      })
  )

  effectIt.effect(
    "shows the provider line computed from the stored session's assistant tokens",
    () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const note = yield* statsAfter(coldRequest).pipe(Effect.provide(withStored(root)))
        assert.include(
          note.replace(/\s+/g, " "),
          " provider: 2 requests, ~2.8k tokens read from cache, ~2.6k written to it, ~3.2k uncached (as reported)."
        )
      })
  )
})

effectDescribe("/dcp stats without the stored session", () => {
  /** The test host, except that the stored session cannot be read. */
  const hostWithoutMessages = Layer.effect(
    Host,
    Effect.gen(function*() {
      const host = yield* Host
      return Host.of({
        ...host,
        messages: () => Effect.fail(new HostError({ operation: "session.messages", cause: new Error("too large") }))
      })
    })
  ).pipe(Layer.provideMerge(Host.layerTest()))

  effectIt.effect(
    "still shows the session's and the lifetime statistics, without the provider line",
    () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const note = yield* statsAfter(coldRequest).pipe(
          Effect.provide(
            compose({ paths: pathsUnder(root), host: hostWithoutMessages, tokenizer: Tokenizer.layerEstimate })
          )
        )
        assert.match(note, /^DCP · This session: 1 call pruned/)
        assert.include(note, "prompt cache: prunes reached the model 1 time")
        assert.notInclude(note, "provider:")
      })
  )
})
