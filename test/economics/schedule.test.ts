import { describe, expect, it } from "vitest"
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
 * request: 92 requests to pay back. No trigger.
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
  waited: 0
}

const decide = (overrides: Partial<ScheduleInput>) => schedule({ ...quiet, ...overrides })

describe("schedule: a warm cache", () => {
  it("keeps prunes pending while applying them would not pay back within the horizon, and says why", () => {
    expect(decide({})).toEqual({
      trigger: undefined,
      waiting: { reason: "warm-cache", paysBackAfter: 92, horizon: 50 }
    })
  })

  it("applies them when they pay back within the horizon and waiting has cost as much as the rebuild", () => {
    // 92 requests to pay back: a horizon of 92 is enough, once 92k of waiting cost has accrued.
    expect(decide({ horizon: 92, waited: 92_000 }).trigger).toBe("break-even")
  })

  it("keeps them pending, however long the horizon, until waiting has cost as much as the rebuild", () => {
    expect(decide({ horizon: 1000, waited: 91_999 }).trigger).toBeUndefined()
  })

  it("keeps them pending, however long they waited, when the horizon is too short to pay back", () => {
    expect(decide({ horizon: 91, waited: 1e9 }).trigger).toBeUndefined()
  })

  it("applies a change near the end of the request, which costs little to rewrite, as soon as waiting paid for it", () => {
    // Rewriting 12k from the change on: (12k - 10k) x 1.15 = 2.3k extra, 2.3 requests to pay back.
    expect(decide({ rebuildTokens: 12_000, waited: 2300 }).trigger).toBe("break-even")
  })

  it("keeps a batch below minPruneTokens pending", () => {
    expect(decide({ pendingTokens: 1999, rebuildTokens: 2000, horizon: 1e9, waited: 1e9 }))
      .toEqual({ trigger: undefined, waiting: expect.objectContaining({ reason: "below-minimum" }) })
  })

  it("under prefix caching prices the rewrite at the uncached price, with no write premium", () => {
    // (90k - 10k) x (1 - 0.1) / (10k x 0.1) = 72 requests.
    expect(decide({ profile: profiles.openai }).waiting?.paysBackAfter).toBe(72)
  })
})

describe("schedule: triggers that need no break-even", () => {
  it("applies at once in immediate mode", () => {
    expect(decide({ mode: "immediate" }).trigger).toBe("immediate")
  })

  it("applies at once for a provider billed per request or with no cache", () => {
    expect(decide({ profile: profiles["per-request"] }).trigger).toBe("immediate")
    expect(decide({ profile: profiles.none }).trigger).toBe("immediate")
  })

  it("applies on a cold cache, where the prompt is written again anyway", () => {
    expect(decide({ cold: true }).trigger).toBe("cold")
  })

  it("applies on the first request after a compaction", () => {
    expect(decide({ compacted: true }).trigger).toBe("compaction")
  })

  it("applies at exactly the pressure share of the window, and not a token below", () => {
    expect(decide({ contextTokens: 160_000 }).trigger).toBe("pressure")
    expect(decide({ contextTokens: 159_999 }).trigger).toBeUndefined()
  })

  it("never sees pressure when the model's window is unknown", () => {
    expect(decide({ contextLimit: undefined, contextTokens: 10_000_000 }).trigger).toBeUndefined()
  })

  it("names cold before the others, so a free application is not counted as a rebuild", () => {
    expect(decide({ cold: true, compacted: true, contextTokens: 190_000 }).trigger).toBe("cold")
  })

  it("does nothing when nothing is pending", () => {
    for (
      const overrides of [{ mode: "immediate" as const }, { cold: true }, { compacted: true }, {
        contextTokens: 190_000
      }]
    ) {
      expect(decide({ ...overrides, pendingTokens: 0 })).toEqual({ trigger: undefined, waiting: undefined })
    }
  })
})

describe("the session's pace and the horizon", () => {
  it("counts requests, pauses longer than the TTL and the requests since the latest pause", () => {
    const minute = 60_000
    expect(paceOf([0, minute, 2 * minute, 20 * minute, 21 * minute], 300)).toEqual({ requests: 5, coldGaps: 1, run: 2 })
    expect(paceOf([], 300)).toBeUndefined()
  })

  it("extends a pace request by request, the first request never a pause", () => {
    expect(paceAfter(undefined, true)).toEqual({ requests: 1, coldGaps: 0, run: 1 })
    expect(paceAfter({ requests: 4, coldGaps: 0, run: 4 }, true)).toEqual({ requests: 5, coldGaps: 1, run: 1 })
  })

  it("expects the cache to serve the session's average warm run, or the configured number", () => {
    expect(horizon({ requests: 60, coldGaps: 2, run: 5 })).toBe(20)
    expect(horizon({ requests: 60, coldGaps: 2, run: 5 }, 7)).toBe(7)
    expect(horizon({ requests: 0, coldGaps: 0, run: 0 })).toBe(1)
  })
})

describe("rebuild and pay-back", () => {
  it("rewrites everything after the system prompt under Anthropic's rules, unless the change is near the end", () => {
    const input = { contextTokens: 100_000, systemTokens: 8000 }
    expect(rebuildTokens(profiles.anthropic, { ...input, change: { tokensAfter: 30_000, nearEnd: false } })).toBe(
      92_000
    )
    expect(rebuildTokens(profiles.anthropic, { ...input, change: { tokensAfter: 3000, nearEnd: true } })).toBe(3000)
    expect(rebuildTokens(profiles.openai, { ...input, change: { tokensAfter: 30_000, nearEnd: false } })).toBe(30_000)
  })

  it("pays back at once where there is no cache, and never when nothing is pruned", () => {
    expect(paysBackAfter(profiles.none, 10, 1000)).toBe(0)
    expect(paysBackAfter(profiles.anthropic, 0, 1000)).toBe(Infinity)
  })

  it("counts the content blocks from a message to the end, a tool call and its result as two", () => {
    const messages = [
      { parts: [{ type: "text" }] },
      { parts: [{ type: "step-start" }, { type: "tool" }, { type: "tool" }, { type: "step-finish" }] },
      { parts: [{ type: "reasoning" }, { type: "tool" }] }
    ]
    expect(blocksFrom(messages, 1, 100)).toBe(7)
    expect(blocksFrom(messages, 0, 100)).toBe(8)
    // Stops counting once past the limit.
    expect(blocksFrom(messages, 0, 2)).toBe(3)
  })

  it("treats exactly the TTL as warm and no known request as cold", () => {
    expect(cacheExpired(300, 300)).toBe(false)
    expect(cacheExpired(300.001, 300)).toBe(true)
    expect(cacheExpired(undefined, 300)).toBe(true)
  })
})
