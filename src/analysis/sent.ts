/**
 * What each request sent, as a sequence of unit IDs (see cost.ts), computed after the plugin's transform.
 */
import type { Msg } from "./copy.ts"
import { Units } from "./cost.ts"

const sameValue = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  return JSON.stringify(a) === JSON.stringify(b)
}

/**
 * What parts send, in flat arrays indexed by a part's position in the stored history: checking that a copied
 * part still sends the same thing then reads the copy and a few array slots, not the stored objects scattered
 * across the heap (on a 5,000-call replay this check runs tens of millions of times).
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
  /** The input as [key, value, key, value, ...], in key order. */
  readonly inputs: Array<Array<unknown> | undefined>
  readonly units: Array<number | undefined>

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
    this.inputs = empty()
    this.units = empty()
  }

  set(g: number, part: Record<string, any>, unit: number) {
    this.ids[g] = part.id
    this.types[g] = part.type
    this.texts[g] = part.text
    this.ignored[g] = part.ignored
    this.tools[g] = part.tool
    const state = typeof part.state === "object" && part.state !== null ? part.state : undefined
    this.statuses[g] = state?.status
    this.outputs[g] = state?.output
    this.errors[g] = state?.error
    let flat: Array<unknown> | undefined
    if (typeof state?.input === "object" && state.input !== null) {
      flat = []
      for (const key in state.input) flat.push(key, state.input[key])
    }
    this.inputs[g] = flat
    this.units[g] = unit
  }

  /** Whether `part` sends what the part recorded at `g` sent: same type and text, or same tool, status, output, error and input. */
  matches(part: Record<string, any>, g: number): boolean {
    if (part.id !== this.ids[g] || part.type !== this.types[g] || this.units[g] === undefined) return false
    if (part.type !== "tool") return part.text === this.texts[g] && part.ignored === this.ignored[g]
    const state = part.state
    if (part.tool !== this.tools[g] || typeof state !== "object" || state === null) return false
    if (state.status !== this.statuses[g] || state.output !== this.outputs[g] || state.error !== this.errors[g]) return false
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

/**
 * What one request sent, as unit IDs. A part that still sends what the stored part at its position (in the stored
 * message of the same ID) sends reuses that part's unit; a part the plugin changed, and that sends what was sent at its position last time, reuses that
 * unit (both cheap, and by far the common cases); anything else (newly changed, or added by the plugin) is
 * interned by content.
 */
export class Sent {
  readonly units = new Units()
  private buffer = new Int32Array(4096)
  private readonly messageIds: ReadonlyArray<unknown>
  /** Stored message ID -> its position in the stored history. */
  private readonly positions: ReadonlyMap<unknown, number>
  private readonly partBase: Array<number> = []
  private readonly stored: PartTable
  private readonly changed: PartTable
  private readonly baseSystem: ReadonlySet<string>
  /** Units the plugin added (tool definitions, system section, synthetic messages), with how often they were sent. */
  readonly added = new Map<number, number>()
  /** Characters of the latest request. */
  chars = 0

  constructor(stored: ReadonlyArray<Msg>, baseSystem: ReadonlyArray<string>) {
    this.messageIds = stored.map((message) => message.info.id)
    this.positions = new Map(this.messageIds.map((id, m) => [id, m] as const))
    const parts = stored.reduce((sum, message) => sum + message.parts.length, 0)
    this.stored = new PartTable(parts)
    this.changed = new PartTable(parts)
    let g = 0
    for (const message of stored) {
      this.partBase.push(g)
      for (const part of message.parts) {
        const unit = this.units.part(part)
        this.stored.set(g++, part, unit)
      }
    }
    this.baseSystem = new Set(baseSystem)
  }

  private push(length: number, unit: number, added: boolean): number {
    if (length === this.buffer.length) {
      const bigger = new Int32Array(this.buffer.length * 2)
      bigger.set(this.buffer)
      this.buffer = bigger
    }
    this.buffer[length] = unit
    this.chars += this.units.chars[unit]!
    if (added) this.added.set(unit, (this.added.get(unit) ?? 0) + 1)
    return length + 1
  }

  private unitOf(part: Record<string, any>, g: number): number {
    if (this.stored.matches(part, g)) return this.stored.units[g]!
    if (this.changed.matches(part, g)) return this.changed.units[g]!
    const unit = this.units.part(part)
    this.changed.set(g, part, unit)
    return unit
  }

  /** The units of one request, valid until the next call. */
  request(
    definitions: ReadonlyArray<readonly [string, string]>,
    system: ReadonlyArray<string>,
    messages: ReadonlyArray<Msg>
  ): Int32Array {
    let n = 0
    this.chars = 0
    for (const [name, definition] of definitions) n = this.push(n, this.units.toolDefinition(name, definition), true)
    for (const text of system) n = this.push(n, this.units.system(text), !this.baseSystem.has(text))
    for (let m = 0; m < messages.length; m++) {
      const message = messages[m]!
      const id = message.info?.id
      // Usually the message at the same position; after a compaction OpenCode sends stored messages out of order.
      const at = this.messageIds[m] === id ? m : this.positions.get(id)
      const synthetic = at === undefined
      n = this.push(n, this.units.message(String(message.info?.role)), synthetic)
      const base = at === undefined ? 0 : this.partBase[at]!
      const end = at === undefined ? 0 : this.partBase[at + 1] ?? this.stored.ids.length
      for (let p = 0; p < message.parts.length; p++) {
        const part = message.parts[p]!
        const unit = base + p < end ? this.unitOf(part, base + p) : this.units.part(part)
        if (unit >= 0) n = this.push(n, unit, synthetic)
      }
    }
    return this.buffer.subarray(0, n)
  }
}
