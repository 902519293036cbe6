import { Predicate } from "effect"
import type { FoldRecord } from "../state/schema.ts"
import type { Rules } from "./automatic.ts"
import { textTokens } from "./context.ts"
import { idOf, type ToolCall, type UserTurn } from "./calls.ts"
import type { Protection } from "./protection.ts"
import type { RecallHint } from "./placeholders.ts"
import { type Estimate, savingOf } from "./savings.ts"
import { workingCopies } from "./strategies/staleOutputs.ts"

/**
 * Folding old turns (SPEC 9.10). Once masking has pruned an old turn's outputs, what it still sends of them is their
 * framing: tool names, call IDs, arguments, placeholders, the wrappers of calls and results, some 60 tokens a call
 * that no content rule removes. A folded turn sends its tool calls as one digest instead, a line per call with its
 * stable ID, tool, identifying argument and outcome:
 *
 *   [folded tool calls]
 *   #212 bash go test ./... -> exit 1
 *   #213 read internal/session/state.go
 *
 * What stays as it was: the user's messages, the model's own text, and every call whose content a rule keeps (the
 * tools whose calls are never pruned, protected files, a loaded skill, the working files' newest copies, a call the
 * user restored), in place. `recall` returns any folded output from the stored session; `/dcp restore` of a folded
 * call unfolds its turn.
 *
 * A turn is the messages from one the user typed to the next (and, after a compaction, what precedes the first). One
 * is folded once it is older than the `keepTurns` most recent (never the turn in progress) and none of its calls is
 * still waiting for a rule to prune it, so that a fold follows masking rather than taking content the model still
 * sees. A fold is a prune for the scheduler: it waits, applies and is counted like one, and once sent it is sent
 * byte-identical (its digest is made from facts that never change for a call) until it is undone.
 *
 * Valid for every provider: a folded call's part goes whole (its call and its result leave together), the digest is
 * text in the assistant message that held the first of them, a step left empty is not sent by OpenCode at all, and
 * the turn's reasoning goes with it (providers ask for signed reasoning only in the turn being answered, never
 * folded).
 */

/**
 * Tools whose calls stay in place in a folded turn: the plan, the sub-agents' work, the model's own pruning calls and
 * distilled findings, the user's answers to a question, a loaded skill's instructions.
 */
const keptTools: ReadonlySet<string> = new Set([
  "task",
  "todowrite",
  "todoread",
  "discard",
  "extract",
  "batch",
  "plan_enter",
  "plan_exit",
  "question",
  "skill"
])

/** What becomes of a call when its turn is folded: into the digest, kept in place, or not yet (a rule will prune it). */
type Disposition = "fold" | "keep" | "wait"

export interface FoldContext {
  readonly calls: ReadonlyArray<ToolCall>
  readonly messageCount: number
  readonly userTurns: ReadonlyArray<UserTurn>
  readonly keepTurns: number
  readonly rules: Rules
  readonly protection: Protection
  /** Extra tools the model may not prune: kept in place too. */
  readonly protectedTools: ReadonlyArray<string>
  readonly keepRecent: number
  readonly keepFiles: number
  readonly restored: ReadonlySet<string>
  readonly folds: ReadonlyMap<string, FoldRecord>
  /** The tokens each pruned call's prune takes out, planned ones included. */
  readonly prunedTokens: (call: ToolCall) => number | undefined
  readonly recallHint: RecallHint
  readonly estimate: Estimate
}

/** A fold to make: the turn, the calls its digest stands for, and the tokens it takes out of every request. */
export interface FoldPlan extends AppliedFold {
  /** The position of its first call: where it changes what was sent. */
  readonly position: number
}

/** The turns old enough to fold now, with nothing left in them for a rule to prune, and what folding each saves. */
export const planFolds = (context: FoldContext): Array<FoldPlan> => {
  const { calls, userTurns } = context
  const plans: Array<FoldPlan> = []
  const old = userTurns.length - context.keepTurns
  if (old <= 0) return plans
  let working: ReadonlySet<number> | undefined
  const workingNow = () =>
    working ??= context.rules.maskable === undefined
      ? new Set()
      : workingCopies(calls, context.rules.maskable, context.keepFiles)
  for (let t = 0; t < old; t++) {
    const turn = userTurns[t]!
    if (context.folds.has(turn.key)) continue
    const end = t + 1 < userTurns.length ? userTurns[t + 1]!.firstCall : calls.length
    const folded: Array<ToolCall> = []
    let waits = false
    for (let position = turn.firstCall; position < end && !waits; position++) {
      const call = calls[position]!
      const disposition = dispositionOf(call, context, workingNow)
      if (disposition === "wait") waits = true
      else if (disposition === "fold") folded.push(call)
    }
    if (waits || folded.length === 0) continue
    const digest = digestFor(folded)
    let tokens = textTokens(turn.reasoningChars) - context.estimate(digest)
    for (const call of folded) tokens += sentTokens(call, context.prunedTokens(call))
    if (tokens < 1) continue
    const first = turn.messageIndex
    const next = t + 1 < userTurns.length ? userTurns[t + 1]!.messageIndex : context.messageCount
    plans.push({ key: turn.key, first, end: next, calls: folded, digest, tokens, position: folded[0]!.position })
  }
  return plans
}

/** What a call sends, its prune applied: its framing, and its content less what the prune takes out. */
const sentTokens = (call: ToolCall, pruned: number | undefined): number =>
  call.frameTokens + call.totalTokens - (pruned ?? 0)

/** Whether a call stays in place in a folded turn whatever happens: its tool or its file is kept. */
export const alwaysKept = (
  call: ToolCall,
  context: Pick<FoldContext, "protection" | "protectedTools">
): boolean => keptTools.has(call.tool) || context.protectedTools.includes(call.tool) || context.protection.file(call)

const dispositionOf = (
  call: ToolCall,
  context: FoldContext,
  working: () => ReadonlySet<number>
): Disposition => {
  if (context.restored.has(call.callID) || alwaysKept(call, context)) return "keep"
  if (context.prunedTokens(call) !== undefined) return "fold"
  // Turn protection: never pruned while young; its turn waits rather than fold it.
  if (context.protection.recent(call)) return "wait"
  const { rules } = context
  // Nothing a rule would take: what a prune would leave costs as much as what it takes out.
  const worthNothing = (reason: "purgeErrors" | "staleOutputs") =>
    savingOf(call, reason, idOf(call), context.recallHint, context.estimate) < 1
  if (call.status === "error") {
    if (worthNothing("purgeErrors")) return "fold"
    return rules.failed !== undefined && rules.prunable.purge(call) ? "wait" : "keep"
  }
  if (call.status !== "completed" || call.compacted || worthNothing("staleOutputs")) return "fold"
  if (rules.maskable === undefined || !rules.prunable.stale(call)) return "keep"
  return working().has(call.position) ? "keep" : "wait"
}

/** The argument shown on a digest line at most this long. */
const argumentLength = 60

/** The first line of a digest: says what the lines are, as the plugin's words rather than the model's. */
export const digestHeader = "[folded tool calls]"

/** How a call ended, as its digest line says it. */
const outcomeOf = (call: ToolCall): string => {
  if (call.status === "error") {
    const line = (call.error ?? "").trim().split("\n")[0]!.trim()
    return line === "" ? "error" : `error: ${clip(line, argumentLength)}`
  }
  if (call.status !== "completed") return "interrupted"
  return call.exitCode !== undefined && call.exitCode !== 0 ? `exit ${call.exitCode}` : "ok"
}

const clip = (text: string, length: number): string => text.length <= length ? text : `${text.slice(0, length - 1)}…`

/**
 * A call's line in a digest: `#212 bash go test ./... -> exit 1`, a call that went well without an outcome (a digest
 * is sent on every later request: a third fewer tokens than `[id 212] ... -> ok`). Made from facts that never change
 * for a call, so a fold is sent byte-identical.
 */
const lineOf = (call: ToolCall, withId: boolean): string => {
  const argument = call.keyParameter === "" ? "" : ` ${clip(call.keyParameter, argumentLength)}`
  const outcome = outcomeOf(call)
  return `${withId ? `#${idOf(call)} ` : ""}${call.tool}${argument}${outcome === "ok" ? "" : ` -> ${outcome}`}`
}

/**
 * The digest that stands for folded calls, oldest first; without their IDs for OpenCode's compaction summariser (the
 * summarised calls leave the view, and their IDs with them).
 */
const digestOf = (calls: ReadonlyArray<ToolCall>, withIds = true): string =>
  [digestHeader, ...calls.map((call) => lineOf(call, withIds))].join("\n")

/**
 * Digests made on earlier requests, by their first call (the index keeps a call's object while the view keeps the
 * call): a view derived afresh finds every fold's digest without making it again.
 */
const digests = new WeakMap<ToolCall, { readonly calls: ReadonlyArray<ToolCall>; readonly digest: string }>()

const digestFor = (calls: ReadonlyArray<ToolCall>): string => {
  const known = digests.get(calls[0]!)
  if (known !== undefined && known.calls.length === calls.length && known.calls.every((call, i) => call === calls[i])) {
    return known.digest
  }
  const digest = digestOf(calls)
  digests.set(calls[0]!, { calls, digest })
  return digest
}

/** A fold in what a request sends: the turn's messages, the calls it stands for and its digest. */
export interface AppliedFold {
  readonly key: string
  /** The turn's messages: `[first, end)` in the request. */
  readonly first: number
  readonly end: number
  readonly calls: ReadonlyArray<ToolCall>
  readonly digest: string
  readonly tokens: number
}

/** The folds of `folds` in a view, where their turns and calls still are. */
export const foldsIn = (
  folds: ReadonlyMap<string, FoldRecord>,
  view: {
    readonly userTurns: ReadonlyArray<UserTurn>
    readonly byCallId: ReadonlyMap<string, ToolCall>
    readonly messageCount: number
  }
): Array<AppliedFold> => {
  if (folds.size === 0) return []
  const applied: Array<AppliedFold> = []
  const { userTurns } = view
  for (let t = 0; t < userTurns.length; t++) {
    const turn = userTurns[t]!
    const record = folds.get(turn.key)
    if (record === undefined) continue
    const calls = record.calls.flatMap((callID) => {
      const call = view.byCallId.get(callID)
      return call === undefined ? [] : [call]
    })
    if (calls.length === 0) continue
    const end = t + 1 < userTurns.length ? userTurns[t + 1]!.messageIndex : view.messageCount
    applied.push({
      key: turn.key,
      first: turn.messageIndex,
      end,
      calls,
      digest: digestFor(calls),
      tokens: record.tokens
    })
  }
  return applied
}

/**
 * Writes folds into a request's messages, in place, after everything else is written (placeholders, tags, the
 * breakpoint: they address parts by their index, which this changes). In each folded turn the folded calls' parts
 * leave, the first that OpenCode sends (in a message that did not end in an error) becoming the digest, and the
 * turn's reasoning parts leave with them. Only the messages that hold a folded call or reasoning are touched (a long
 * session's folded turns are most of its history, rewritten on every request): `reasoningMessages` are the indexes
 * of the messages that hold reasoning (`ToolIndex.reasoningMessages`), ascending.
 */
export const writeFolds = (
  messages: ReadonlyArray<unknown>,
  folds: ReadonlyArray<AppliedFold>,
  reasoningMessages: ReadonlyArray<number>
): void => {
  for (const fold of folds) {
    const { messageIndexes, partIndexes } = placesOf(fold)
    const count = messageIndexes.length
    let digestAt = 0
    while (digestAt < count && endedInError(messages[messageIndexes[digestAt]!])) digestAt++
    const end = Math.min(fold.end, messages.length)
    let c = 0
    let r = firstAtOrAfter(reasoningMessages, fold.first)
    for (;;) {
      const withCall = c < count ? messageIndexes[c]! : end
      const withReasoning = r < reasoningMessages.length ? reasoningMessages[r]! : end
      const m = Math.min(withCall, withReasoning, end)
      if (m >= end) break
      // The calls are in view order: those of message `m` are next.
      let after = c
      while (after < count && messageIndexes[after] === m) after++
      if (withReasoning === m) r++
      const message = messages[m]
      if (Predicate.isObject(message) && Array.isArray(message.parts)) {
        dropParts(message.parts, partIndexes, c, after, withReasoning === m, digestAt, fold.digest)
      }
      c = after
    }
  }
}

/**
 * Where a fold's calls are in the request: their messages' and parts' indexes, in view order. Kept as long as the fold
 * (a view that only grows does not move old turns' calls, which the first and last call confirm; one derived afresh
 * makes its folds afresh): a long session has thousands of folded calls, and reading each call's place from its
 * object on every request cost more than the rest of the rewrite.
 */
const placesOf = (fold: AppliedFold): Places => {
  let places = foldPlaces.get(fold)
  const { calls } = fold
  const last = calls.length - 1
  if (
    places === undefined || places.messageIndexes[0] !== calls[0]!.messageIndex ||
    places.messageIndexes[last] !== calls[last]!.messageIndex
  ) {
    places = {
      messageIndexes: Int32Array.from(fold.calls, (call) => call.messageIndex),
      partIndexes: Int32Array.from(fold.calls, (call) => call.partIndex)
    }
    foldPlaces.set(fold, places)
  }
  return places
}

interface Places {
  readonly messageIndexes: Int32Array
  readonly partIndexes: Int32Array
}

const foldPlaces = new WeakMap<AppliedFold, Places>()

/**
 * Takes the parts of the calls `from` to `to` (excluded; all in `parts`' message, in order, at `partIndexes`) out of
 * `parts`, the digest in place of call `digestAt`'s, and the reasoning parts when there are any.
 */
const dropParts = (
  parts: Array<unknown>,
  partIndexes: Int32Array,
  from: number,
  to: number,
  reasoning: boolean,
  digestAt: number,
  digest: string
): void => {
  let next = from
  let kept = 0
  for (let p = 0; p < parts.length; p++) {
    const part = parts[p]
    while (next < to && partIndexes[next]! < p) next++
    if (next < to && partIndexes[next] === p) {
      if (next === digestAt) parts[kept++] = digestPart(part, digest)
      next++
      continue
    }
    if (reasoning && Predicate.isObject(part) && part.type === "reasoning") continue
    // Most parts stay where they are: written only once an earlier one left.
    if (kept !== p) parts[kept] = part
    kept++
  }
  if (kept !== parts.length) parts.length = kept
}

/** The first index of the ascending `values` whose value is `value` or more; their length if there is none. */
const firstAtOrAfter = (values: ReadonlyArray<number>, value: number): number => {
  let low = 0
  let high = values.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (values[middle]! < value) low = middle + 1
    else high = middle
  }
  return low
}

const endedInError = (message: unknown): boolean =>
  Predicate.isObject(message) && Predicate.isObject(message.info) && message.info.error !== undefined &&
  message.info.error !== null

/** The digest as a text part in place of the tool part `part`, in its message. */
const digestPart = (part: unknown, text: string): Record<string, unknown> => {
  const from = Predicate.isObject(part) ? part : {}
  return {
    ...(typeof from.id === "string" ? { id: `${from.id}-folded` } : {}),
    ...(from.sessionID === undefined ? {} : { sessionID: from.sessionID }),
    ...(from.messageID === undefined ? {} : { messageID: from.messageID }),
    type: "text",
    text
  }
}

/**
 * Folds in the history OpenCode's compaction summariser is sent (the history before the tail it keeps, as one text
 * that has to fit the model's window): what the model sees, so that a session the plugin kept small for longer than
 * OpenCode alone would have can still be summarised. Found by call ID, the summariser's messages being a part of the
 * history; each fold's digest takes the place of the first of its calls there, and the reasoning of the messages
 * that held them leaves with them.
 */
export const foldForSummary = (
  messages: ReadonlyArray<unknown>,
  folds: ReadonlyArray<ReadonlyArray<ToolCall>>
): void => {
  const places = new Map<string, readonly [number, number]>()
  messages.forEach((message, m) => {
    if (!Predicate.isObject(message) || !Array.isArray(message.parts)) return
    message.parts.forEach((part: unknown, p) => {
      if (Predicate.isObject(part) && part.type === "tool" && typeof part.callID === "string") {
        places.set(part.callID, [m, p])
      }
    })
  })
  const replaced = new Map<number, Map<number, unknown>>()
  for (const calls of folds) {
    const present = calls.filter((call) => places.has(call.callID))
    if (present.length === 0) continue
    present.forEach((call, i) => {
      const [m, p] = places.get(call.callID)!
      let parts = replaced.get(m)
      if (parts === undefined) replaced.set(m, parts = new Map())
      const part = (messages[m] as { parts: Array<unknown> }).parts[p]
      parts.set(p, i === 0 ? digestPart(part, digestOf(present, false)) : undefined)
    })
  }
  for (const [m, parts] of replaced) {
    const message = messages[m] as { parts: Array<unknown> }
    const kept = message.parts.flatMap((part, p) => {
      if (parts.has(p)) return parts.get(p) === undefined ? [] : [parts.get(p)]
      return Predicate.isObject(part) && part.type === "reasoning" ? [] : [part]
    })
    message.parts.splice(0, message.parts.length, ...kept)
  }
}
