import { assert, describe, it } from "vitest"
import {
  blocksFrom,
  cacheExpired,
  horizon,
  paceAfter,
  paceOf,
  paysBackAfter,
  rebuildTokens,
  schedule,
  type ScheduleInput
} from "../../src/engine/schedule.ts"
import { profiles } from "../../src/pricing/profiles.ts"

/**
 * A warm cache under Anthropic's pricing, 10k tokens pending in a 100k context with room to spare: applying would
 * rewrite the 90k after the system prompt, an extra (90k - 10k) x (1.25 - 0.1) = 92k, against 10k x 0.1 = 1k saved per
 * request: 92 requests to pay back. No trigger. Patience 1: prunes apply once waiting has cost one rebuild.
 */
const quiet: ScheduleInput = {
  mode: "auto",
  profile: profiles.anthropic,
  pendingTokens: 10_000,
  minPruneTokens: 2000,
  contextTokens: 100_000,
  contextLimit: 200_000,
  pressure: 0.8,
  rebuildTokens: 90_000,
  cold: false,
  compacted: false,
  horizon: 50,
  waited: 0,
  patience: 1
}

const decide = (overrides: Partial<ScheduleInput>) => schedule({ ...quiet, ...overrides })

describe("schedule: a warm cache", () => {
  it("keeps prunes pending while applying them would not pay back within the horizon, and says why", () => {
    assert.deepStrictEqual(decide({}), {
      trigger: undefined,
      waiting: { reason: "warm-cache", paysBackAfter: 92, horizon: 50 },
      scope: "all"
    })
  })

  it("applies them when they pay back within the horizon and waiting has cost as much as the rebuild", () => {
    // 92 requests to pay back: a horizon of 92 is enough, once 92k of waiting cost has accrued.
    assert.strictEqual(decide({ horizon: 92, waited: 92_000 }).trigger, "break-even")
  })

  it("keeps them pending, however long the horizon, until waiting has cost as much as the rebuild", () => {
    assert.isUndefined(decide({ horizon: 1000, waited: 91_999 }).trigger)
  })

  it("while they pay back within the horizon, says they are gathered and in how many requests they apply", () => {
    // 92k owed for the rebuild, 80k waited: 12k more at 1k a request.
    assert.deepStrictEqual(decide({ horizon: 92, waited: 80_000 }), {
      trigger: undefined,
      waiting: { reason: "gathering", paysBackAfter: 92, horizon: 92, appliesAfter: 12 },
      scope: "all"
    })
  })

  it("with patience 2, keeps them pending until waiting has cost twice the rebuild", () => {
    assert.isUndefined(decide({ horizon: 92, waited: 183_999, patience: 2 }).trigger)
    assert.strictEqual(decide({ horizon: 92, waited: 184_000, patience: 2 }).trigger, "break-even")
  })

  it("with patience 0, applies them as soon as they pay back within the horizon", () => {
    assert.strictEqual(decide({ horizon: 92, waited: 0, patience: 0 }).trigger, "break-even")
  })

  it("keeps them pending, however long they waited, when the horizon is too short to pay back", () => {
    assert.isUndefined(decide({ horizon: 91, waited: 1e9 }).trigger)
  })

  it("applies a change near the end of the request, which costs little to rewrite, as soon as waiting paid for it", () => {
    // Rewriting 12k from the change on: (12k - 10k) x 1.15 = 2.3k extra, 2.3 requests to pay back.
    assert.strictEqual(decide({ rebuildTokens: 12_000, waited: 2300 }).trigger, "break-even")
  })

  it("keeps a batch below minPruneTokens pending", () => {
    const decision = decide({ pendingTokens: 1999, rebuildTokens: 2000, horizon: 1e9, waited: 1e9 })
    assert.deepStrictEqual(Object.keys(decision).sort(), ["scope", "trigger", "waiting"])
    assert.isUndefined(decision.trigger)
    assert.strictEqual(decision.waiting?.reason, "below-minimum")
  })

  it("under prefix caching prices the rewrite at the uncached price, with no write premium", () => {
    // (90k - 10k) x (1 - 0.1) / (10k x 0.1) = 72 requests.
    assert.strictEqual(decide({ profile: profiles.openai }).waiting?.paysBackAfter, 72)
  })
})

/**
 * A batch after the plugin's cache breakpoint (9k pending, 12k from the breakpoint on) joined by an old prune before
 * it (1k more, and everything after the system prompt, 90k, written again): the old prune adds 78k of rewrite, an
 * extra (78k - 1k) x 1.15 = 88.55k against 100 a request, 886 requests to pay back.
 */
const split: Partial<ScheduleInput> = {
  pendingTokens: 10_000,
  rebuildTokens: 90_000,
  afterBreakpoint: { pendingTokens: 9000, rebuildTokens: 12_000 },
  horizon: 100,
  waited: 3450
}

describe("schedule: prunes on both sides of the plugin's cache breakpoint", () => {
  it("applies those after the breakpoint alone when the older ones would not pay for rewriting what precedes it", () => {
    // After the breakpoint: (12k - 9k) x 1.15 = 3.45k, waited already.
    assert.deepStrictEqual(decide(split), {
      trigger: "break-even",
      waiting: { reason: "warm-cache", paysBackAfter: 885.5, horizon: 100 },
      scope: "afterBreakpoint"
    })
  })

  it("gathers those after the breakpoint by their own rebuild while the older ones wait", () => {
    assert.deepStrictEqual(decide({ ...split, waited: 2550 }), {
      trigger: undefined,
      waiting: {
        reason: "gathering",
        paysBackAfter: paysBackAfter(profiles.anthropic, 9000, 12_000),
        horizon: 100,
        appliesAfter: 1
      },
      scope: "afterBreakpoint"
    })
  })

  it("weighs them all together once the older ones pay for the rewrite on their own", () => {
    const decision = decide({ ...split, horizon: 886 })
    assert.strictEqual(decision.scope, "all")
    assert.strictEqual(decision.waiting?.reason, "gathering")
  })

  it("applies them all on a cold cache, where everything is written again anyway", () => {
    assert.deepStrictEqual(decide({ ...split, cold: true }), { trigger: "cold", waiting: undefined, scope: "all" })
  })

  it("weighs them all together when every pending prune is after the breakpoint", () => {
    const decision = decide({
      ...split,
      rebuildTokens: 12_000,
      afterBreakpoint: { pendingTokens: 10_000, rebuildTokens: 12_000 }
    })
    assert.deepStrictEqual(decision, { trigger: "break-even", waiting: undefined, scope: "all" })
  })
})

describe("schedule: triggers that need no break-even", () => {
  it("applies at once in immediate mode", () => {
    assert.strictEqual(decide({ mode: "immediate" }).trigger, "immediate")
  })

  it("applies at once for a provider billed per request or with no cache", () => {
    assert.strictEqual(decide({ profile: profiles["per-request"] }).trigger, "immediate")
    assert.strictEqual(decide({ profile: profiles.none }).trigger, "immediate")
  })

  it("applies on a cold cache, where the prompt is written again anyway", () => {
    assert.strictEqual(decide({ cold: true }).trigger, "cold")
  })

  it("applies on the first request after a compaction", () => {
    assert.strictEqual(decide({ compacted: true }).trigger, "compaction")
  })

  it("applies at exactly the pressure share of the window, and not a token below", () => {
    assert.strictEqual(decide({ contextTokens: 160_000 }).trigger, "pressure")
    assert.isUndefined(decide({ contextTokens: 159_999 }).trigger)
  })

  it("never sees pressure when the model's window is unknown", () => {
    assert.isUndefined(decide({ contextLimit: undefined, contextTokens: 10_000_000 }).trigger)
  })

  it("names cold before the others, so a free application is not counted as a rebuild", () => {
    assert.strictEqual(decide({ cold: true, compacted: true, contextTokens: 190_000 }).trigger, "cold")
  })

  it("does nothing when nothing is pending", () => {
    for (
      const overrides of [{ mode: "immediate" as const }, { cold: true }, { compacted: true }, {
        contextTokens: 190_000
      }]
    ) {
      assert.deepStrictEqual(decide({ ...overrides, pendingTokens: 0 }), {
        trigger: undefined,
        waiting: undefined,
        scope: "all"
      })
    }
  })
})

describe("the session's pace and the horizon", () => {
  it("counts requests, pauses longer than the TTL and the requests since the latest pause", () => {
    const minute = 60_000
    assert.deepStrictEqual(paceOf([0, minute, 2 * minute, 20 * minute, 21 * minute], 300), {
      requests: 5,
      coldGaps: 1,
      run: 2
    })
    assert.isUndefined(paceOf([], 300))
  })

  it("extends a pace request by request, the first request never a pause", () => {
    assert.deepStrictEqual(paceAfter(undefined, true), { requests: 1, coldGaps: 0, run: 1 })
    assert.deepStrictEqual(paceAfter({ requests: 4, coldGaps: 0, run: 4 }, true), { requests: 5, coldGaps: 1, run: 1 })
  })

  it("expects the cache to serve the session's average warm run, or the configured number", () => {
    assert.strictEqual(horizon({ requests: 60, coldGaps: 2, run: 5 }), 20)
    assert.strictEqual(horizon({ requests: 60, coldGaps: 2, run: 5 }, 7), 7)
    assert.strictEqual(horizon({ requests: 0, coldGaps: 0, run: 0 }), 1)
  })
})

describe("rebuild and pay-back", () => {
  it("rewrites everything after the system prompt under Anthropic's rules, unless the change is near the end", () => {
    const input = { contextTokens: 100_000, systemTokens: 8000 }
    assert.strictEqual(
      rebuildTokens(profiles.anthropic, { ...input, change: { tokensAfter: 30_000, nearEnd: false } }),
      92_000
    )
    assert.strictEqual(
      rebuildTokens(profiles.anthropic, { ...input, change: { tokensAfter: 3000, nearEnd: true } }),
      3000
    )
    assert.strictEqual(
      rebuildTokens(profiles.openai, { ...input, change: { tokensAfter: 30_000, nearEnd: false } }),
      30_000
    )
  })

  it("pays back at once where there is no cache, and never when nothing is pruned", () => {
    assert.strictEqual(paysBackAfter(profiles.none, 10, 1000), 0)
    assert.strictEqual(paysBackAfter(profiles.anthropic, 0, 1000), Infinity)
  })

  it("counts the content blocks from a message to the end, a tool call and its result as two", () => {
    const messages = [
      { parts: [{ type: "text" }] },
      { parts: [{ type: "step-start" }, { type: "tool" }, { type: "tool" }, { type: "step-finish" }] },
      { parts: [{ type: "tool" }] }
    ]
    assert.strictEqual(blocksFrom(messages, 1, 100), 6)
    assert.strictEqual(blocksFrom(messages, 0, 100), 7)
    // Stops counting once past the limit.
    assert.strictEqual(blocksFrom(messages, 0, 1), 2)
  })

  it("counts reasoning as a block only when signed, as OpenCode sends it", () => {
    const signed = { type: "reasoning", metadata: { anthropic: { signature: "sig" } } }
    assert.strictEqual(blocksFrom([{ parts: [{ type: "reasoning" }, { type: "text" }] }], 0, 100), 1)
    assert.strictEqual(blocksFrom([{ parts: [signed, { type: "text" }] }], 0, 100), 2)
  })

  it("treats exactly the TTL as warm and no known request as cold", () => {
    assert.strictEqual(cacheExpired(300, 300), false)
    assert.strictEqual(cacheExpired(300.001, 300), true)
    assert.strictEqual(cacheExpired(undefined, 300), true)
  })
})
