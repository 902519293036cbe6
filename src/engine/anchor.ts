import { Predicate } from "effect"

/**
 * The plugin's own prompt-cache breakpoint, for providers billed by Anthropic's rules (SPEC 9.1). OpenCode marks the
 * system prompt and the last two messages. A prune applied while the cache is warm changes the history before its
 * end, so the provider finds no entry after the system prompt and writes the whole conversation again. One more
 * breakpoint, held on an assistant text part just before the oldest call a rule may still change (the frontier),
 * keeps an entry alive there (each request that carries it refreshes it): a batch applied after it is written again
 * from there on, not from the system prompt.
 *
 * Where it may go. The provider writes an entry at a breakpoint only beyond what the request read from the cache,
 * and a request reads an entry that ends at most `lookback` content blocks before one of its breakpoints (the rules
 * the cost model prices, src/analysis/cost.ts). A request that carries the anchor always leaves a live entry there:
 * it reads it, or, when something before it changed, writes it. The anchor moves only to where the request writes
 * anyway:
 * - when the cache is cold, or the request changes something before the anchor (or there is none): the provider reads
 *   no more than what precedes the change and writes the rest, so anywhere before the frontier;
 * - when it changes something after it (the usual batch): at most `lookback` blocks further, so the new anchor's
 *   lookback still reads the old one's entry; or, when that leaves it too far behind the frontier (`jump`), to the
 *   frontier, and the request writes everything after the system prompt;
 * - otherwise it stays where it is.
 *
 * OpenCode hands an assistant text part's `metadata` to the AI SDK as the part's provider options, for messages of
 * the request's own model only, and the SDK's Anthropic package writes `cache_control` on that block. That package
 * ignores breakpoints beyond the provider's limit of 4 (counted from the start), so the plugin puts its system
 * section into OpenCode's one system message (src/hooks/system.ts): OpenCode then marks 3 places and the anchor is
 * the 4th. Another plugin's system text makes OpenCode send two system messages and mark 4; the anchor would then
 * cost OpenCode's marker on the newest message, so there is none while that lasts. Other packages may send a 5th
 * marker on to a provider that rejects it, so the anchor is only for the Anthropic package. Both in `anchorsFor`.
 */

/** An anchor: the text part `partIndex` of the message `messageId`. */
export interface Anchor {
  readonly messageId: string
  readonly partIndex: number
}

/** A part's place in a request: its message's index, its index in the message. */
export type Place = readonly [message: number, part: number]

export interface Located {
  readonly place: Place
  readonly anchor: Anchor
}

/** The model of the request: OpenCode passes part metadata on for its own messages only. */
export interface AnchorModel {
  readonly providerID: string
  readonly modelID: string
  readonly npm: string | undefined
}

/** The AI SDK package that drops breakpoints beyond the provider's limit instead of sending them. */
const anthropicPackage = "@ai-sdk/anthropic"

/**
 * Whether the plugin keeps an anchor for a request of `model`: the model's package is known to be Anthropic's, or,
 * when the host does not say, it is OpenCode's own `anthropic` provider, which uses that package; and OpenCode sends
 * one system message (`systemMessages`), so that it marks three places and the anchor is the fourth. With two (another
 * plugin's system text), OpenCode marks four, and the package would drop OpenCode's marker on the newest message to
 * keep the anchor: that message would be sent uncached and written on the next request instead.
 */
export const anchorsFor = (model: AnchorModel | undefined, systemMessages = 1): boolean =>
  model !== undefined && systemMessages <= 1 &&
  (model.npm === undefined ? model.providerID === "anthropic" : model.npm === anthropicPackage)

export const isBefore = (a: Place, b: Place): boolean => a[0] < b[0] || (a[0] === b[0] && a[1] < b[1])

/** The breakpoint OpenCode itself writes, in the provider options of every namespace it marks for Anthropic. */
const cacheControl = { type: "ephemeral" } as const

/**
 * Content blocks a part sends, the way OpenCode converts it: a tool part is a call and a result; text and files one
 * each; reasoning only when signed.
 */
export const blocksOf = (part: unknown): number => {
  if (!Predicate.isObject(part)) return 0
  if (part.type === "tool") return 2
  if (part.type === "reasoning") {
    // Sent only when signed (Claude's thinking blocks).
    return Predicate.isObject(part.metadata) && Predicate.isObject(part.metadata.anthropic) &&
        part.metadata.anthropic.signature != null
      ? 1
      : 0
  }
  return part.type === "text" || part.type === "file" ? 1 : 0
}

const partsOf = (message: unknown): ReadonlyArray<unknown> =>
  Predicate.isObject(message) && Array.isArray(message.parts) ? message.parts : []

/** A text part OpenCode sends with its metadata as provider options: sent text in an assistant message of `model`. */
const anchorable = (message: unknown, part: unknown, model: AnchorModel): boolean => {
  if (!Predicate.isObject(message) || !Predicate.isObject(message.info) || !Predicate.isObject(part)) return false
  const info = message.info
  return info.role === "assistant" && info.providerID === model.providerID && info.modelID === model.modelID &&
    info.error === undefined && part.type === "text" && typeof part.text === "string" && part.text.trim() !== "" &&
    part.synthetic !== true && part.ignored !== true
}

const located = (messages: ReadonlyArray<unknown>, m: number, p: number): Located => ({
  place: [m, p],
  anchor: { messageId: String((messages[m] as { info: { id: unknown } }).info.id), partIndex: p }
})

/** Where `anchor` is in this request, while its part can still carry it. */
export const locateAnchor = (
  messages: ReadonlyArray<unknown>,
  anchor: Anchor,
  model: AnchorModel
): Place | undefined => {
  for (let m = messages.length - 1; m >= 0; m--) {
    const message = messages[m]
    if (!Predicate.isObject(message) || !Predicate.isObject(message.info) || message.info.id !== anchor.messageId) {
      continue
    }
    return anchorable(message, partsOf(message)[anchor.partIndex], model) ? [m, anchor.partIndex] : undefined
  }
  return undefined
}

/** The last anchorable part before `limit`, not before `from`. */
const lastBefore = (
  messages: ReadonlyArray<unknown>,
  limit: Place,
  from: Place,
  model: AnchorModel
): Located | undefined => {
  for (let m = Math.min(limit[0], messages.length - 1); m >= from[0]; m--) {
    const parts = partsOf(messages[m])
    const end = m === limit[0] ? Math.min(limit[1], parts.length) : parts.length
    for (let p = end - 1; p >= (m === from[0] ? from[1] : 0); p--) {
      if (anchorable(messages[m], parts[p], model)) return located(messages, m, p)
    }
  }
  return undefined
}

/** The last anchorable part after `from` and before `limit` that is at most `lookback` content blocks after it. */
const lastWithin = (
  messages: ReadonlyArray<unknown>,
  from: Place,
  limit: Place,
  lookback: number,
  model: AnchorModel
): Located | undefined => {
  let blocks = 0
  let found: Located | undefined
  for (let m = from[0]; m < messages.length; m++) {
    const parts = partsOf(messages[m])
    for (let p = m === from[0] ? from[1] + 1 : 0; p < parts.length; p++) {
      if (!isBefore([m, p], limit)) return found
      blocks += blocksOf(parts[p])
      if (blocks > lookback) return found
      if (anchorable(messages[m], parts[p], model)) found = located(messages, m, p)
    }
  }
  return found
}

export interface AnchorMove {
  /** The current anchor's place in this request, if any. */
  readonly current: Place | undefined
  /** The earliest place whose content this request changes from what an earlier request sent, if any. */
  readonly change: Place | undefined
  /** The cache expired: the request writes everything. */
  readonly cold: boolean
  /** The place of the oldest call a rule may still change (evaluated only when the anchor may move). */
  readonly frontier: () => Place
  /** Content blocks before a breakpoint within which the provider still finds an entry, less a margin. */
  readonly lookback: number
  /**
   * On a request that would read the anchor's entry: whether to give that up (the provider then writes everything
   * after the system prompt) to put the anchor on `to`, the last place before the frontier, rather than `from`, as
   * far as the lookback lets it move. Decides, and records what the choice costs (see the transform).
   */
  readonly jump: (from: Place, to: Place) => boolean
}

/** Whether the request writes everything after the system prompt anyway, as far as the anchor goes. */
export const rewritesAll = (move: Pick<AnchorMove, "current" | "change" | "cold">): boolean =>
  move.cold || (move.change !== undefined && (move.current === undefined || isBefore(move.change, move.current)))

/** Where the anchor goes in this request (see the rules above); undefined: nowhere it may go. */
export const nextAnchor = (
  messages: ReadonlyArray<unknown>,
  move: AnchorMove,
  model: AnchorModel
): Located | undefined => {
  const { current, change } = move
  const stay = current === undefined ? undefined : located(messages, current[0], current[1])
  if (rewritesAll(move)) return lastBefore(messages, move.frontier(), [0, 0], model) ?? stay
  if (change === undefined || current === undefined) return stay
  const frontier = move.frontier()
  const within = lastWithin(messages, current, frontier, move.lookback, model)
  const from = within?.place ?? current
  const best = lastBefore(messages, frontier, from, model)
  if (best !== undefined && isBefore(from, best.place) && move.jump(from, best.place)) return best
  return within ?? stay
}

/** Puts the breakpoint on the part at `place` of this request's copy of the history (never the stored one). */
export const markAnchor = (messages: ReadonlyArray<unknown>, place: Place): void => {
  const part = partsOf(messages[place[0]])[place[1]]
  if (!Predicate.isObject(part)) return
  const metadata = Predicate.isObject(part.metadata) ? part.metadata : {}
  const anthropic = Predicate.isObject(metadata.anthropic) ? metadata.anthropic : {}
  part.metadata = { ...metadata, anthropic: { ...anthropic, cacheControl } }
}
