import { describe, expect, it } from "vitest"
import { billedPerRequest, type ScheduleInput, scheduleTrigger } from "../../src/engine/schedule.ts"

/** A warm cache, a small pending saving, room in the window, auto mode, a per-token provider: no trigger. */
const quiet: ScheduleInput = {
  mode: "auto",
  pendingTokens: 1000,
  minPruneTokens: 8000,
  contextTokens: 20_000,
  contextLimit: 100_000,
  pressure: 0.8,
  idleSeconds: 60,
  ttlSeconds: 300,
  billedPerRequest: false
}

const decide = (overrides: Partial<ScheduleInput>) => scheduleTrigger({ ...quiet, ...overrides })

describe("scheduleTrigger: no trigger", () => {
  it("keeps pending prunes pending when the saving is small, the cache warm and the context roomy", () => {
    expect(decide({})).toBeUndefined()
  })

  it("keeps them pending one token below minPruneTokens", () => {
    expect(decide({ pendingTokens: 7999 })).toBeUndefined()
  })

  it("keeps them pending at exactly ttlSeconds of idle time: the cache is still warm", () => {
    expect(decide({ idleSeconds: 300 })).toBeUndefined()
  })

  it("keeps them pending one token below the pressure share of the window", () => {
    expect(decide({ contextTokens: 79_999 })).toBeUndefined()
  })

  it("never sees pressure when the model's window is unknown, however large the context", () => {
    expect(decide({ contextLimit: undefined, contextTokens: 10_000_000 })).toBeUndefined()
  })
})

describe("scheduleTrigger: nothing pending", () => {
  it("returns undefined in immediate mode", () => {
    expect(decide({ mode: "immediate", pendingTokens: 0 })).toBeUndefined()
  })

  it("returns undefined for a provider billed per request", () => {
    expect(decide({ billedPerRequest: true, pendingTokens: 0 })).toBeUndefined()
  })

  it("returns undefined on a cold cache", () => {
    expect(decide({ pendingTokens: 0, idleSeconds: 10_000 })).toBeUndefined()
  })

  it("returns undefined under pressure", () => {
    expect(decide({ pendingTokens: 0, contextTokens: 99_000 })).toBeUndefined()
  })

  it("returns undefined on the first request this process sees", () => {
    expect(decide({ pendingTokens: 0, idleSeconds: undefined })).toBeUndefined()
  })

  it("returns undefined for a negative pending saving", () => {
    expect(decide({ mode: "immediate", pendingTokens: -5 })).toBeUndefined()
  })
})

describe("scheduleTrigger: each trigger alone", () => {
  it("immediate mode applies at once", () => {
    expect(decide({ mode: "immediate" })).toBe("immediate")
  })

  it("a provider billed per request applies at once", () => {
    expect(decide({ billedPerRequest: true })).toBe("immediate")
  })

  it("an idle gap longer than ttlSeconds is a cold cache", () => {
    expect(decide({ idleSeconds: 300.001 })).toBe("cold")
  })

  it("the first request this process sees (idle time unknown) is a cold cache", () => {
    expect(decide({ idleSeconds: undefined })).toBe("cold")
  })

  it("a context at exactly the pressure share of the window is under pressure", () => {
    expect(decide({ contextTokens: 80_000 })).toBe("pressure")
  })

  it("a pending saving of exactly minPruneTokens is a batch worth applying", () => {
    expect(decide({ pendingTokens: 8000 })).toBe("batch")
  })

  it("minPruneTokens 0 applies any pending saving as a batch", () => {
    expect(decide({ minPruneTokens: 0, pendingTokens: 1 })).toBe("batch")
  })

  it("ttlSeconds 0 makes every later request cold", () => {
    expect(decide({ ttlSeconds: 0, idleSeconds: 0.001 })).toBe("cold")
  })
})

describe("scheduleTrigger: precedence when several hold", () => {
  it("names immediate before cold, pressure and batch", () => {
    expect(decide({ mode: "immediate", idleSeconds: undefined, contextTokens: 90_000, pendingTokens: 9000 })).toBe("immediate")
  })

  it("names cold before pressure and batch, so a cold application is not counted as a rebuild", () => {
    expect(decide({ idleSeconds: 301, contextTokens: 90_000, pendingTokens: 9000 })).toBe("cold")
  })

  it("names pressure before batch", () => {
    expect(decide({ contextTokens: 90_000, pendingTokens: 9000 })).toBe("pressure")
  })
})

describe("billedPerRequest", () => {
  it("holds github-copilot and not per-token providers", () => {
    expect(billedPerRequest.has("github-copilot")).toBe(true)
    expect(billedPerRequest.has("anthropic")).toBe(false)
    expect(billedPerRequest.has("openai")).toBe(false)
  })
})
