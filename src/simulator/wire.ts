/**
 * What a request puts on the wire, the way OpenCode 1.18 builds it from the messages the plugin's transform hands
 * back: content blocks in the order a provider's prompt cache sees them (tool definitions, system messages, then the
 * conversation), where OpenCode writes its cache breakpoints, and which blocks the plugin added. This is what the cost
 * model (cost.ts) prices; the end-to-end tests check it against the bodies the real OpenCode sends.
 *
 * OpenCode's conversion (its `MessageV2.toModelMessages`, the AI SDK's `convertToModelMessages`, then its provider
 * transform):
 * - a user message sends its text parts (not `ignored`, not empty) and its files; a compaction request sends "What did
 *   we do so far?"; a message with nothing to send is left out;
 * - an assistant message is cut at every `step-start`; each step becomes an assistant message (its text, reasoning
 *   and tool calls, in order) followed by a tool message with the calls' results; a step with neither is left out;
 * - a tool result is the output (completed), `[Old tool result content cleared]` (an output OpenCode's own pruning
 *   cleared), the error (failed) or `[Tool execution was interrupted]` (pending, running);
 * - an assistant message that ended in an error is left out, unless it was aborted after producing content;
 * - empty text is dropped; reasoning is sent only when signed (Claude's thinking blocks);
 * - breakpoints: the first 2 system messages and the last 2 other messages, on each one's last block, and an
 *   assistant text part whose metadata asks for one (`anthropic.cacheControl`: the plugin's own, src/engine/anchor.ts);
 *   the AI SDK's Anthropic package keeps the first 4 in prefix order and drops the rest.
 *
 * Blocks are interned by content (equal content, equal ID), so comparing two requests is comparing integer arrays,
 * and tokens are counted once per distinct string. Every model message starts with a boundary block (its role
 * framing): part of the prefix, never a content block.
 */
import type { Msg } from "../host/schema.ts"

/** Framing tokens: a message's role header, a tool call's or result's wrapper. Small constants; they only shift totals. */
const messageOverhead = 4
const toolOverhead = 8

/** Anthropic's limit of cache breakpoints in a request. */
const maxBreakpoints = 4

const interruptedResult = "[Tool execution was interrupted]"
export const clearedResult = "[Old tool result content cleared]"
const compactionPrompt = "What did we do so far?"

export interface Block {
  readonly kind: "definition" | "system" | "boundary" | "text" | "reasoning" | "file" | "call" | "result"
  /** The role of the message it is in (a boundary: of the message it starts). */
  readonly role: string
  /** IDs of the strings the block sends (see `Blocks.strings`). */
  readonly strings: ReadonlyArray<number>
  readonly overhead: number
  /** Characters of those strings: a size known before anything is tokenized. */
  readonly chars: number
  /** A message boundary: part of the prefix, not one of the content blocks a cache looks back over. */
  readonly boundary: boolean
}

/** The blocks one stored part sends: a text or reasoning block, or a tool call and its result. -1: none. */
export interface PartBlocks {
  readonly content: number
  readonly result: number
}

const none: PartBlocks = { content: -1, result: -1 }

export class Blocks {
  readonly strings: Array<string> = []
  readonly blocks: Array<Block> = []
  private readonly stringIds = new Map<string, number>()
  private readonly blockIds = new Map<string, number>()
  private readonly boundaries = new Map<string, number>()

  string(text: string): number {
    let id = this.stringIds.get(text)
    if (id === undefined) {
      id = this.strings.length
      this.strings.push(text)
      this.stringIds.set(text, id)
    }
    return id
  }

  private block(
    kind: Block["kind"],
    role: string,
    key: string,
    strings: ReadonlyArray<number>,
    overhead: number
  ): number {
    let id = this.blockIds.get(key)
    if (id === undefined) {
      id = this.blocks.length
      let chars = 0
      for (const string of strings) chars += this.strings[string]!.length
      this.blocks.push({ kind, role, strings, overhead, chars, boundary: kind === "boundary" })
      this.blockIds.set(key, id)
    }
    return id
  }

  boundary(role: string): number {
    let id = this.boundaries.get(role)
    if (id === undefined) {
      id = this.block("boundary", role, `m\u0001${role}`, [], messageOverhead)
      this.boundaries.set(role, id)
    }
    return id
  }

  system(text: string): number {
    const id = this.string(text)
    return this.block("system", "system", `s\u0001${id}`, [id], 0)
  }

  toolDefinition(name: string, definition: string): number {
    const ids = [this.string(name), this.string(definition)]
    return this.block("definition", "", `d\u0001${ids.join(",")}`, ids, toolOverhead)
  }

  text(role: string, text: string): number {
    const id = this.string(text)
    return this.block("text", role, `x\u0001${role}\u0001${id}`, [id], 0)
  }

  /** What a stored part sends in a message of `role`. */
  part(role: string, part: Record<string, any>): PartBlocks {
    const type = part.type
    if (type === "text") {
      if (typeof part.text !== "string" || part.text === "" || part.ignored === true) return none
      return { content: this.text(role, part.text), result: -1 }
    }
    if (type === "reasoning") {
      const signed = part.metadata?.anthropic?.signature != null
      if (role !== "assistant" || !signed || typeof part.text !== "string") return none
      const id = this.string(part.text)
      return { content: this.block("reasoning", role, `r\u0001${id}`, [id], 0), result: -1 }
    }
    if (type === "file") {
      if (part.mime === "text/plain" || part.mime === "application/x-directory") return none
      const id = this.string(String(part.url ?? part.filename ?? ""))
      return { content: this.block("file", role, `f\u0001${id}`, [id], 0), result: -1 }
    }
    if (type === "compaction") return { content: this.text("user", compactionPrompt), result: -1 }
    if (type !== "tool" || role !== "assistant" || typeof part.state !== "object" || part.state === null) return none
    const state = part.state
    const call: Array<number> = [this.string(String(part.tool))]
    const input = typeof state.input === "object" && state.input !== null ? state.input : {}
    for (const key of Object.keys(input)) {
      const value = input[key]
      if (value === undefined) continue
      call.push(this.string(key), this.string(typeof value === "string" ? value : JSON.stringify(value)))
    }
    const result = state.status === "completed"
      ? (state.time?.compacted ? clearedResult : state.output)
      : state.status === "error"
      ? state.error
      : interruptedResult
    const resultId = this.string(typeof result === "string" ? result : JSON.stringify(result ?? ""))
    return {
      content: this.block("call", "assistant", `c\u0001${call.join(",")}`, call, toolOverhead),
      result: this.block("result", "tool", `o\u0001${state.status}\u0001${resultId}`, [resultId], toolOverhead)
    }
  }
}

/** One request on the wire. */
export interface Wire {
  /** Block IDs in prefix order; valid until the next request is built. */
  readonly blocks: Int32Array
  /** Positions (in `blocks`) of the blocks carrying a cache breakpoint, ascending. */
  readonly breakpoints: ReadonlyArray<number>
}

const sameValue = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  return JSON.stringify(a) === JSON.stringify(b)
}

const compactedAt = (
  state: any
): unknown => (typeof state?.time === "object" && state.time !== null ? state.time.compacted : undefined)

/**
 * What parts send, in flat arrays indexed by a part's position in the stored history: checking that a copied part
 * still sends the same thing then reads the copy and a few array slots, not the stored objects scattered across the
 * heap (on a 5,000-call replay this check runs tens of millions of times).
 */
class PartTable {
  readonly ids: Array<unknown>
  readonly types: Array<unknown>
  readonly texts: Array<unknown>
  readonly ignored: Array<unknown>
  readonly tools: Array<unknown>
  readonly statuses: Array<unknown>
  readonly outputs: Array<unknown>
  readonly errors: Array<unknown>
  readonly compacted: Array<unknown>
  /** The input as [key, value, key, value, ...], in key order. */
  readonly inputs: Array<Array<unknown> | undefined>
  readonly blocks: Array<PartBlocks | undefined>

  // Filled up front: arrays written at scattered indexes would turn into slow dictionaries.
  constructor(size: number) {
    const empty = () => new Array<any>(size).fill(undefined)
    this.ids = empty()
    this.types = empty()
    this.texts = empty()
    this.ignored = empty()
    this.tools = empty()
    this.statuses = empty()
    this.outputs = empty()
    this.errors = empty()
    this.compacted = empty()
    this.inputs = empty()
    this.blocks = empty()
  }

  set(g: number, part: Record<string, any>, blocks: PartBlocks) {
    this.ids[g] = part.id
    this.types[g] = part.type
    this.texts[g] = part.text
    this.ignored[g] = part.ignored
    this.tools[g] = part.tool
    const state = typeof part.state === "object" && part.state !== null ? part.state : undefined
    this.statuses[g] = state?.status
    this.outputs[g] = state?.output
    this.errors[g] = state?.error
    this.compacted[g] = compactedAt(state)
    let flat: Array<unknown> | undefined
    if (typeof state?.input === "object" && state.input !== null) {
      flat = []
      for (const key in state.input) flat.push(key, state.input[key])
    }
    this.inputs[g] = flat
    this.blocks[g] = blocks
  }

  /** Whether `part` sends what the part recorded at `g` sent. */
  matches(part: Record<string, any>, g: number): boolean {
    if (part.id !== this.ids[g] || part.type !== this.types[g] || this.blocks[g] === undefined) return false
    if (part.type !== "tool") return part.text === this.texts[g] && part.ignored === this.ignored[g]
    const state = part.state
    if (part.tool !== this.tools[g] || typeof state !== "object" || state === null) return false
    if (state.status !== this.statuses[g] || state.output !== this.outputs[g] || state.error !== this.errors[g])
      return false
    if (compactedAt(state) !== this.compacted[g]) return false
    const flat = this.inputs[g]
    if (typeof state.input !== "object" || state.input === null) return flat === undefined
    if (flat === undefined) return false
    let i = 0
    for (const key in state.input) {
      if (key !== flat[i] || !sameValue(state.input[key], flat[i + 1])) return false
      i += 2
    }
    return i === flat.length
  }
}

/** An assistant message that ended in an error is not sent, unless it was aborted after producing something. */
const skipsAssistant = (message: Msg): boolean => {
  const error = message.info.error
  if (error === undefined || error === null) return false
  const aborted = typeof error === "object" && error.name === "MessageAbortedError"
  return !(aborted && message.parts.some((part) => part.type !== "step-start" && part.type !== "reasoning"))
}

/**
 * Builds the wire form of requests made from one stored history. A part that still sends what the stored part at
 * its position sends reuses that part's blocks; a part the plugin changed, and that sends what was sent at its
 * position last time, reuses those (both cheap, and by far the common cases); anything else (newly changed, or added
 * by the plugin) is interned by content.
 */
export class WireBuilder {
  readonly blocks = new Blocks()
  private buffer = new Int32Array(4096)
  private length = 0
  private readonly messageIds: ReadonlyArray<unknown>
  /** Stored message ID -> its position in the stored history. */
  private readonly positions: ReadonlyMap<unknown, number>
  /** Stored part ID -> its position among all stored parts: a part the plugin moved (a fold) is still found. */
  private readonly partPositions = new Map<string, number>()
  private readonly partBase: Array<number> = []
  private readonly stored: PartTable
  private readonly changed: PartTable
  private readonly baseSystem: Set<string>
  private readonly baseTools: ReadonlySet<string>
  /** Messages the host adds that are not in the stored history (the compactions a replay simulates). */
  private readonly host = new Set<unknown>()
  /** Blocks the plugin added (tool definitions, system section, synthetic messages), with how often they were sent. */
  readonly added = new Map<number, number>()
  /** Characters of the latest request. */
  chars = 0
  // Per model message of the request being built: where its last block is, and whether it is a system message.
  private lasts: Array<number> = []
  private systems: Array<boolean> = []
  /** Positions of the blocks of the request being built that carry a breakpoint of their own. */
  private marked: Array<number> = []

  /** `baseSystem`, `baseTools`: OpenCode's own system prompt and tool names, which the plugin does not add. */
  constructor(stored: ReadonlyArray<Msg>, baseSystem: ReadonlyArray<string>, baseTools: ReadonlyArray<string> = []) {
    this.messageIds = stored.map((message) => message.info.id)
    this.positions = new Map(this.messageIds.map((id, m) => [id, m] as const))
    const parts = stored.reduce((sum, message) => sum + message.parts.length, 0)
    this.stored = new PartTable(parts)
    this.changed = new PartTable(parts)
    let g = 0
    for (const message of stored) {
      this.partBase.push(g)
      const role = String(message.info.role)
      for (const part of message.parts) {
        if (typeof part.id === "string") this.partPositions.set(part.id, g)
        this.stored.set(g++, part, this.blocks.part(role, part))
      }
    }
    this.baseSystem = new Set(baseSystem)
    this.baseTools = new Set(baseTools)
  }

  /** Marks more system texts as OpenCode's own (it dates its prompt, so each day brings one), not added by the plugin. */
  hostSystem(texts: ReadonlyArray<string>) {
    for (const text of texts) this.baseSystem.add(text)
  }

  /** Marks a message the host sends that is not in the stored history: not counted as added by the plugin. */
  hostMessage(id: unknown) {
    this.host.add(id)
  }

  /** The messages marked by `hostMessage`. */
  get hostMessages(): ReadonlySet<unknown> {
    return this.host
  }

  private push(block: number, added: boolean) {
    if (this.length === this.buffer.length) {
      const bigger = new Int32Array(this.buffer.length * 2)
      bigger.set(this.buffer)
      this.buffer = bigger
    }
    this.buffer[this.length++] = block
    this.chars += this.blocks.blocks[block]!.chars
    if (added) this.added.set(block, (this.added.get(block) ?? 0) + 1)
  }

  /** `marked`: indices in `content` of blocks that carry a breakpoint of their own. */
  private message(role: string, content: ReadonlyArray<number>, added: boolean, marked: ReadonlyArray<number> = []) {
    if (content.length === 0) return
    this.push(this.blocks.boundary(role), added)
    const start = this.length
    for (const block of content) this.push(block, added)
    for (const index of marked) this.marked.push(start + index)
    this.lasts.push(this.length - 1)
    this.systems.push(role === "system")
  }

  /** The stored position of the part at `p` of a message whose parts start at `base` and end before `end`. */
  private storedAt(part: Record<string, any>, base: number, p: number, end: number): number | undefined {
    const g = base + p
    if (g < end && this.stored.ids[g] === part.id) return g
    if (typeof part.id !== "string") return g < end ? g : undefined
    const moved = this.partPositions.get(part.id)
    return moved !== undefined && moved >= base && moved < end ? moved : undefined
  }

  private blocksOf(role: string, part: Record<string, any>, g: number | undefined): PartBlocks {
    if (g === undefined) return this.blocks.part(role, part)
    if (this.stored.matches(part, g)) return this.stored.blocks[g]!
    if (this.changed.matches(part, g)) return this.changed.blocks[g]!
    const blocks = this.blocks.part(role, part)
    this.changed.set(g, part, blocks)
    return blocks
  }

  /** The wire form of one request, valid until the next call. */
  request(
    definitions: ReadonlyArray<readonly [string, string]>,
    system: ReadonlyArray<string>,
    messages: ReadonlyArray<Msg>
  ): Wire {
    this.length = 0
    this.chars = 0
    this.lasts = []
    this.systems = []
    this.marked = []
    for (const [name, definition] of definitions) {
      this.push(this.blocks.toolDefinition(name, definition), !this.baseTools.has(name))
    }
    for (const text of system) {
      const { host, added } = splitSystem(text, this.baseSystem)
      this.message("system", [this.blocks.system(text)], host === "")
      if (host !== "" && added !== "") {
        const block = this.blocks.system(added)
        this.added.set(block, (this.added.get(block) ?? 0) + 1)
      }
    }
    for (let m = 0; m < messages.length; m++) {
      const message = messages[m]!
      const id = message.info?.id
      // Usually the message at the same position; after a compaction OpenCode sends stored messages out of order.
      const at = this.messageIds[m] === id ? m : this.positions.get(id)
      const added = at === undefined && !this.host.has(id)
      const base = at === undefined ? 0 : this.partBase[at]!
      const end = at === undefined ? 0 : this.partBase[at + 1] ?? this.stored.ids.length
      const role = String(message.info?.role)
      if (role !== "assistant") {
        const content: Array<number> = []
        for (let p = 0; p < message.parts.length; p++) {
          const blocks = this.blocksOf(role, message.parts[p]!, this.storedAt(message.parts[p]!, base, p, end))
          if (blocks.content >= 0) content.push(blocks.content)
        }
        this.message(role, content, added)
        continue
      }
      if (skipsAssistant(message)) continue
      let content: Array<number> = []
      let results: Array<number> = []
      let marked: Array<number> = []
      const step = () => {
        this.message("assistant", content, added, marked)
        this.message("tool", results, added)
        content = []
        results = []
        marked = []
      }
      for (let p = 0; p < message.parts.length; p++) {
        const part = message.parts[p]!
        if (part.type === "step-start") {
          step()
          continue
        }
        const blocks = this.blocksOf(role, part, this.storedAt(part, base, p, end))
        if (blocks.content >= 0) {
          if (part.type === "text" && part.metadata?.anthropic?.cacheControl != null) marked.push(content.length)
          content.push(blocks.content)
        }
        if (blocks.result >= 0) results.push(blocks.result)
      }
      step()
    }
    const breakpoints: Array<number> = []
    let systems = 0
    for (let i = 0; i < this.lasts.length && systems < 2; i++) {
      if (!this.systems[i]) continue
      breakpoints.push(this.lasts[i]!)
      systems++
    }
    let others = 0
    const tail: Array<number> = []
    for (let i = this.lasts.length - 1; i >= 0 && others < 2; i--) {
      if (this.systems[i]) continue
      tail.push(this.lasts[i]!)
      others++
    }
    breakpoints.push(...tail.reverse())
    if (this.marked.length > 0) {
      const all = [...new Set([...breakpoints, ...this.marked])].sort((a, b) => a - b)
      breakpoints.length = 0
      breakpoints.push(...all.slice(0, maxBreakpoints))
    }
    return { blocks: this.buffer.subarray(0, this.length), breakpoints }
  }
}

/**
 * A system text as OpenCode's own (`host`: one of `base`, which the text starts with) and what a plugin appended to it
 * (`added`); a text that starts with none of them is all added.
 */
export const splitSystem = (
  text: string,
  base: ReadonlySet<string>
): { readonly host: string; readonly added: string } => {
  if (base.has(text)) return { host: text, added: "" }
  for (const host of base) if (host !== "" && text.startsWith(host)) return { host, added: text.slice(host.length) }
  return { host: "", added: text }
}

/** Token count of each block, counting every distinct string once with `count`. */
export const blockTokens = (blocks: Blocks, count: (text: string) => number): (block: number) => number => {
  const stringTokens = new Map<number, number>()
  const memo: Array<number | undefined> = []
  return (block) => {
    const known = memo[block]
    if (known !== undefined) return known
    const { overhead, strings } = blocks.blocks[block]!
    let n = overhead
    for (const id of strings) {
      let tokens = stringTokens.get(id)
      if (tokens === undefined) {
        tokens = count(blocks.strings[id]!)
        stringTokens.set(id, tokens)
      }
      n += tokens
    }
    memo[block] = n
    return n
  }
}
