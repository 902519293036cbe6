import { assert, describe, it } from "vitest"
import {
  type AnchorModel,
  type AnchorMove,
  anchorsFor,
  locateAnchor,
  markAnchor,
  nextAnchor,
  type Place
} from "../../src/engine/anchor.ts"

const model: AnchorModel = { providerID: "anthropic", modelID: "claude-sonnet-4-5", npm: "@ai-sdk/anthropic" }

const text = (value: string, extra: Record<string, unknown> = {}) => ({ type: "text", text: value, ...extra })
const call = (name: string) => ({ type: "tool", tool: "read", callID: name, state: { status: "completed" } })
const user = (id: string) => ({ info: { id, role: "user" }, parts: [text("go on")] })
const assistant = (id: string, parts: ReadonlyArray<unknown>, info: Record<string, unknown> = {}) => ({
  info: { id, role: "assistant", providerID: model.providerID, modelID: model.modelID, ...info },
  parts
})

/** Six steps, each a text part and a call: a text part at [m, 0], its call at [m, 1], for m = 1..6. */
const history = () => [
  user("u"),
  ...[1, 2, 3, 4, 5, 6].map((m) => assistant(`a${m}`, [text(`step ${m}`), call(`c${m}`)]))
]

const move = (overrides: Partial<AnchorMove>): AnchorMove => ({
  current: undefined,
  change: undefined,
  cold: false,
  frontier: () => [5, 1],
  lookback: 16,
  jump: () => false,
  ...overrides
})

const placeOf = (messages: ReadonlyArray<unknown>, overrides: Partial<AnchorMove>): Place | undefined =>
  nextAnchor(messages, move(overrides), model)?.place

describe("anchorsFor: the anchor is kept only where a 5th breakpoint cannot reach the provider", () => {
  it("keeps one for Anthropic's own package", () => {
    assert.strictEqual(anchorsFor(model), true)
  })

  it("keeps none for another package, which may send a breakpoint beyond the limit on to the provider", () => {
    assert.strictEqual(anchorsFor({ ...model, providerID: "openrouter", npm: "@openrouter/ai-sdk-provider" }), false)
  })

  it("keeps one for OpenCode's own anthropic provider when the host does not name the package", () => {
    assert.strictEqual(anchorsFor({ ...model, npm: undefined }), true)
  })

  it("keeps none when the model is not known yet", () => {
    assert.strictEqual(anchorsFor(undefined), false)
  })
})

describe("nextAnchor: where the anchor goes", () => {
  it("on a cold cache, on the last assistant text part before the frontier", () => {
    assert.deepStrictEqual(placeOf(history(), { cold: true }), [5, 0])
  })

  it("on a warm cache with nothing changed, stays where it is, however far the frontier moved", () => {
    assert.deepStrictEqual(placeOf(history(), { current: [2, 0], frontier: () => [6, 1] }), [2, 0])
  })

  it("on a warm cache with nothing changed and no anchor yet, goes nowhere: no entry would be written there", () => {
    assert.isUndefined(placeOf(history(), {}))
  })

  it("after a change behind it, moves at most `lookback` content blocks, to stay within reach of its own entry", () => {
    // From [2, 0]: the call of step 2 (2 blocks), step 3's text (3) and call (5), step 4's text (6): a lookback of 5
    // reaches step 3's text, not step 4's.
    assert.deepStrictEqual(placeOf(history(), { current: [2, 0], change: [3, 1], lookback: 5 }), [3, 0])
    assert.deepStrictEqual(placeOf(history(), { current: [2, 0], change: [3, 1], lookback: 6 }), [4, 0])
  })

  it("after a change behind it, goes to the last text part before the frontier when `jump` says the lag costs enough", () => {
    const asked: Array<ReadonlyArray<Place>> = []
    const jump = (from: Place, to: Place) => {
      asked.push([from, to])
      return true
    }
    assert.deepStrictEqual(placeOf(history(), { current: [2, 0], change: [3, 1], lookback: 5, jump }), [5, 0])
    // Asked with where the lookback alone would take it.
    assert.deepStrictEqual(asked, [[[3, 0], [5, 0]]])
  })

  it("after a change behind it, with the lookback taking it as far as the frontier allows, does not ask to jump", () => {
    const jump = () => assert.fail("asked to jump")
    assert.deepStrictEqual(placeOf(history(), { current: [4, 0], change: [4, 1], jump }), [5, 0])
  })

  it("counts unsigned reasoning as nothing sent, and signed reasoning as a block, when moving within the lookback", () => {
    const reasoning = (signed: boolean) => ({
      type: "reasoning",
      text: "thinking",
      ...(signed ? { metadata: { anthropic: { signature: "s" } } } : {})
    })
    const steps = (signed: boolean) => [
      user("u"),
      assistant("a1", [text("one"), call("c1")]),
      assistant("a2", [reasoning(signed), reasoning(signed), text("two"), call("c2")]),
      assistant("a3", [call("c3")])
    ]
    // From [1, 0]: c1 (2 blocks), then "two" is the 3rd block, or the 5th after two signed reasoning blocks.
    const move = { current: [1, 0] as Place, change: [2, 3] as Place, frontier: (): Place => [3, 0], lookback: 4 }
    assert.deepStrictEqual(placeOf(steps(false), move), [2, 2])
    assert.deepStrictEqual(placeOf(steps(true), move), [1, 0])
  })

  it("after a change before it, goes to the last text part before the frontier: the provider writes it anyway", () => {
    assert.deepStrictEqual(placeOf(history(), { current: [4, 0], change: [2, 1] }), [5, 0])
  })

  it("after a change with no anchor yet, goes to the last text part before the frontier, even before the change", () => {
    assert.deepStrictEqual(placeOf(history(), { change: [5, 1], frontier: () => [3, 1] }), [3, 0])
  })

  it("after a change, with no text part further on before the frontier, stays where it is", () => {
    assert.deepStrictEqual(placeOf(history(), { current: [4, 0], change: [5, 1], frontier: () => [5, 0] }), [4, 0])
  })

  it("never goes on a part OpenCode would not send with its metadata", () => {
    const messages = [
      user("u"),
      assistant("a1", [text("kept"), call("c1")]),
      user("u2"),
      assistant("a2", [text(""), text("synthetic", { synthetic: true }), text("ignored", { ignored: true })]),
      assistant("a3", [text("other model"), call("c3")], { modelID: "claude-haiku" }),
      assistant("a4", [text("failed"), call("c4")], { error: { name: "APIError" } }),
      assistant("a5", [call("c5")])
    ]
    assert.deepStrictEqual(placeOf(messages, { cold: true, frontier: () => [6, 0] }), [1, 0])
  })
})

describe("locateAnchor and markAnchor", () => {
  it("find the anchor's part by its message ID, wherever the message now sits", () => {
    const messages = history().slice(2)
    assert.deepStrictEqual(locateAnchor(messages, { messageId: "a4", partIndex: 0 }, model), [2, 0])
  })

  it("lose the anchor when its part can no longer carry it", () => {
    const messages = history()
    messages[3] = assistant("a3", [call("c3")])
    assert.isUndefined(locateAnchor(messages, { messageId: "a3", partIndex: 0 }, model))
  })

  it("mark the part with OpenCode's own cache breakpoint, keeping the metadata it had", () => {
    const messages = [assistant("a1", [text("step", { metadata: { anthropic: { signature: "s" }, other: 1 } })])]
    markAnchor(messages, [0, 0])
    assert.deepStrictEqual(messages[0]!.parts[0], {
      type: "text",
      text: "step",
      metadata: { anthropic: { signature: "s", cacheControl: { type: "ephemeral" } }, other: 1 }
    })
  })
})
