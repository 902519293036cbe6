/**
 * What each request sends, in tokens, and what it costs with a prompt cache: the one cost model of the offline
 * analyser (`dcp-analyse`, `npm start`) and of the benchmark (`npm run bench`).
 *
 * A request is a sequence of units: the tool definitions the plugin adds, each system prompt string, then for
 * every message a boundary unit (role framing) followed by one unit per part the provider is sent (text,
 * reasoning, tool call with its input and its output or error). Step-start/step-finish parts send nothing.
 * Units are interned by content (equal content, equal unit ID), so comparing two requests is comparing integer
 * arrays, and tokens are counted once per distinct string at the end.
 *
 * Cache model: a request reads from the cache its longest common prefix of units with the previous request,
 * unless more than the TTL passed since that request (then nothing is read). Price: 0.1 per cached token read,
 * 1.25 per other token (written to the cache); without a cache every token costs 1.
 */

export const ttlMs = 300_000
export const readPrice = 0.1
export const writePrice = 1.25
/** Framing tokens: a message's role header, a tool call's id/name wrapper. Small constants; they only shift totals. */
export const messageOverhead = 4
export const toolOverhead = 8

export interface Unit {
  /** IDs of the strings the unit sends (see `Units.strings`). */
  readonly strings: ReadonlyArray<number>
  readonly overhead: number
  /** Characters of those strings: a cheap size known before anything is tokenized. */
  readonly chars: number
}

export class Units {
  readonly strings: Array<string> = []
  readonly units: Array<Unit> = []
  /** `units[i].chars`, as a flat array: read for every unit of every request. */
  readonly chars: Array<number> = []
  private readonly stringIds = new Map<string, number>()
  private readonly unitIds = new Map<string, number>()
  private readonly roles = new Map<string, number>()

  string(text: string): number {
    let id = this.stringIds.get(text)
    if (id === undefined) {
      id = this.strings.length
      this.strings.push(text)
      this.stringIds.set(text, id)
    }
    return id
  }

  private unit(key: string, strings: ReadonlyArray<number>, overhead: number): number {
    let id = this.unitIds.get(key)
    if (id === undefined) {
      id = this.units.length
      let chars = 0
      for (const string of strings) chars += this.strings[string]!.length
      this.units.push({ strings, overhead, chars })
      this.chars.push(chars)
      this.unitIds.set(key, id)
    }
    return id
  }

  message(role: string): number {
    let id = this.roles.get(role)
    if (id === undefined) {
      id = this.unit(`m\u0001${role}`, [], messageOverhead)
      this.roles.set(role, id)
    }
    return id
  }

  system(text: string): number {
    const id = this.string(text)
    return this.unit(`s\u0001${id}`, [id], 0)
  }

  toolDefinition(name: string, definition: string): number {
    const ids = [this.string(name), this.string(definition)]
    return this.unit(`d\u0001${ids.join(",")}`, ids, toolOverhead)
  }

  /** The unit a part sends, or -1 for parts that send nothing. */
  part(part: Record<string, any>): number {
    const type = part.type
    if ((type === "text" || type === "reasoning") && typeof part.text === "string") {
      if (part.ignored === true) return -1
      const id = this.string(part.text)
      return this.unit(`${type}\u0001${id}`, [id], 0)
    }
    if (type !== "tool" || typeof part.state !== "object" || part.state === null) return -1
    const state = part.state
    const ids: Array<number> = [this.string(String(part.tool))]
    const input = typeof state.input === "object" && state.input !== null ? state.input : {}
    for (const key of Object.keys(input)) {
      const value = input[key]
      if (value === undefined) continue
      ids.push(this.string(key), this.string(typeof value === "string" ? value : JSON.stringify(value)))
    }
    const result = state.status === "completed"
      ? state.output
      : state.status === "error"
      ? state.error
      : "[Tool execution was interrupted]"
    ids.push(this.string(typeof result === "string" ? result : JSON.stringify(result ?? "")))
    return this.unit(`t\u0001${state.status}\u0001${ids.join(",")}`, ids, toolOverhead)
  }
}

/** Length of the longest common prefix. */
export const commonPrefix = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  const n = Math.min(a.length, b.length)
  let i = 0
  while (i < n && a[i] === b[i]) i++
  return i
}

export interface Priced {
  readonly requests: number
  /** Sum over requests of the tokens sent. */
  readonly tokens: number
  /** Of those, read from the cache. */
  readonly cachedTokens: number
  /** readPrice x cached + writePrice x the rest. */
  readonly cost: number
  /** Every token at 1. */
  readonly costNoCache: number
}

/**
 * Accumulates requests as unit sequences; tokens are only needed at the end, per unit, so a session of thousands of
 * requests keeps two counters per distinct unit instead of every request.
 */
export class CacheMeter {
  private previous = new Int32Array(1024)
  private previousLength = -1
  private previousTime = 0
  private cached = new Int32Array(1024)
  private uncached = new Int32Array(1024)
  private readonly ttl: number
  requests = 0

  constructor(ttl: number = ttlMs) {
    this.ttl = ttl
  }

  /** The units of the latest request. */
  get last(): ReadonlyArray<number> {
    return Array.from(this.previous.subarray(0, Math.max(0, this.previousLength)))
  }

  /** Records one request sent at `time` (ms); returns how many of its leading units hit the cache. */
  record(units: ArrayLike<number>, time: number): number {
    const warm = this.previousLength >= 0 && time - this.previousTime <= this.ttl
    const hit = warm ? commonPrefix(this.previous.subarray(0, this.previousLength), units) : 0
    let largest = 0
    for (let i = 0; i < units.length; i++) largest = Math.max(largest, units[i]!)
    if (largest >= this.cached.length) {
      const size = Math.max(largest + 1, this.cached.length * 2)
      this.cached = grow(this.cached, size)
      this.uncached = grow(this.uncached, size)
    }
    for (let i = 0; i < hit; i++) this.cached[units[i]!]!++
    for (let i = hit; i < units.length; i++) this.uncached[units[i]!]!++
    if (units.length > this.previous.length) this.previous = new Int32Array(Math.max(units.length, this.previous.length * 2))
    for (let i = 0; i < units.length; i++) this.previous[i] = units[i]!
    this.previousLength = units.length
    this.previousTime = time
    this.requests++
    return hit
  }

  priced(tokensOf: (unit: number) => number): Priced {
    let tokens = 0
    let cachedTokens = 0
    for (let unit = 0; unit < this.cached.length; unit++) {
      const hits = this.cached[unit]!
      const misses = this.uncached[unit]!
      if (hits === 0 && misses === 0) continue
      const n = tokensOf(unit)
      tokens += n * (hits + misses)
      cachedTokens += n * hits
    }
    return {
      requests: this.requests,
      tokens,
      cachedTokens,
      cost: readPrice * cachedTokens + writePrice * (tokens - cachedTokens),
      costNoCache: tokens
    }
  }
}

const grow = (array: Int32Array, size: number): Int32Array<ArrayBuffer> => {
  const out = new Int32Array(size)
  out.set(array)
  return out
}

/** Token count of each unit, counting every distinct string once with `count`. */
export const unitTokens = (units: Units, count: (text: string) => number): ((unit: number) => number) => {
  const stringTokens = new Map<number, number>()
  const memo = new Map<number, number>()
  return (unit) => {
    const known = memo.get(unit)
    if (known !== undefined) return known
    const { overhead, strings } = units.units[unit]!
    let n = overhead
    for (const id of strings) {
      let tokens = stringTokens.get(id)
      if (tokens === undefined) {
        tokens = count(units.strings[id]!)
        stringTokens.set(id, tokens)
      }
      n += tokens
    }
    memo.set(unit, n)
    return n
  }
}
