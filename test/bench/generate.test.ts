import { describe, expect, it } from "vitest"
import { freezeShared, freshCopy } from "../../src/analysis/copy.ts"
import { generate } from "../../bench/generate.ts"

describe("generate", () => {
  const session = generate({ seed: 3, toolCalls: 200 })

  it("is deterministic for a seed", () => {
    expect(JSON.stringify(generate({ seed: 3, toolCalls: 200 }).messages)).toBe(JSON.stringify(session.messages))
    expect(JSON.stringify(generate({ seed: 4, toolCalls: 200 }).messages)).not.toBe(JSON.stringify(session.messages))
  })

  it("makes exactly the requested number of tool calls, a few percent of them failed", () => {
    const tools = session.messages.flatMap((m) => m.parts).filter((p) => p.type === "tool")
    expect(tools).toHaveLength(200)
    expect(session.stats.errors).toBe(tools.filter((p) => p.state.status === "error").length)
    expect(session.stats.errors).toBeGreaterThan(0)
    expect(session.stats.errors).toBeLessThan(20)
  })

  it("sends one request per assistant message, with the history before it", () => {
    const assistants = session.messages.flatMap((m, i) => (m.info.role === "assistant" ? [i] : []))
    expect(session.requests.map((r) => r.upTo)).toEqual(assistants)
    for (const request of session.requests) {
      expect(session.messages[request.upTo]!.info.time.created).toBe(request.time)
    }
  })

  it("gives every assistant message one step and usage figures", () => {
    for (const message of session.messages.filter((m) => m.info.role === "assistant")) {
      expect(message.parts.filter((p) => p.type === "step-start")).toHaveLength(1)
      expect(message.parts.at(-1)!.type).toBe("step-finish")
      expect(message.info.tokens.input).toBeGreaterThan(0)
    }
  })

  it("moves time forward: seconds inside a turn, minutes between turns", () => {
    const times = session.requests.map((r) => r.time)
    expect(times.every((t, i) => i === 0 || t > times[i - 1]!)).toBe(true)
    const turnStarts = session.requests.filter((r, i) => i > 0 && r.user !== undefined)
    expect(turnStarts.length).toBeGreaterThan(2)
    for (const start of turnStarts) {
      const previous = session.requests[session.requests.indexOf(start) - 1]!
      expect(start.time - previous.time).toBeGreaterThan(10_000)
    }
  })

  it("reads some files more than once", () => {
    const reads = session.messages.flatMap((m) => m.parts).filter((p) => p.type === "tool" && p.tool === "read")
    const paths = reads.map((p) => JSON.stringify(p.state.input))
    expect(new Set(paths).size).toBeLessThan(paths.length)
  })
})

describe("freshCopy", () => {
  const session = generate({ seed: 5, toolCalls: 30 })
  freezeShared(session.messages)

  it("makes new objects down to the tool input and shares the rest, read-only", () => {
    const copy = freshCopy(session.messages, session.messages.length)
    expect(copy).toEqual(session.messages)
    const part = copy.flatMap((m) => m.parts).find((p) => p.type === "tool")!
    const original = session.messages.flatMap((m) => m.parts).find((p) => p.id === part.id)!
    expect(part).not.toBe(original)
    expect(part.state).not.toBe(original.state)
    expect(part.state.input).not.toBe(original.state.input)
    expect(part.state.time).toBe(original.state.time)
    expect(() => {
      part.state.time.start = 0
    }).toThrow(TypeError)
  })
})
