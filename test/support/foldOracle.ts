/**
 * What a request may become in the transform, judged from the request alone: the copy OpenCode handed the plugin and
 * the same messages after it, never the plugin's state. Only content changes (placeholders, `[id N]` tags) and folds:
 * a folded call's tool part leaves, a digest text stands where the first call it lists stood, and a folded turn's
 * reasoning may leave with it. So, for every request:
 *
 * - the messages are the same ones, in the same order, with the same infos (one synthetic note may follow them);
 * - every part is kept, in its order, but tool parts that left, reasoning of a turn holding a digest, and the digests
 *   added; no other part is added, dropped or moved;
 * - the digests' lines, in the order they are sent, name exactly the tool calls that left, in the request's order: the
 *   same tool, and a number that never named another call (`NumberLedger`); each digest stands where its first call
 *   stood;
 * - a kept tool call keeps its ID, tool, status and input keys: its output, error and inputs are as they came, under
 *   its `[id N]` tag, or a placeholder ending with its number;
 * - no digest is in the turn in progress.
 *
 * Failures say which of these broke, so that a failing property names the defect it found.
 */
import { assert } from "@effect/vitest"
import { digestHeader } from "../../src/engine/fold.ts"
import type { Msg } from "./history.ts"
import { syntheticId } from "./history.ts"

type Part = Record<string, any>

/** The numbers the plugin showed for calls, across the requests of one session: a number names one call, ever. */
export class NumberLedger {
  private readonly named = new Map<number, string>()

  /** `id` shown for the call `identity` (its callID, tool and input): it must never have named another call. */
  check(id: number, identity: string, where: string): void {
    const earlier = this.named.get(id)
    if (earlier === undefined) this.named.set(id, identity)
    else assert.strictEqual(identity, earlier, `wrong call: #${id} ${where} named another call before`)
  }
}

/** A tool call's identity as the host sends it: its ID and its content (tool, input). */
const identityOf = (part: Part): string => `${part.callID}\u0000${part.tool}\u0000${canonical(part.state?.input ?? {})}`

const canonical = (value: unknown): string => {
  if (value === null || value === undefined) return "null"
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  if (typeof value === "object") {
    return `{${
      Object.keys(value).sort().flatMap((key) => {
        const inner = (value as Record<string, unknown>)[key]
        return inner === null || inner === undefined ? [] : [`${JSON.stringify(key)}:${canonical(inner)}`]
      }).join(",")
    }}`
  }
  return JSON.stringify(value)
}

/** A digest: a text part in place of a folded call, its ID that of the call's part, marked. */
const isDigest = (part: Part): boolean => part.type === "text" && String(part.id).endsWith("-folded")

/** A digest's lines: `#N tool argument` each, the header and the separators around it left out. */
const digestLines = (part: Part): Array<string> =>
  String(part.text).trim().split("\n").filter((line) => line !== digestHeader)

/** A message the user typed: what opens a turn. */
const typed = (message: Msg) =>
  message.info.role === "user" &&
  message.parts.some((part) => part.type === "text" && part.synthetic !== true && part.ignored !== true)

/** Each message's turn: how many messages the user typed precede it, itself included. */
const turnsOf = (messages: ReadonlyArray<Msg>): Array<number> => {
  let turn = 0
  return messages.map((message) => (typed(message) ? ++turn : turn))
}

/** The number a placeholder ends with (`...; recall 17]`, `...; id 17]`). */
const placeholderNumber = (value: unknown): number | undefined => {
  if (typeof value !== "string" || !value.startsWith("[")) return undefined
  const found = /(?:recall|id) (\d+)\]$/.exec(value)
  return found === null ? undefined : Number(found[1])
}

/**
 * What became of a text of a kept call (an output, an error, an input): as it came, under an `[id N]` tag, a
 * placeholder, or (a file change's result) the language server's errors replaced by one. Returns the number shown.
 */
const sentText = (
  sent: unknown,
  original: unknown,
  what: string
): { readonly number: number | undefined } => {
  if (JSON.stringify(sent) === JSON.stringify(original)) return { number: undefined }
  if (typeof sent === "string" && typeof original === "string") {
    const tag = /^\[id (\d+)\]\n/.exec(sent)
    if (tag !== null && sent.slice(tag[0].length) === original) return { number: Number(tag[1]) }
    const placeholder = placeholderNumber(sent)
    if (placeholder !== undefined) return { number: placeholder }
    const at = original.indexOf("\n\nLSP errors detected ")
    if (at >= 0 && sent.startsWith(original.slice(0, at + 2))) {
      const number = placeholderNumber(sent.slice(at + 2))
      if (number !== undefined) return { number }
    }
  }
  assert.fail(`changed content: ${what} sent as ${String(sent).slice(0, 120)}`)
}

/** Checks a kept tool part against the one the host sent; the numbers it shows go to `numbers`. */
const checkKeptCall = (before: Part, after: Part, numbers: NumberLedger) => {
  const where = `${before.tool} ${before.callID}`
  const { state: stateBefore, ...fields } = before
  const { state: stateAfter, ...fieldsAfter } = after
  assert.deepStrictEqual(fieldsAfter, fields, `changed tool part fields: ${where}`)
  assert.strictEqual(stateAfter.status, stateBefore.status, `changed status: ${where}`)
  const shown: Array<number | undefined> = [
    sentText(stateAfter.output, stateBefore.output, `${where} output`).number,
    sentText(stateAfter.error, stateBefore.error, `${where} error`).number
  ]
  assert.deepStrictEqual(
    Object.keys(stateAfter.input ?? {}).sort(),
    Object.keys(stateBefore.input ?? {}).sort(),
    `changed input keys: ${where}`
  )
  for (const [key, value] of Object.entries(stateBefore.input ?? {})) {
    shown.push(sentText(stateAfter.input[key], value, `${where} input ${key}`).number)
  }
  const { output: _o, input: _i, error: _e, attachments: _a, ...restBefore } = stateBefore
  const { output: _o2, input: _i2, error: _e2, attachments: _a2, ...restAfter } = stateAfter
  assert.deepStrictEqual(restAfter, restBefore, `changed state fields: ${where}`)
  for (const number of shown) if (number !== undefined) numbers.check(number, identityOf(before), where)
}

interface Removed {
  readonly part: Part
  readonly message: number
  /** How many kept parts precede it in its message. */
  readonly keptBefore: number
}

interface Digest {
  readonly lines: ReadonlyArray<string>
  readonly message: number
  readonly keptBefore: number
}

/**
 * Checks one request: `before` is the copy the host handed the transform, `after` what the transform made of it.
 * `numbers` follows the calls' numbers across the session's requests.
 */
export const checkRequest = (
  before: ReadonlyArray<Msg>,
  after: ReadonlyArray<Msg>,
  numbers: NumberLedger
): void => {
  const extra = after.length - before.length
  assert.isTrue(
    extra === 0 || (extra === 1 && after[after.length - 1]!.info.id === syntheticId),
    `messages added or dropped: ${before.length} sent as ${after.length}`
  )
  const turnOf = turnsOf(before)
  const lastTurn = turnOf[turnOf.length - 1] ?? 0
  const removed: Array<Removed> = []
  const digests: Array<Digest> = []
  const reasoningLeft = new Set<number>()
  const digestTurns = new Set<number>()
  before.forEach((message, m) => {
    const sent = after[m]!
    assert.deepStrictEqual(sent.info, message.info, `changed message info: ${message.info.id}`)
    const kept = sent.parts.filter((part) => !isDigest(part))
    let keptCount = 0
    for (const part of sent.parts) {
      if (isDigest(part)) {
        digests.push({ lines: digestLines(part), message: m, keptBefore: keptCount })
        digestTurns.add(turnOf[m]!)
      } else keptCount++
    }
    let k = 0
    for (const part of message.parts) {
      const next = kept[k]
      if (next !== undefined && next.id === part.id) {
        if (part.type === "tool") checkKeptCall(part, next, numbers)
        else assert.deepStrictEqual(next, part, `changed ${part.type} part ${part.id}`)
        k++
        continue
      }
      if (part.type === "tool") removed.push({ part, message: m, keptBefore: k })
      else if (part.type === "reasoning") reasoningLeft.add(turnOf[m]!)
      else assert.fail(`dropped a ${part.type} part: ${part.id} of ${message.info.id}`)
    }
    assert.strictEqual(k, kept.length, `parts added or moved in ${message.info.id}: ${kept.slice(k).map((p) => p.id)}`)
  })

  const lines = digests.flatMap((digest) => digest.lines)
  assert.strictEqual(
    lines.length,
    removed.length,
    `the digests do not list the calls that left: ${lines.length} lines, ${removed.length} calls\n${
      lines.join("\n")
    }\nleft: ${removed.map(({ part }) => `${part.tool} ${part.callID}`).join(", ")}`
  )
  lines.forEach((line, i) => {
    const { part } = removed[i]!
    const number = /^#(\d+) (\S+)/.exec(line)
    assert.isNotNull(number, `a digest line without its number: ${line}`)
    assert.strictEqual(number![2], part.tool, `wrong call: digest line "${line}" for ${part.tool} ${part.callID}`)
    numbers.check(Number(number![1]), identityOf(part), `digest line "${line}"`)
  })
  let first = 0
  for (const digest of digests) {
    const call = removed[first]!
    assert.isTrue(
      call.message === digest.message && call.keptBefore === digest.keptBefore,
      `a digest does not stand where its first call stood: ${digest.lines[0]}`
    )
    first += digest.lines.length
  }
  for (const turn of reasoningLeft) assert.isTrue(digestTurns.has(turn), `reasoning dropped from an unfolded turn`)
  assert.isFalse(digestTurns.has(lastTurn) && before.length > 0, "a digest in the turn in progress")
}

/**
 * A folded turn reads in order: between two calls one digest lists, the request sent nothing that stayed (the model's
 * words, a call kept in place). Checked on `after` against `before`, as `checkRequest` aligns them.
 */
export const checkFoldOrder = (before: ReadonlyArray<Msg>, after: ReadonlyArray<Msg>): void => {
  const sequence: Array<{ readonly kind: "left" | "stayed" | "digest"; readonly lines?: number }> = []
  before.forEach((message, m) => {
    const sent = after[m]!.parts
    const keptIds = new Set(sent.filter((part) => !isDigest(part)).map((part) => part.id))
    const digestsAt = new Map<number, Array<Part>>()
    let keptCount = 0
    for (const part of sent) {
      if (isDigest(part)) digestsAt.set(keptCount, [...(digestsAt.get(keptCount) ?? []), part])
      else keptCount++
    }
    let k = 0
    const flush = () => {
      for (const digest of digestsAt.get(k) ?? []) sequence.push({ kind: "digest", lines: digestLines(digest).length })
      digestsAt.delete(k)
    }
    for (const part of message.parts) {
      flush()
      if (keptIds.has(part.id)) {
        if (sendsContent(part)) sequence.push({ kind: "stayed" })
        k++
      } else if (part.type === "tool") sequence.push({ kind: "left" })
    }
    flush()
  })
  // A digest comes right before the first call it lists; its other calls follow with nothing that stayed between.
  sequence.forEach((item, i) => {
    if (item.kind !== "digest") return
    const listed = sequence.slice(i + 1, i + 1 + item.lines!).map((next) => next.kind)
    assert.deepStrictEqual(
      listed,
      listed.map(() => "left"),
      "a digest lists a call sent after words, or after a call that stayed in place"
    )
  })
}

/** A part that reaches the model as content between calls: words, a file, a call. */
const sendsContent = (part: Part): boolean =>
  (part.type === "text" && part.text !== "" && part.ignored !== true) || part.type === "file" || part.type === "tool"
