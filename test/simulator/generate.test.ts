import { assert, describe, it } from "vitest"
import { freezeShared, freshCopy } from "../../src/simulator/copy.ts"
import { generate } from "../../src/simulator/generator/generate.ts"

describe("generate", () => {
  const session = generate({ seed: 3, toolCalls: 200 })

  it("is deterministic for a seed", () => {
    assert.strictEqual(JSON.stringify(generate({ seed: 3, toolCalls: 200 }).messages), JSON.stringify(session.messages))
    assert.notStrictEqual(
      JSON.stringify(generate({ seed: 4, toolCalls: 200 }).messages),
      JSON.stringify(session.messages)
    )
  })

  it("makes exactly the requested number of tool calls, a few percent of them failed", () => {
    const tools = session.messages.flatMap((m) => m.parts).filter((p) => p.type === "tool")
    assert.lengthOf(tools, 200)
    assert.strictEqual(session.stats.errors, tools.filter((p) => p.state.status === "error").length)
    assert.isAbove(session.stats.errors, 0)
    assert.isBelow(session.stats.errors, 20)
  })

  it("moves time forward: seconds inside a turn, minutes between turns", () => {
    const times = session.messages.map((m) => m.info.time.created)
    assert.strictEqual(times.every((t, i) => i === 0 || t > times[i - 1]!), true)
    const turnStarts = session.messages.flatMap((m, i) => (i > 0 && m.info.role === "user" ? [i] : []))
    assert.isAbove(turnStarts.length, 2)
    for (const start of turnStarts) assert.isAbove(times[start]! - times[start - 1]!, 10_000)
  })

  it("stores a command's output as OpenCode does: at most its last 50 KB, after a pointer to the whole output", () => {
    const parts = generate({ seed: 1, toolCalls: 1000 }).messages.flatMap((m) => m.parts)
    const bash = parts.filter((p) => p.type === "tool" && p.tool === "bash" && p.state.status === "completed")
    const outputs = bash.map((p) => String(p.state.output))
    const cut = outputs.filter((output) => output.startsWith("...output truncated...\nFull output saved to: "))
    assert.isNotEmpty(cut)
    for (const output of cut) assert.isAtMost(output.slice(output.indexOf("\n", 23) + 1).length, 51_200)
    for (const output of outputs) assert.isAtMost(output.length, 51_200 + 100)
  })

  it("reads some files more than once", () => {
    const reads = session.messages.flatMap((m) => m.parts).filter((p) => p.type === "tool" && p.tool === "read")
    const paths = reads.map((p) => JSON.stringify(p.state.input))
    assert.isBelow(new Set(paths).size, paths.length)
  })
})

describe("freshCopy", () => {
  const session = generate({ seed: 5, toolCalls: 30 })
  freezeShared(session.messages)

  it("makes new objects down to the tool input and shares the rest, read-only", () => {
    const copy = freshCopy(session.messages, session.messages.length)
    assert.deepStrictEqual(copy, session.messages)
    const part = copy.flatMap((m) => m.parts).find((p) => p.type === "tool")!
    const original = session.messages.flatMap((m) => m.parts).find((p) => p.id === part.id)!
    assert.notStrictEqual(part, original)
    assert.notStrictEqual(part.state, original.state)
    assert.notStrictEqual(part.state.input, original.state.input)
    assert.strictEqual(part.state.time, original.state.time)
    assert.throws(() => {
      part.state.time.start = 0
    }, TypeError)
  })
})
