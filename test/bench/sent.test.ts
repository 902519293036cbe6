import { describe, expect, it } from "vitest"
import { freezeShared, freshCopy } from "../../src/analysis/copy.ts"
import { generate, type Msg } from "../../bench/generate.ts"
import { Sent } from "../../src/analysis/sent.ts"

const session = generate({ seed: 9, toolCalls: 20 })
freezeShared(session.messages)
const system = ["you are a coding agent"]
const firstTool = (messages: ReadonlyArray<Msg>) =>
  messages.flatMap((m) => m.parts).find((p) => p.type === "tool" && p.state.status === "completed")!

describe("Sent", () => {
  it("sends the same units for an untouched copy, request after request", () => {
    const sent = new Sent(session.messages, system)
    const first = [...sent.request([], system, freshCopy(session.messages, session.messages.length))]
    const second = [...sent.request([], system, freshCopy(session.messages, session.messages.length))]
    expect(second).toEqual(first)
    expect(sent.added.size).toBe(0)
  })

  it("gives a part the plugin changed a new unit, and the same one while it stays changed", () => {
    const sent = new Sent(session.messages, system)
    const untouched = [...sent.request([], system, freshCopy(session.messages, session.messages.length))]
    const prune = () => {
      const copy = freshCopy(session.messages, session.messages.length)
      const part = firstTool(copy)
      part.state = { ...part.state, output: "[pruned: read a.ts; id 1]" }
      return copy
    }
    const pruned = [...sent.request([], system, prune())]
    const again = [...sent.request([], system, prune())]
    const at = pruned.findIndex((unit, i) => unit !== untouched[i])
    expect(at).toBeGreaterThan(0)
    expect(pruned.slice(at + 1)).toEqual(untouched.slice(at + 1))
    expect(again).toEqual(pruned)
  })

  it("ignores changes to what is not sent (the output of a failed call)", () => {
    const sent = new Sent(session.messages, system)
    const untouched = [...sent.request([], system, freshCopy(session.messages, session.messages.length))]
    const copy = freshCopy(session.messages, session.messages.length)
    const failed = copy.flatMap((m) => m.parts).find((p) => p.type === "tool" && p.state.status === "error")!
    failed.state = { ...failed.state, output: "never sent" }
    expect([...sent.request([], system, copy)]).toEqual(untouched)
  })

  it("counts what the plugin adds: tool definitions, a system section, an appended message", () => {
    const sent = new Sent(session.messages, system)
    const copy = freshCopy(session.messages, session.messages.length)
    const last = copy[copy.length - 1]!
    copy.push({
      info: { ...last.info, id: "dcp-prunable-tools" },
      parts: [{ id: "dcp-prunable-tools-text", type: "text", text: "<prunable-tools>\n1: read a.ts\n</prunable-tools>" }]
    })
    const units = sent.request([["discard", "{}"]], [...system, "## Context pruning"], copy)
    // A definition, a system section, the appended message's boundary and its text.
    expect([...sent.added.values()].reduce((a, b) => a + b, 0)).toBe(4)
    expect(units.length).toBeGreaterThan(4)
  })
})

describe("Sent after a compaction", () => {
  it("finds stored messages by ID when a request sends them out of order", () => {
    const sent = new Sent(session.messages, system)
    const all = freshCopy(session.messages, session.messages.length)
    const inOrder = [...sent.request([], system, all)]
    // What OpenCode sends after a compaction: the newest messages first, then a tail of older ones.
    const half = Math.floor(all.length / 2)
    const reordered = [...all.slice(half), ...all.slice(0, half)]
    const units = [...sent.request([], system, freshCopy(reordered, reordered.length))]
    expect(units.toSorted((a, b) => a - b)).toEqual(inOrder.toSorted((a, b) => a - b))
    expect(sent.added.size).toBe(0)
  })
})
