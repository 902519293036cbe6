import { assert, describe, it } from "@effect/vitest"
import type { ToolIndex } from "../../src/engine/calls.ts"
import { figuresOf, reportedNext } from "../../src/engine/figures.ts"
import { fromFile } from "../../src/engine/session.ts"
import { emptySessionFile } from "../../src/state/schema.ts"

/** A session as OpenCode's restart finds it: one call pruned before (sent), one swept since (not sent yet). */
const restarted = () =>
  fromFile({
    ...emptySessionFile("ses_figures000000000000001", 0),
    pruned: {
      c1: { reason: "duplicate", tokens: 500, at: 0 },
      c2: { reason: "swept", tokens: 1_000, at: 1, pending: true }
    }
  }, false)

const index = {
  calls: [],
  byCallId: new Map([["c1", {}], ["c2", {}]]),
  callTokens: 3_000,
  textChars: 0
} as unknown as ToolIndex

describe("the next request's size in OpenCode's terms", () => {
  it("after a restart, is OpenCode's count of the latest request less what was pruned since", () => {
    const figures = figuresOf(restarted(), index)
    assert.strictEqual(reportedNext(11_548, figures.context, true), 10_548)
  })

  it("once this process sent a request, is that count less what changed since it", () => {
    const state = restarted()
    state.sentLeft = 200
    const figures = figuresOf(state, index)
    assert.strictEqual(reportedNext(11_548, figures.context, true), 11_548 - (1_500 - 200))
  })

  it("with nothing changed since, is OpenCode's count itself", () => {
    assert.strictEqual(reportedNext(11_548, figuresOf(restarted(), index).context, false), 11_548)
  })
})
