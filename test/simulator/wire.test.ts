import { assert, describe, it } from "vitest"
import { generate } from "../../src/simulator/generator/generate.ts"
import type { Msg } from "../../src/host/schema.ts"
import { freezeShared, freshCopy } from "../../src/simulator/copy.ts"
import { WireBuilder } from "../../src/simulator/wire.ts"

const session = generate({ seed: 9, toolCalls: 20 })
freezeShared(session.messages)
const system = ["you are a coding agent"]
const firstTool = (messages: ReadonlyArray<Msg>) =>
  messages.flatMap((m) => m.parts).find((p) => p.type === "tool" && p.state.status === "completed")!

/** What a request sends, as readable lines: one per model message, `role: block | block`. */
const render = (
  builder: WireBuilder,
  definitions: ReadonlyArray<readonly [string, string]>,
  messages: ReadonlyArray<Msg>
) => {
  const wire = builder.request(definitions, system, messages)
  const roles = new Map(
    ["system", "user", "assistant", "tool"].map((role) => [builder.blocks.boundary(role), role] as const)
  )
  const lines: Array<string> = []
  let line: Array<string> | undefined
  wire.blocks.forEach((id, position) => {
    const block = builder.blocks.blocks[id]!
    const text = block.strings.map((s) => builder.blocks.strings[s]).join(" ") +
      (wire.breakpoints.includes(position) ? " *" : "")
    if (block.boundary) {
      line = [roles.get(id)!]
      lines.push("")
    } else if (line === undefined) {
      lines.push(`def: ${text}`)
      return
    } else {
      line.push(text)
    }
    lines[lines.length - 1] = `${line[0]}: ${line.slice(1).join(" | ")}`
  })
  return lines
}

const at = (created: number) => ({ created, completed: created })
const user = (id: string, parts: Array<Record<string, any>>): Msg => ({
  info: { id, role: "user", time: at(0) },
  parts
})
const assistant = (id: string, parts: Array<Record<string, any>>, extra: Record<string, any> = {}): Msg => ({
  info: { id, role: "assistant", time: at(0), ...extra },
  parts
})
const tool = (callID: string, state: Record<string, any>) => ({ type: "tool", callID, tool: "read", state })

describe("WireBuilder: OpenCode's conversion", () => {
  it("sends each step of an assistant message as an assistant message then a tool message with its results", () => {
    const messages = [
      user("u1", [{ type: "text", text: "hi" }]),
      assistant("a1", [
        { type: "step-start" },
        { type: "text", text: "reading" },
        tool("c1", { status: "completed", input: { filePath: "a" }, output: "A" }),
        tool("c2", { status: "error", input: { filePath: "b" }, error: "no such file" }),
        { type: "step-finish" },
        { type: "step-start" },
        tool("c3", { status: "running", input: { filePath: "c" } }),
        { type: "step-start" },
        { type: "step-finish" }
      ])
    ]
    assert.deepStrictEqual(render(new WireBuilder(messages, system), [], messages), [
      "system: you are a coding agent *",
      "user: hi",
      "assistant: reading | read filePath a | read filePath b",
      "tool: A | no such file",
      "assistant: read filePath c *",
      "tool: [Tool execution was interrupted] *"
    ])
  })

  it("leaves out ignored and empty text, unsigned reasoning, and messages with nothing to send", () => {
    const messages = [
      user("u1", [{ type: "text", text: "a note", ignored: true }, { type: "text", text: "" }]),
      user("u2", [{ type: "text", text: "question" }]),
      assistant("a1", [
        { type: "step-start" },
        { type: "reasoning", text: "thinking, unsigned" },
        { type: "reasoning", text: "thinking, signed", metadata: { anthropic: { signature: "sig" } } },
        { type: "text", text: "" },
        { type: "text", text: "answer" }
      ])
    ]
    assert.deepStrictEqual(render(new WireBuilder(messages, system), [], messages), [
      "system: you are a coding agent *",
      "user: question *",
      "assistant: thinking, signed | answer *"
    ])
  })

  it("sends what OpenCode sends for a cleared output, a compaction request and a failed assistant message", () => {
    const messages = [
      user("u1", [{ type: "compaction", auto: true }]),
      assistant("a0", [{ type: "step-start" }, { type: "text", text: "partial" }], { error: { name: "APIError" } }),
      assistant("a1", [
        { type: "step-start" },
        tool("c1", {
          status: "completed",
          input: { filePath: "a" },
          output: "A",
          time: { start: 0, end: 0, compacted: 5 }
        })
      ]),
      assistant("a2", [{ type: "step-start" }, { type: "text", text: "aborted after text" }], {
        error: { name: "MessageAbortedError" }
      })
    ]
    assert.deepStrictEqual(render(new WireBuilder(messages, system), [], messages), [
      "system: you are a coding agent *",
      "user: What did we do so far?",
      "assistant: read filePath a",
      "tool: [Old tool result content cleared] *",
      "assistant: aborted after text *"
    ])
  })

  it("puts tool definitions first, then every system message, marking the first two", () => {
    const messages = [user("u1", [{ type: "text", text: "hi" }])]
    const builder = new WireBuilder(messages, system)
    const wire = builder.request([["discard", "{}"]], ["one", "two", "three"], messages)
    const strings = (position: number) =>
      builder.blocks.blocks[wire.blocks[position]!]!.strings.map((s) => builder.blocks.strings[s])
    assert.deepStrictEqual(strings(0), ["discard", "{}"])
    assert.deepStrictEqual(wire.breakpoints.map(strings), [["one"], ["two"], ["hi"]])
  })

  const marked = { anthropic: { cacheControl: { type: "ephemeral" } } }
  const conversation = (markedTexts: ReadonlyArray<string>) => [
    user("u1", [{ type: "text", text: "hi" }]),
    ...["early", "middle", "late"].map((text, i) =>
      assistant(`a${i}`, [
        { type: "step-start" },
        { type: "text", text, ...(markedTexts.includes(text) ? { metadata: marked } : {}) },
        tool(`c${i}`, { status: "completed", input: { filePath: text }, output: text.toUpperCase() })
      ])
    )
  ]

  it("marks an assistant text part whose metadata asks for a cache breakpoint, as Anthropic's package does", () => {
    const messages = conversation(["middle"])
    assert.deepStrictEqual(render(new WireBuilder(messages, system), [], messages), [
      "system: you are a coding agent *",
      "user: hi",
      "assistant: early | read filePath early",
      "tool: EARLY",
      "assistant: middle * | read filePath middle",
      "tool: MIDDLE",
      "assistant: late | read filePath late *",
      "tool: LATE *"
    ])
  })

  it("keeps the first 4 breakpoints of a request and drops the rest, as Anthropic's package does", () => {
    const messages = conversation(["early", "middle"])
    assert.deepStrictEqual(render(new WireBuilder(messages, system), [], messages).slice(2), [
      "assistant: early * | read filePath early",
      "tool: EARLY",
      "assistant: middle * | read filePath middle",
      "tool: MIDDLE",
      "assistant: late | read filePath late *",
      "tool: LATE"
    ])
  })
})

describe("WireBuilder: reuse across requests", () => {
  it("sends the same blocks for an untouched copy, request after request", () => {
    const builder = new WireBuilder(session.messages, system)
    const first = [...builder.request([], system, freshCopy(session.messages, session.messages.length)).blocks]
    const second = [...builder.request([], system, freshCopy(session.messages, session.messages.length)).blocks]
    assert.deepStrictEqual(second, first)
    assert.strictEqual(builder.added.size, 0)
  })

  it("gives a part the plugin changed a new block, and the same one while it stays changed", () => {
    const builder = new WireBuilder(session.messages, system)
    const untouched = [...builder.request([], system, freshCopy(session.messages, session.messages.length)).blocks]
    const prune = () => {
      const copy = freshCopy(session.messages, session.messages.length)
      const part = firstTool(copy)
      part.state = { ...part.state, output: "[pruned: read a.ts; id 1]" }
      return copy
    }
    const pruned = [...builder.request([], system, prune()).blocks]
    const again = [...builder.request([], system, prune()).blocks]
    const first = pruned.findIndex((block, i) => block !== untouched[i])
    assert.isAbove(first, 0)
    assert.deepStrictEqual(pruned.slice(first + 1), untouched.slice(first + 1))
    assert.deepStrictEqual(again, pruned)
  })

  it("ignores changes to what is not sent (the output of a failed call)", () => {
    const builder = new WireBuilder(session.messages, system)
    const untouched = [...builder.request([], system, freshCopy(session.messages, session.messages.length)).blocks]
    const copy = freshCopy(session.messages, session.messages.length)
    const failed = copy.flatMap((m) => m.parts).find((p) => p.type === "tool" && p.state.status === "error")!
    failed.state = { ...failed.state, output: "never sent" }
    assert.deepStrictEqual([...builder.request([], system, copy).blocks], untouched)
  })

  it("counts what the plugin adds: tool definitions, a system section, an appended message", () => {
    const builder = new WireBuilder(session.messages, system)
    const copy = freshCopy(session.messages, session.messages.length)
    copy.push({
      info: { id: "dcp-note", role: "user" },
      parts: [{ id: "dcp-note-text", type: "text", text: "a note" }]
    })
    builder.request([["discard", "{}"]], [...system, "## Context pruning"], copy)
    // A definition; the section's boundary and text; the appended message's boundary and text.
    assert.strictEqual([...builder.added.values()].reduce((a, b) => a + b, 0), 5)
  })

  it("counts a section appended to OpenCode's system text as added, and OpenCode's text as its own", () => {
    const builder = new WireBuilder(session.messages, system)
    const copy = freshCopy(session.messages, session.messages.length)
    builder.request([], [`${system[0]}\n\n## Context pruning`], copy)
    const added = [...builder.added.keys()].map((block) =>
      builder.blocks.blocks[block]!.strings.map((s) => builder.blocks.strings[s]).join("")
    )
    assert.deepStrictEqual(added, ["\n\n## Context pruning"])
  })

  it("finds stored messages by ID when a request sends them out of order, as after a compaction", () => {
    const builder = new WireBuilder(session.messages, system)
    const all = freshCopy(session.messages, session.messages.length)
    const inOrder = [...builder.request([], system, all).blocks]
    const half = Math.floor(all.length / 2)
    const reordered = [...all.slice(half), ...all.slice(0, half)]
    const blocks = [...builder.request([], system, freshCopy(reordered, reordered.length)).blocks]
    assert.deepStrictEqual(blocks.toSorted((a, b) => a - b), inOrder.toSorted((a, b) => a - b))
    assert.strictEqual(builder.added.size, 0)
  })
})
