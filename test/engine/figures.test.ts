import { assert, describe, it } from "@effect/vitest"
import type { ToolIndex } from "../../src/engine/calls.ts"
import { callsInEffect, figuresOf, foldShares, reportedNext, waitingExpired } from "../../src/engine/figures.ts"
import { fromFile, type SessionState } from "../../src/engine/session.ts"
import { emptySessionFile } from "../../src/state/schema.ts"
import { assistant, lines, tool, user } from "../support/history.ts"
import { freshViewState, indexOf } from "./support.ts"

/** Four calls in view: c1 to c4. */
const messages = [
  user("look around", { id: "msg_u1" }),
  assistant([
    tool({ tool: "read", callID: "c1", input: { filePath: "src/a.ts" }, output: lines(400) }),
    tool({ tool: "read", callID: "c2", input: { filePath: "src/b.ts" }, output: lines(400) })
  ]),
  assistant([
    tool({ tool: "bash", callID: "c3", input: { command: "ls" }, output: lines(10) }),
    tool({ tool: "grep", callID: "c4", input: { pattern: "x" }, output: lines(10) })
  ])
]

/**
 * A session as OpenCode's restart finds it: c1 pruned before (sent), c2 swept since (not sent yet), and c9, pruned
 * before a compaction took it out of the view.
 */
const restarted = (): SessionState =>
  fromFile({
    ...emptySessionFile("ses_figures000000000000001", 0),
    pruned: {
      c1: { reason: "duplicate", tokens: 500, at: 0 },
      c2: { reason: "swept", tokens: 1_000, at: 1, pending: true },
      c9: { reason: "discard", tokens: 700, at: 0 }
    }
  }, false)

describe("the figures of a session", () => {
  it("count the prunes of the calls in view, read from the stored prunes", () => {
    const index = indexOf(messages)
    const figures = figuresOf(restarted(), index)
    assert.deepStrictEqual(figures.inEffect, { calls: 2, tokens: 1_500 })
    assert.deepStrictEqual(figures.queued, { calls: 1, tokens: 1_000 })
    assert.deepStrictEqual(figures.folded, { turns: 0, calls: 0, tokens: 0 })
  })

  it("count every stored prune when no request has been indexed yet", () => {
    const figures = figuresOf(restarted(), undefined)
    assert.deepStrictEqual(figures.inEffect, { calls: 3, tokens: 2_200 })
    assert.deepStrictEqual(figures.queued, { calls: 1, tokens: 1_000 })
    assert.isUndefined(figures.context)
  })

  it("count the prunes of the request's view while it is in step with the state", () => {
    const index = indexOf(messages)
    const state = restarted()
    const view = freshViewState(index.calls, { pruned: state.pruned })
    view.pass = index.pass
    view.revision = state.revision
    state.viewState = view
    assert.deepStrictEqual(figuresOf(state, index).inEffect, { calls: 2, tokens: 1_500 })
  })

  it("add the folded turns to what is queued when their fold is not sent yet", () => {
    const state = restarted()
    state.folds.set("msg_u1", { calls: ["c3", "c4"], tokens: 120, at: 2 })
    state.undeliveredFolds.add("msg_u1")
    const figures = figuresOf(state, indexOf(messages))
    assert.deepStrictEqual(figures.folded, { turns: 1, calls: 2, tokens: 120 })
    assert.deepStrictEqual(figures.queued, { calls: 3, tokens: 1_120 })
  })

  it("say what the calls still send: what they send unpruned, less the prunes and folds in effect", () => {
    const index = indexOf(messages)
    const figures = figuresOf(restarted(), index)
    assert.strictEqual(figures.context?.calls, 4)
    assert.strictEqual(figures.context?.left, 1_500)
    assert.strictEqual(figures.context?.tools, index.callTokens - 1_500)
    // Not sent by this process yet: in effect at the latest request was what is in effect less what is queued.
    assert.strictEqual(figures.context?.leftAtLatest, 500)
  })
})

describe("the prunes waiting for the prompt cache", () => {
  const why = { reason: "warm-cache", paysBackAfter: 12, horizon: 4 } as const

  it("are those found at the latest request that nothing made since", () => {
    const state = restarted()
    state.waiting = {
      prunes: [
        { callID: "c3", tokens: 300 },
        { callID: "c4", tokens: 200 },
        // Pruned since (a sweep), restored since, and a fold made since: no longer waiting.
        { callID: "c1", tokens: 500 },
        { callID: "c2", tokens: 100, fold: "msg_u1" }
      ],
      why
    }
    state.restored.add("c4")
    state.folds.set("msg_u1", { calls: ["c2"], tokens: 100, at: 2 })
    assert.deepStrictEqual(figuresOf(state, indexOf(messages)).waiting, { calls: 1, tokens: 300, why })
  })

  it("are none once every one of them was made", () => {
    const state = restarted()
    state.waiting = { prunes: [{ callID: "c1", tokens: 500 }], why }
    assert.isUndefined(figuresOf(state, indexOf(messages)).waiting)
    assert.isUndefined(figuresOf(restarted(), indexOf(messages)).waiting)
  })
})

describe("what changed since the latest request", () => {
  it("counts the calls restored, and says the prunes changed while the state's revision moved past the one sent", () => {
    const state = restarted()
    // The latest request went out at the state's revision: nothing changed since.
    state.sentRevision = state.revision
    assert.isFalse(figuresOf(state, indexOf(messages)).changedSinceSent)
    state.restored.add("c3")
    state.revision = state.sentRevision + 1
    const figures = figuresOf(state, indexOf(messages))
    assert.strictEqual(figures.restored, 1)
    assert.isTrue(figures.changedSinceSent)
  })
})

describe("the next request's size in OpenCode's terms", () => {
  it("after a restart, is OpenCode's count of the latest request less what was pruned since", () => {
    const figures = figuresOf(restarted(), indexOf(messages))
    assert.strictEqual(reportedNext(11_548, figures.context, true), 10_548)
  })

  it("once this process sent a request, is that count less what changed since it", () => {
    const state = restarted()
    state.sentLeft = 200
    const figures = figuresOf(state, indexOf(messages))
    assert.strictEqual(reportedNext(11_548, figures.context, true), 11_548 - (1_500 - 200))
  })

  it("with nothing changed since, is OpenCode's count itself", () => {
    assert.strictEqual(reportedNext(11_548, figuresOf(restarted(), indexOf(messages)).context, false), 11_548)
  })

  it("is unknown without a count from OpenCode", () => {
    assert.isUndefined(reportedNext(undefined, figuresOf(restarted(), indexOf(messages)).context, true))
  })
})

describe("a fold shared among its calls", () => {
  it("gives each call a share in proportion to what it sends, in whole tokens adding up to the fold's", () => {
    const shares = foldShares(["a", "b", "c"], 100, (callID) => ({ a: 60, b: 30, c: 10 })[callID]!)
    assert.deepStrictEqual([...shares], [["a", 60], ["b", 30], ["c", 10]])
    const odd = foldShares(["a", "b", "c"], 10, () => 7)
    assert.strictEqual([...odd.values()].reduce((sum, share) => sum + share, 0), 10)
    assert.deepStrictEqual([...odd.values()], [4, 3, 3])
  })

  it("shares evenly when no call sends anything the index knows", () => {
    assert.deepStrictEqual([...foldShares(["a", "b"], 9, () => 0).values()], [5, 4])
  })
})

describe("the calls in effect", () => {
  /** Calls 1-3 of an old turn folded, 1 and 2 pruned of their own too; call 4 pruned alone. */
  const folded = () => {
    const state = fromFile({
      ...emptySessionFile("ses_figures000000000000002", 0),
      nextId: 5,
      ids: { c1: 1, c2: 2, c3: 3, c4: 4 },
      pruned: {
        c1: { reason: "staleOutputs", tokens: 500, at: 0 },
        c2: { reason: "staleOutputs", tokens: 300, at: 0 },
        c4: { reason: "sweep", tokens: 200, at: 0 }
      },
      folds: { turn1: { calls: ["c1", "c2", "c3"], tokens: 90, at: 0 } }
    }, false)
    const call = (tool: string, totalTokens: number) => ({ tool, keyParameter: "", frameTokens: 20, totalTokens })
    const calls = {
      c1: call("read", 520),
      c2: call("read", 320),
      c3: call("bash", 20),
      c4: call("grep", 250)
    }
    const indexed = {
      calls: Object.values(calls),
      byCallId: new Map(Object.entries(calls)),
      callTokens: 1_190,
      textChars: 0,
      pass: 1
    } as unknown as ToolIndex
    return { state, indexed }
  }

  it("are counted once each, a call only its turn's fold takes out among them, with the folds' tokens", () => {
    const { indexed, state } = folded()
    const figures = figuresOf(state, indexed)
    assert.deepStrictEqual(figures.inEffect, { calls: 4, tokens: 500 + 300 + 200 + 90 })
    assert.deepStrictEqual(figures.folded, { turns: 1, calls: 3, tokens: 90 })
  })

  it("are listed newest first, each with its prune and its share of its fold, adding up to what is in effect", () => {
    const { indexed, state } = folded()
    const calls = callsInEffect(state, indexed)
    assert.deepStrictEqual(calls.map(({ folded, id, reason }) => [id, reason, folded]), [
      [4, "sweep", false],
      [3, "fold", true],
      [2, "staleOutputs", true],
      [1, "staleOutputs", true]
    ])
    // Each folded call sends 40 tokens before folding (its framing, its content less its prune): a third of the 90.
    assert.deepStrictEqual(calls.map((call) => call.tokens), [200, 30, 330, 530])
    assert.strictEqual(calls.reduce((sum, call) => sum + call.tokens, 0), figuresOf(state, indexed).inEffect.tokens)
  })
})

describe("the waiting prunes' reason", () => {
  it("expires with the prompt cache: the latest request plus the cache's life", () => {
    const state = restarted()
    state.lastRequestAt = 10_000
    state.waiting = {
      prunes: [{ callID: "c3", tokens: 700 }],
      why: { reason: "warm-cache", paysBackAfter: 12, horizon: 7 }
    }
    const waiting = figuresOf(state, indexOf(messages), 300).waiting!
    assert.strictEqual(waiting.expiresAt, 310_000)
    assert.isFalse(waitingExpired(waiting, 309_999))
    assert.isTrue(waitingExpired(waiting, 310_000))
  })
})

describe("a change since the latest request, after OpenCode started again", () => {
  it("is a restore made before the restart: the stored state says what the latest request left out", () => {
    const state = fromFile({ ...emptySessionFile("ses_figures000000000000003", 0), sentLeft: 1_500 }, false)
    const figures = figuresOf(state, indexOf(messages))
    assert.isTrue(figures.changedSinceSent)
    assert.strictEqual(reportedNext(11_548, figures.context, figures.changedSinceSent), 11_548 + 1_500)
  })

  it("is nothing when what is in effect is what the latest request left out", () => {
    const state = restarted()
    state.undelivered.clear()
    state.sentRevision = state.revision
    state.sentLeft = 1_500
    assert.isFalse(figuresOf(state, indexOf(messages)).changedSinceSent)
  })
})
