import { assert, describe, it } from "vitest"
import { Blocks, WireBuilder } from "../../src/simulator/wire.ts"
import type { Msg } from "../../src/host/schema.ts"
import { profiles } from "../../src/pricing/profiles.ts"
import type { AnthropicRequest } from "./support/model-server.ts"
import { dcpConfig, placeholder, sourceFile } from "./support/fixtures.ts"
import { useScenario } from "./support/scenario.ts"
import { breakpointShape, priceAnthropicBodies, wireOfAnthropicBody } from "./support/wire.ts"

/**
 * The real Anthropic wire: OpenCode's provider is set up with `@ai-sdk/anthropic` (built into the binary) against the
 * scripted server, so the recorded bodies are exactly what Anthropic would receive, `cache_control` on their blocks.
 * The plugin is off: this is OpenCode's own behaviour, and what a plugin can add to it, the controls of the test at the
 * end, where the plugin is on and what it sends reaches the same wire.
 */

/**
 * A local plugin (auto-loaded from the project's `.opencode/plugin/`) asking for a breakpoint on every assistant text
 * part that starts with `[probe]`, through the part's `metadata`, as OpenCode stores Anthropic's own part metadata.
 */
const probe = `export default async () => ({
  "experimental.chat.messages.transform": async (_input, output) => {
    for (const message of output.messages) {
      if (message.info.role !== "assistant") continue
      for (const part of message.parts) {
        if (part.type === "text" && part.text.startsWith("[probe]")) {
          part.metadata = { ...part.metadata, anthropic: { cacheControl: { type: "ephemeral" } } }
        }
      }
    }
  }
})
`

const scenario = useScenario({
  mainModel: "claude-fake",
  protocol: "anthropic",
  files: { "a.txt": "alpha\n", "b.txt": "beta\n", ".opencode/plugin/probe.ts": probe, ...dcpConfig({ enabled: false }) }
})

/** Where a body carries `cache_control`: `system`, `tool <name>`, or `<message index> <role> <block type>`. */
const markers = (body: AnthropicRequest): Array<string> => {
  const out: Array<string> = []
  for (const tool of body.tools ?? []) if (tool.cache_control !== undefined) out.push(`tool ${tool.name}`)
  for (const block of typeof body.system === "string" ? [] : body.system ?? []) {
    if (block.cache_control !== undefined) out.push("system")
  }
  body.messages.forEach((message, i) => {
    for (const block of typeof message.content === "string" ? [] : message.content) {
      if (block.cache_control !== undefined) out.push(`${i} ${message.role} ${block.type}`)
    }
  })
  return out
}

const read = (file: string, id: string, text?: string) => ({
  ...(text === undefined ? {} : { text }),
  toolCalls: [{ name: "read", args: { filePath: scenario().path(file) }, id }]
})

describe("OpenCode's own breakpoints", () => {
  let bodies: ReadonlyArray<AnthropicRequest> = []
  let stored: ReadonlyArray<Msg> = []

  it("control: are on the system prompt and on the last block of the last two messages, a text-only assistant message included", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([read("a.txt", "toolu_a", "Reading a."), read("b.txt", "toolu_b"), { text: "Done." }])
    await s.prompt(session, "read the files")
    s.model.script([{ text: "Still done." }])
    await s.prompt(session, "anything else?")
    bodies = s.anthropicRequests()
    stored = (await s.messages(session)) as unknown as ReadonlyArray<Msg>
    // OpenCode marks its first 2 system messages (it sends one: a single system block) and its last 2 other messages
    // (an assistant step and its results, the results being a user message on this wire), on each one's last block.
    // So 3 markers at most here, never a tool definition. `@ai-sdk/openai-compatible` drops the marker on a
    // text-only assistant message ("Done."); `@ai-sdk/anthropic` keeps it.
    assert.deepStrictEqual(bodies.map(markers), [
      ["system", "0 user text"],
      ["system", "1 assistant tool_use", "2 user tool_result"],
      ["system", "3 assistant tool_use", "4 user tool_result"],
      ["system", "5 assistant text", "6 user text"]
    ])
    assert.deepStrictEqual(bodies[3]!.messages[5], {
      role: "assistant",
      content: [{ type: "text", text: "Done.", cache_control: { type: "ephemeral" } }]
    })
    for (const body of bodies) assert.isAtMost(markers(body).length, 4)
  })

  it("control: are where the cost model's conversion of the stored session puts them, and the bodies read the cache", () => {
    const blocks = new Blocks()
    const assistants = stored.flatMap((message, i) => (message.info.role === "assistant" ? [i] : []))
    // Each request carries the history before the assistant message it produced.
    bodies.forEach((body, k) => {
      const system = typeof body.system === "string" ? [body.system] : (body.system ?? []).map((block) => block.text!)
      const builder = new WireBuilder(stored, system)
      const converted = builder.request([], system, stored.slice(0, assistants[k]))
      const wire = wireOfAnthropicBody(blocks, body)
      assert.deepStrictEqual(breakpointShape(blocks, wire), breakpointShape(builder.blocks, converted), `request ${k}`)
    })
    const times = bodies.map((body) =>
      scenario().model.anthropic.times[scenario().model.anthropic.requests.indexOf(body)]!
    )
    const costs = priceAnthropicBodies(profiles.anthropic, bodies, times)
    assert.strictEqual(costs[0]!.readTokens, 0)
    for (const cost of costs.slice(1)) assert.isAbove(cost.readTokens, 0)
  })
})

describe("a breakpoint asked for in an assistant text part's metadata", () => {
  it("control: reaches the wire as cache_control on that text block; a fifth marker drops the last one", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([
      read("a.txt", "toolu_p1", "[probe] Reading a."),
      read("b.txt", "toolu_p2", "[probe] Reading b."),
      read("a.txt", "toolu_p3"),
      { text: "Done." }
    ])
    await s.prompt(session, "read the files")
    const bodies = s.anthropicRequests()
    assert.lengthOf(bodies, 4)
    // OpenCode passes a text part's `metadata` on as the AI SDK's `providerOptions`: the probe's marker arrives.
    assert.deepStrictEqual(bodies[1]!.messages[1], {
      role: "assistant",
      content: [
        { type: "text", text: "[probe] Reading a.", cache_control: { type: "ephemeral" } },
        {
          type: "tool_use",
          id: "toolu_p1",
          name: "read",
          input: { filePath: s.path("a.txt") },
          cache_control: { type: "ephemeral" }
        }
      ]
    })
    // With two probe markers, OpenCode's and the probe's make 5. `@ai-sdk/anthropic` keeps the first 4 in body order
    // (system, then messages), warns (a warning OpenCode does not log: it sets AI_SDK_LOG_WARNINGS to false) and sends
    // the request: the marker dropped is the newest one, on the last tool result.
    assert.deepStrictEqual(bodies.map(markers), [
      ["system", "0 user text"],
      ["system", "1 assistant text", "1 assistant tool_use", "2 user tool_result"],
      ["system", "1 assistant text", "3 assistant text", "3 assistant tool_use"],
      ["system", "1 assistant text", "3 assistant text", "5 assistant tool_use"]
    ])
    assert.strictEqual(bodies[3]!.messages[6]!.role, "user")
    assert.deepStrictEqual(
      (bodies[3]!.messages[6]!.content as ReadonlyArray<{ type: string }>).map((block) => block.type),
      ["tool_result"]
    )
  })
})

describe("the same wire with the plugin on", () => {
  const on = useScenario({
    mainModel: "claude-fake",
    protocol: "anthropic",
    files: { "src/a.ts": sourceFile("alpha") }
  })

  it("carries its system section and its placeholder, OpenCode's breakpoints where the controls above found them", async () => {
    const s = on()
    const session = await s.newSession()
    const readA = (id: string) => ({ toolCalls: [{ name: "read", args: { filePath: s.path("src/a.ts") }, id }] })
    s.model.script([readA("toolu_on1"), readA("toolu_on2"), { text: "Done." }])
    await s.prompt(session, "read a.ts twice")
    const bodies = s.anthropicRequests()
    assert.lengthOf(bodies, 3)
    const last = bodies[2]!
    const system = typeof last.system === "string"
      ? last.system
      : (last.system ?? []).map((block) => block.text).join("")
    assert.include(system, "## Context pruning")
    const result = last.messages.flatMap((message) => typeof message.content === "string" ? [] : message.content)
      .find((block) => block.type === "tool_result" && block.tool_use_id === "toolu_on1")
    const content = result?.content
    const text = typeof content === "string" ? content : (content ?? []).map((block) => block.text ?? "").join("")
    assert.match(text, placeholder("[pruned duplicate: src/a.ts lines 1-60; id 1]"))
    assert.deepStrictEqual(bodies.map(markers), [
      ["system", "0 user text"],
      ["system", "1 assistant tool_use", "2 user tool_result"],
      ["system", "3 assistant tool_use", "4 user tool_result"]
    ])
  })
})
