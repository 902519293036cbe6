import { countTokens } from "gpt-tokenizer/encoding/o200k_base"
import { CostMeter, type RequestCost } from "../../../src/simulator/cost.ts"
import { Blocks, blockTokens, type Wire } from "../../../src/simulator/wire.ts"
import type { PricingProfile } from "../../../src/pricing/profiles.ts"
import type { AnthropicBlock, AnthropicRequest, RecordedRequest } from "./model-server.ts"

/** Blocks in prefix order, and the positions of those pushed with a breakpoint. */
const wireWriter = () => {
  const out: Array<number> = []
  const breakpoints: Array<number> = []
  const push = (block: number, marked: boolean) => {
    out.push(block)
    if (marked) breakpoints.push(out.length - 1)
  }
  return { out, breakpoints, push }
}

/**
 * A request body the real OpenCode sent, as the provider's prompt cache sees it: its tool definitions, then every
 * message's content blocks (a tool call and a tool result are one block each), with the breakpoints OpenCode itself
 * wrote (`cache_control` on a message, a content part or a tool call: OpenCode does this for a model whose ID names
 * Claude). What the cost model prices, straight from the wire.
 */
export const wireOfBody = (blocks: Blocks, body: RecordedRequest): Wire => {
  const { out, breakpoints, push } = wireWriter()
  for (const tool of body.tools ?? [])
    push(blocks.toolDefinition(tool.function.name, JSON.stringify(tool.function)), false)
  for (const message of body.messages) {
    const start = out.length
    out.push(blocks.boundary(message.role))
    const content = message.content
    if (typeof content === "string") {
      if (content !== "") push(blocks.text(message.role, content), false)
    } else if (Array.isArray(content)) {
      for (const part of content as Array<{ text?: unknown; cache_control?: unknown }>) {
        push(
          blocks.text(message.role, typeof part.text === "string" ? part.text : JSON.stringify(part)),
          part.cache_control !== undefined
        )
      }
    }
    const calls = Array.isArray(message.tool_calls)
      ? (message.tool_calls as Array<{ function: { name: string; arguments: string }; cache_control?: unknown }>)
      : []
    for (const call of calls)
      push(
        blocks.text("call", `${call.function.name}\u0000${call.function.arguments}`),
        call.cache_control !== undefined
      )
    if ((message as { cache_control?: unknown }).cache_control !== undefined && out.length - 1 > start) {
      if (breakpoints.at(-1) !== out.length - 1) breakpoints.push(out.length - 1)
    }
  }
  return { blocks: Int32Array.from(out), breakpoints }
}

/** A block's JSON without its breakpoint: a marker is not content. */
const unmarked = (value: unknown): string =>
  JSON.stringify(value, (key, entry) => (key === "cache_control" ? undefined : entry))

const resultText = (content: AnthropicBlock["content"]): string =>
  typeof content === "string"
    ? content
    : (content ?? []).map((block) => (block.type === "text" ? block.text ?? "" : unmarked(block))).join("")

/**
 * An Anthropic Messages body the real OpenCode sent through `@ai-sdk/anthropic`, as Anthropic's prompt cache sees
 * it: the tool definitions, the system blocks (after one `system` boundary, so that `breakpointShape` counts them as it
 * does OpenAI system messages), then each message's content blocks after its boundary, with a breakpoint at every
 * block carrying `cache_control`. A tool call and a tool result intern as in `wireOfBody` (role `call` and `tool`),
 * so both protocols give the same blocks for the same content.
 */
export const wireOfAnthropicBody = (blocks: Blocks, body: AnthropicRequest): Wire => {
  const { out, breakpoints, push } = wireWriter()
  for (const tool of body.tools ?? [])
    push(blocks.toolDefinition(tool.name, unmarked(tool)), tool.cache_control !== undefined)
  const system = typeof body.system === "string" ? [{ type: "text", text: body.system }] : body.system ?? []
  if (system.length > 0) out.push(blocks.boundary("system"))
  for (const block of system) push(blocks.system(block.text ?? unmarked(block)), block.cache_control !== undefined)
  for (const message of body.messages) {
    out.push(blocks.boundary(message.role))
    const content: ReadonlyArray<AnthropicBlock> = typeof message.content === "string"
      ? (message.content === "" ? [] : [{ type: "text", text: message.content }])
      : message.content
    for (const block of content) {
      const id = block.type === "text"
        ? blocks.text(message.role, block.text ?? "")
        : block.type === "tool_use"
        ? blocks.text("call", `${block.name}\u0000${JSON.stringify(block.input)}`)
        : block.type === "tool_result"
        ? blocks.text("tool", resultText(block.content))
        : blocks.text(message.role, unmarked(block))
      push(id, block.cache_control !== undefined)
    }
  }
  return { blocks: Int32Array.from(out), breakpoints }
}

const priceWith = <Body extends { readonly model: string }>(
  profile: PricingProfile,
  bodies: ReadonlyArray<Body>,
  times: ReadonlyArray<number>,
  wireOf: (blocks: Blocks, body: Body) => Wire
): Array<RequestCost> => {
  const blocks = new Blocks()
  const plain = { disallowedSpecial: new Set<string>() }
  const meter = new CostMeter(profile, blocks, blockTokens(blocks, (text) => countTokens(text, plain)))
  return bodies.map((body, i) => meter.record(wireOf(blocks, body), times[i]!, body.model))
}

/** What each recorded request cost under `profile`, sent at the given times (ms). */
export const priceBodies = (
  profile: PricingProfile,
  bodies: ReadonlyArray<RecordedRequest>,
  times: ReadonlyArray<number>
): Array<RequestCost> => priceWith(profile, bodies, times, wireOfBody)

/** The same for Anthropic Messages bodies (`ModelServer.anthropic`). */
export const priceAnthropicBodies = (
  profile: PricingProfile,
  bodies: ReadonlyArray<AnthropicRequest>,
  times: ReadonlyArray<number>
): Array<RequestCost> => priceWith(profile, bodies, times, wireOfAnthropicBody)

/** Whether each content block of a wire carries a breakpoint, message boundaries and tool definitions left out. */
export const breakpointShape = (blocks: Blocks, wire: Wire): Array<boolean> => {
  const marked = new Set(wire.breakpoints)
  const shape: Array<boolean> = []
  let inMessages = false
  wire.blocks.forEach((block, position) => {
    if (blocks.blocks[block]!.boundary) {
      inMessages = true
      return
    }
    if (inMessages) shape.push(marked.has(position))
  })
  return shape
}
