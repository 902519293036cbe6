/**
 * Used-content retention (SPEC 9.12): of the lines a reply used that it could only have seen in an earlier tool
 * output, the share still present in what its request sent. Savings are half of a result; this is the other half.
 *
 * - Request k is the model call just before recorded assistant message k, "reply k": with `reReadMasked`, the replay's
 *   read of the masked files an edit of reply k needs (drive.ts), whose cost is priced already.
 * - Reply strings: the text parts of reply k and every leaf string of its tool calls' inputs (an edit's oldString and
 *   newString, a patch, a command, a path). Reasoning is not included.
 * - Candidate lines: each line of those strings, trimmed, at least `minLine` characters, once per reply.
 * - Used: a candidate that occurs verbatim in the text of an earlier tool output (its output, or the error of a failed
 *   call) and in no earlier user text, assistant text or reasoning, tool input, or the system prompt: its only source
 *   was a tool output. "Earlier" is what OpenCode itself would send for the request (its visible history, after its
 *   own compactions), so OpenCode alone retains every used line: what is measured is what pruning took, not what a
 *   compaction summarised.
 * - Retained: the used line occurs verbatim in what was sent for request k after the plugin's hooks: the system
 *   texts, every sent message's text and reasoning, tool-input leaf strings, tool output or error.
 *
 * A miss in a live session is a failed edit or a guess, then a re-read or a recall. Each request with misses is priced
 * as the `recall` it would take (`recallCost`): one more request at that point's context, its prefix read from the
 * cache the request just wrote, with the recalled outputs written after it and the recall call as output. That is a
 * floor: the recalled output also stays in the context of later requests.
 */
import type { Msg } from "../host/schema.ts"
import type { PricingProfile } from "../pricing/profiles.ts"

/** The shortest trimmed line that counts: shorter lines (a brace, `return nil`) are common to any code. */
const minLine = 24

type Part = Msg["parts"][number]

/** One candidate line of a reply, with the field of the reply that holds it. */
interface Candidate {
  readonly line: string
  /** `text`, or the tool and the input key path, e.g. `edit.oldString`. */
  readonly field: string
}

/** Where a source sat in the stored history: a tool output or error. */
interface Source {
  readonly message: number
  readonly callID: string
  readonly tool: string
  readonly text: string
}

/** What a request showed where one source of a missed line was. */
interface MissSource {
  readonly callID: string
  readonly tool: string
  /** What the request sent in the output's place (shortened), or why nothing was sent. */
  readonly shown: string
}

export interface Miss {
  /** 1-based request number, as reports count them. */
  readonly request: number
  readonly field: string
  readonly line: string
  readonly sources: ReadonlyArray<MissSource>
}

export interface Fidelity {
  /** Requests measured (a compaction's summary request is not one). */
  readonly requests: number
  /** Used lines, over all requests. */
  readonly used: number
  readonly retained: number
  readonly misses: ReadonlyArray<Miss>
  /** Requests with at least one miss: each costs a recall. */
  readonly requestsWithMisses: number
  /** The tokens those recalls would bring back (the distinct source outputs, whole). */
  readonly recalledTokens: number
  /** What those recalls would cost, by pricing profile name, in units of an uncached input token. */
  readonly recallCost: Readonly<Record<string, number>>
}

/** Every leaf string of a value, with its key path. */
const leafStrings = (value: unknown, path: string, into: Array<readonly [string, string]>): void => {
  if (typeof value === "string") into.push([path, value])
  else if (Array.isArray(value)) { for (const item of value) leafStrings(item, path, into) }
  else if (typeof value === "object" && value !== null) {
    for (const [key, inner] of Object.entries(value)) leafStrings(inner, path === "" ? key : `${path}.${key}`, into)
  }
}

const inputLeaves = (part: Part): Array<readonly [string, string]> => {
  const leaves: Array<readonly [string, string]> = []
  leafStrings(part.state?.input, "", leaves)
  return leaves
}

/** The candidate lines of a reply: its text and its tool calls' input strings, line by line, each line once. */
const candidatesOf = (reply: Msg): ReadonlyArray<Candidate> => {
  const seen = new Set<string>()
  const out: Array<Candidate> = []
  const add = (field: string, text: string) => {
    for (const raw of text.split("\n")) {
      const line = raw.trim()
      if (line.length < minLine || seen.has(line)) continue
      seen.add(line)
      out.push({ line, field })
    }
  }
  for (const part of reply.parts) {
    if (part.type === "text" && typeof part.text === "string") add("text", part.text)
    else if (part.type === "tool") {
      for (const [key, text] of inputLeaves(part)) add(key === "" ? String(part.tool) : `${part.tool}.${key}`, text)
    }
  }
  return out
}

/** A tool output as OpenCode sends it: the output of a completed call, the error of a failed one. */
const outputText = (part: Part): string | undefined => {
  const state = part.state
  if (typeof state !== "object" || state === null) return undefined
  const text = state.status === "completed" ? state.output : state.status === "error" ? state.error : undefined
  return typeof text === "string" ? text : undefined
}

/** The texts of a message that are not tool outputs: a used line must not be in any of them. */
const otherTexts = (message: Msg): Array<string> => {
  const texts: Array<string> = []
  for (const part of message.parts) {
    if ((part.type === "text" || part.type === "reasoning") && typeof part.text === "string") texts.push(part.text)
    else if (part.type === "tool") { for (const [, text] of inputLeaves(part)) texts.push(text) }
  }
  return texts
}

/** Texts joined into one string, each found again by its offset. */
class Joined<T> {
  readonly text: string
  private readonly starts: Array<number> = []
  readonly items: Array<T> = []

  constructor(entries: Iterable<readonly [T, string]>) {
    const chunks: Array<string> = []
    let at = 0
    for (const [item, text] of entries) {
      this.starts.push(at)
      this.items.push(item)
      chunks.push(text)
      at += text.length + 1
    }
    // A separator no line holds: a match never spans two texts.
    this.text = chunks.join("\n")
  }

  /** The indexes of the items holding `line` (each once, ascending). */
  holding(line: string): Array<number> {
    const found: Array<number> = []
    let from = 0
    for (;;) {
      const at = this.text.indexOf(line, from)
      if (at < 0) return found
      const item = this.itemAt(at)
      found.push(item)
      // On to the next item: one match per item is enough.
      from = item + 1 < this.starts.length ? this.starts[item + 1]! : this.text.length
    }
  }

  private itemAt(offset: number): number {
    let low = 0
    let high = this.starts.length - 1
    while (low < high) {
      const middle = (low + high + 1) >>> 1
      if (this.starts[middle]! <= offset) low = middle
      else high = middle - 1
    }
    return low
  }
}

/** Where each candidate line of a session occurs in its stored history: found once per session, not per request. */
interface Occurrences {
  /** The tool outputs holding it. */
  readonly sources: ReadonlyArray<Source>
  /** The messages whose other texts hold it, ascending. */
  readonly elsewhere: ReadonlyArray<number>
}

/** One request as `FidelityMeter.measure` reads it. */
export interface MeasuredRequest {
  /** What OpenCode would have sent without a plugin: its visible history. */
  readonly visible: ReadonlyArray<Msg>
  /** What was sent, after the plugin's hooks: the messages and the system texts. */
  readonly messages: ReadonlyArray<Msg>
  readonly system: ReadonlyArray<string>
  /** OpenCode's own system prompt. */
  readonly hostSystem: ReadonlyArray<string>
  /** The request's size in tokens. */
  readonly tokens: number
}

/** The figure for one run of a session, request by request (`Replay` in drive.ts feeds it). */
export class FidelityMeter {
  private readonly stored: ReadonlyArray<Msg>
  private readonly count: (text: string) => number
  private readonly profiles: ReadonlyArray<PricingProfile>
  private readonly position = new Map<Msg, number>()
  private occurrences: Map<string, Occurrences> | undefined
  private requests = 0
  private used = 0
  private retained = 0
  private readonly misses: Array<Miss> = []
  private requestsWithMisses = 0
  private recalledTokens = 0
  private readonly recallCost: Record<string, number> = {}

  constructor(stored: ReadonlyArray<Msg>, count: (text: string) => number, profiles: ReadonlyArray<PricingProfile>) {
    this.stored = stored
    this.count = count
    this.profiles = profiles
    for (const [i, message] of stored.entries()) this.position.set(message, i)
    for (const profile of profiles) this.recallCost[profile.name] = 0
  }

  /** Built at the first request: one pass over the stored history for every candidate line of the session. */
  private occurrencesOf(): Map<string, Occurrences> {
    if (this.occurrences !== undefined) return this.occurrences
    const sources: Array<readonly [Source, string]> = []
    const others: Array<readonly [number, string]> = []
    this.stored.forEach((message, m) => {
      for (const part of message.parts) {
        if (part.type !== "tool") continue
        const text = outputText(part)
        if (text !== undefined) sources.push([{ message: m, callID: part.callID, tool: part.tool, text }, text])
      }
      for (const text of otherTexts(message)) others.push([m, text])
    })
    const outputs = new Joined(sources)
    const elsewhere = new Joined(others)
    const occurrences = new Map<string, Occurrences>()
    for (const message of this.stored) {
      if (message.info.role !== "assistant") continue
      for (const { line } of candidatesOf(message)) {
        if (occurrences.has(line)) continue
        const found = outputs.holding(line)
        occurrences.set(line, {
          sources: found.map((i) => outputs.items[i]!),
          elsewhere: found.length === 0 ? [] : [...new Set(elsewhere.holding(line).map((i) => elsewhere.items[i]!))]
        })
      }
    }
    this.occurrences = occurrences
    return occurrences
  }

  /** The request whose answer is `reply`, a stored assistant message. */
  measure(reply: Msg, request: MeasuredRequest): void {
    const k = this.position.get(reply)
    if (k === undefined) return
    this.requests++
    const { tokens } = request
    const from = firstStored(request.visible, this.position, k)
    const occurrences = this.occurrencesOf()
    const hostSystem = request.hostSystem.join("\n")
    const shown = new SentText(request.messages, request.system)
    const missed: Array<{ readonly candidate: Candidate; readonly sources: ReadonlyArray<Source> }> = []
    for (const candidate of candidatesOf(reply)) {
      const found = occurrences.get(candidate.line)
      if (found === undefined) continue
      const sources = found.sources.filter((source) => source.message >= from && source.message < k)
      if (sources.length === 0) continue
      if (found.elsewhere.some((m) => m >= from && m < k)) continue
      if (hostSystem.includes(candidate.line)) continue
      this.used++
      if (shown.holds(candidate.line, sources)) this.retained++
      else missed.push({ candidate, sources })
    }
    if (missed.length === 0) return
    this.requestsWithMisses++
    const recalled = new Map<string, string>()
    for (const { candidate, sources } of missed) {
      const newest = sources.at(-1)!
      recalled.set(newest.callID, newest.text)
      this.misses.push({
        request: this.requests,
        field: candidate.field,
        line: candidate.line,
        sources: sources.map((source) => ({
          callID: source.callID,
          tool: source.tool,
          shown: shown.describe(source.callID)
        }))
      })
    }
    const recalledTokens = [...recalled.values()].reduce((sum, text) => sum + this.count(text), 0)
    const call = this.count(JSON.stringify({ ids: [...recalled.keys()].map((_, i) => i + 1) }))
    this.recalledTokens += recalledTokens
    for (const profile of this.profiles) {
      this.recallCost[profile.name]! += profile.kind === "per-request"
        ? 1
        : profile.read * tokens + profile.write * recalledTokens + profile.output * call
    }
  }

  result(): Fidelity {
    return {
      requests: this.requests,
      used: this.used,
      retained: this.retained,
      misses: this.misses,
      requestsWithMisses: this.requestsWithMisses,
      recalledTokens: this.recalledTokens,
      recallCost: { ...this.recallCost }
    }
  }
}

/** The stored index of the oldest stored message `visible` holds (after a compaction, the kept tail's first). */
const firstStored = (visible: ReadonlyArray<Msg>, position: ReadonlyMap<Msg, number>, k: number): number => {
  let first = k
  for (const message of visible) {
    const at = position.get(message)
    if (at !== undefined && at < first) first = at
  }
  return first
}

const shorten = (text: string, length = 100): string => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length <= length ? line : `${line.slice(0, length - 1)}…`
}

/** What one request sent, as text: looked up by call first, searched whole only for a line not found there. */
class SentText {
  private readonly sent: ReadonlyArray<Msg>
  private readonly system: ReadonlyArray<string>
  private byCall: Map<string, Part> | undefined
  private whole: string | undefined

  constructor(sent: ReadonlyArray<Msg>, system: ReadonlyArray<string>) {
    this.sent = sent
    this.system = system
  }

  private parts(): Map<string, Part> {
    if (this.byCall !== undefined) return this.byCall
    this.byCall = new Map()
    for (const message of this.sent) {
      for (const part of message.parts) if (part.type === "tool") this.byCall.set(part.callID, part)
    }
    return this.byCall
  }

  private all(): string {
    if (this.whole !== undefined) return this.whole
    const texts: Array<string> = [...this.system]
    for (const message of this.sent) {
      for (const part of message.parts) {
        if ((part.type === "text" && part.ignored !== true) || part.type === "reasoning") {
          if (typeof part.text === "string") texts.push(part.text)
        } else if (part.type === "tool") {
          for (const [, text] of inputLeaves(part)) texts.push(text)
          const result = sentResult(part)
          if (result !== undefined) texts.push(result)
        }
      }
    }
    this.whole = texts.join("\n")
    return this.whole
  }

  holds(line: string, sources: ReadonlyArray<Source>): boolean {
    const parts = this.parts()
    for (const source of sources) {
      const part = parts.get(source.callID)
      if (part !== undefined && sentResult(part)?.includes(line) === true) return true
    }
    return this.all().includes(line)
  }

  describe(callID: string): string {
    const part = this.parts().get(callID)
    if (part === undefined) return "not sent (folded, or its message left)"
    const result = sentResult(part)
    return result === undefined ? "no output sent" : shorten(result)
  }
}

/** What OpenCode sends as a tool part's result: its output (or the note that its own pruning cleared it), its error. */
const sentResult = (part: Part): string | undefined => {
  const state = part.state
  if (typeof state !== "object" || state === null) return undefined
  if (state.status === "completed" && state.time?.compacted !== undefined) return "[Old tool result content cleared]"
  return outputText(part)
}
