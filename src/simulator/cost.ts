/**
 * What a session's requests cost under a provider's prompt-cache rules (src/pricing/profiles.ts): the one cost model
 * of the offline analyser (`dcp-analyse`, `npm start`), the benchmark (`npm run bench`) and the end-to-end tests,
 * which price the bodies the real OpenCode sends. A request is its wire form (wire.ts): blocks in prefix order and
 * the positions of OpenCode's cache breakpoints.
 *
 * - `anthropic`: an entry is written at each breakpoint whose prefix holds at least `minTokens`; a request reads the
 *   longest live entry whose prefix ends at one of its breakpoints or up to `lookbackBlocks` content blocks before
 *   one; an entry lives `ttlSeconds` from its last use (a read, or a breakpoint of a later request that ends on it).
 *   Tokens up to the read are read, from there to the last breakpoint written, the rest sent uncached.
 * - `openai`: a request reads its longest common prefix with the previous request, sent at most `ttlSeconds` before,
 *   from `minTokens` on in 128-token steps.
 * - `per-request`, `none`: nothing is cached; the cost of a per-request provider is the number of requests.
 *
 * A provider keeps its cache per model: a request names its model (`record`'s `model`), and one to another model than
 * the previous request's reads no Anthropic entry the other model wrote, nor (OpenAI) the previous request's prefix.
 *
 * Costs are in units of one uncached input token; output is priced where it is recorded (`output`). Each position
 * of a request gets a 53-bit hash of the prefix ending there (two 32-bit multiplicative hashes chained block by
 * block), so two requests share an entry only when every block up to it is the same; with a few thousand live
 * entries, a false match is vanishingly rare.
 */
import type { PricingProfile } from "../pricing/profiles.ts"
import type { Blocks, Wire } from "./wire.ts"

export interface Priced {
  readonly profile: PricingProfile["name"]
  readonly requests: number
  /** Input tokens sent, over all requests. */
  readonly tokens: number
  /** Of those, read from the cache. */
  readonly readTokens: number
  /** Of those, written to the cache (Anthropic). */
  readonly writeTokens: number
  /**
   * Output tokens priced: the summaries of the compactions the replay made itself, the one output that differs between
   * runs (the model's other replies are the recorded ones in every run, and are not priced).
   */
  readonly outputTokens: number
  /** In units of an uncached input token; for a per-request provider, the number of requests. */
  readonly cost: number
}

/** One request's share, for tests and diagnostics. */
export interface RequestCost {
  readonly tokens: number
  readonly readTokens: number
  readonly writeTokens: number
  readonly cost: number
}

const openAiStep = 128

/** Length of the longest common prefix. */
const commonPrefix = (
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  length = Math.min(a.length, b.length)
): number => {
  let i = 0
  while (i < length && a[i] === b[i]) i++
  return i
}

export class CostMeter {
  readonly profile: PricingProfile
  private readonly tokensOf: (block: number) => number
  private readonly boundary: (block: number) => boolean
  private previous = new Int32Array(0)
  private previousLength = 0
  private previousTime = -Infinity
  /** Per position of the previous request: the hashes of the prefix ending there, and the tokens up to and including it. */
  private hashA = new Int32Array(0)
  private hashB = new Int32Array(0)
  private cumulative = new Float64Array(0)
  private previousModel: string | undefined
  /** Anthropic, per model: prefix hash -> when the entry expires. */
  private readonly entriesByModel = new Map<string, Map<number, number>>()
  private entries = new Map<number, number>()
  private totals = { requests: 0, tokens: 0, readTokens: 0, writeTokens: 0, outputTokens: 0, cost: 0 }

  constructor(profile: PricingProfile, blocks: Blocks, tokensOf: (block: number) => number) {
    this.profile = profile
    this.tokensOf = tokensOf
    this.boundary = (block) => blocks.blocks[block]!.boundary
  }

  private prefixAt(position: number): number {
    return (this.hashA[position]! >>> 0) * 2_097_152 + (this.hashB[position]! & 0x1fffff)
  }

  /**
   * Records one request sent at `time` (ms) and returns what it cost. `model`: the model it goes to; a request that
   * does not say goes to the previous request's.
   */
  record(wire: Wire, time: number, model?: string): RequestCost {
    const switched = model !== undefined && this.previousModel !== undefined && model !== this.previousModel
    if (model !== undefined && model !== this.previousModel) {
      // Entries written while no request named its model are the first named model's.
      const own = this.previousModel === undefined ? this.entries : this.entriesByModel.get(model) ?? new Map()
      this.entriesByModel.set(model, own)
      this.entries = own
      this.previousModel = model
    }
    const { blocks } = wire
    const n = blocks.length
    const shared = commonPrefix(this.previous, blocks, Math.min(this.previousLength, n))
    if (this.cumulative.length < n) {
      const size = Math.max(n, this.cumulative.length * 2)
      const grow = <A extends Int32Array | Float64Array>(array: A, make: (size: number) => A): A => {
        const out = make(size)
        out.set(array.subarray(0, shared))
        return out
      }
      this.hashA = grow(this.hashA, (size) => new Int32Array(size))
      this.hashB = grow(this.hashB, (size) => new Int32Array(size))
      this.cumulative = grow(this.cumulative, (size) => new Float64Array(size))
    }
    for (let i = shared; i < n; i++) {
      const block = blocks[i]!
      const a = i === 0 ? 0x811c9dc5 : this.hashA[i - 1]!
      const b = i === 0 ? 0x2545f491 : this.hashB[i - 1]!
      this.hashA[i] = Math.imul(a ^ block, 0x01000193) ^ (a >>> 15)
      this.hashB[i] = Math.imul(b + block, 0x5bd1e995) ^ (b >>> 13)
      this.cumulative[i] = (i === 0 ? 0 : this.cumulative[i - 1]!) + this.tokensOf(block)
    }
    const tokens = n === 0 ? 0 : this.cumulative[n - 1]!
    const cost = this.profile.kind === "anthropic"
      ? this.anthropic(wire, time, tokens)
      : this.profile.kind === "openai"
      ? this.openAi(switched ? 0 : shared, time, tokens)
      : { tokens, readTokens: 0, writeTokens: 0, cost: this.profile.kind === "per-request" ? 1 : tokens }
    if (this.previous.length < n) this.previous = new Int32Array(Math.max(n, this.previous.length * 2))
    this.previous.set(blocks)
    this.previousLength = n
    this.previousTime = time
    const totals = this.totals
    totals.requests++
    totals.tokens += cost.tokens
    totals.readTokens += cost.readTokens
    totals.writeTokens += cost.writeTokens
    totals.cost += cost.cost
    return cost
  }

  private anthropic(wire: Wire, time: number, tokens: number): RequestCost {
    const { read, write, minTokens, lookbackBlocks, ttlSeconds } = this.profile
    const { blocks, breakpoints } = wire
    const alive = (position: number) => (this.entries.get(this.prefixAt(position)) ?? -Infinity) >= time
    let hit = -1
    for (const breakpoint of breakpoints) {
      let content = 0
      for (let j = breakpoint; j >= 0 && j > hit && content <= lookbackBlocks; j--) {
        if (alive(j)) {
          hit = j
          break
        }
        if (!this.boundary(blocks[j]!)) content++
      }
    }
    const expires = time + ttlSeconds * 1000
    const readTokens = hit < 0 ? 0 : this.cumulative[hit]!
    if (hit >= 0) this.entries.set(this.prefixAt(hit), expires)
    let written = readTokens
    for (const breakpoint of breakpoints) {
      const upTo = this.cumulative[breakpoint]!
      if (upTo < minTokens) continue
      // An entry at or before the read is reused (its life extended); one after it is written.
      if (breakpoint > hit || alive(breakpoint)) this.entries.set(this.prefixAt(breakpoint), expires)
      if (upTo > written) written = upTo
    }
    const writeTokens = written - readTokens
    if (this.totals.requests % 512 === 511) {
      for (const [id, until] of this.entries) if (until < time) this.entries.delete(id)
    }
    return { tokens, readTokens, writeTokens, cost: read * readTokens + write * writeTokens + (tokens - written) }
  }

  private openAi(shared: number, time: number, tokens: number): RequestCost {
    const { read, minTokens, ttlSeconds } = this.profile
    const warm = time - this.previousTime <= ttlSeconds * 1000
    const common = warm && shared > 0 ? this.cumulative[shared - 1]! : 0
    const readTokens = common < minTokens ? 0 : minTokens + Math.floor((common - minTokens) / openAiStep) * openAiStep
    return { tokens, readTokens, writeTokens: 0, cost: read * readTokens + (tokens - readTokens) }
  }

  /** Records `tokens` of output the model wrote in answer to the latest request. */
  output(tokens: number) {
    this.totals.outputTokens += tokens
    this.totals.cost += tokens * this.profile.output
  }

  /** Tokens of the latest request. */
  get lastTokens(): number {
    return this.previousLength === 0 ? 0 : this.cumulative[this.previousLength - 1]!
  }

  priced(): Priced {
    return { profile: this.profile.name, ...this.totals }
  }
}

/**
 * A floor, not a price: what requests of these sizes would cost under `profile` if no change to what was already
 * sent ever forced a rewrite. Each request reads as many tokens as the previous one sent (at most its own size) and
 * writes the rest; expiry is ignored. Priced on the requests of `cache.mode: "immediate"` (every prune applied as
 * soon as a rule finds it), it is below what any schedule of the same prunes can cost (unless that schedule makes the
 * session compact at other points), and so shows what the pruning rules themselves can reach.
 */
export const costWithoutRebuilds = (profile: PricingProfile, requestTokens: ReadonlyArray<number>): number => {
  let previous = 0
  let cost = 0
  for (const tokens of requestTokens) {
    const read = Math.min(tokens, previous)
    cost += profile.read * read + profile.write * (tokens - read)
    previous = tokens
  }
  return cost
}

/** Exact o200k token counts, for priced figures. */
export const o200kCount = async (): Promise<(text: string) => number> => {
  const { countTokens } = await import("gpt-tokenizer/encoding/o200k_base")
  const plain = { disallowedSpecial: new Set<string>() }
  return (text) => countTokens(text, plain)
}
