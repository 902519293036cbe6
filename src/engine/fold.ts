import { Predicate } from "effect"
import { firstAtOrAfter } from "../data/sorted.ts"
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
 * that no content rule removes. A folded turn sends its tool calls as digests instead, a line per call with its stable
 * ID, tool, identifying argument and outcome, one digest for each run of calls that nothing sent separates (the
 * model's words, a call kept in place), where the first call of the run stood:
 *
 *   Let me run the tests.
 *   [folded tool calls]
 *   #212 bash go test ./... -> exit 1
 *   #213 read internal/session/state.go
 *   The nil check is inverted.
 *   [folded tool calls]
 *   #214 edit internal/session/state.go
 *
 * So the turn reads in the order it happened. What stays as it was: the user's messages, the model's own text, and
 * every call whose content a rule keeps (the tools whose calls are never pruned, protected files, a loaded skill, the
 * working files' newest copies, a call the user restored), in place. `recall` returns any folded output from the
 * stored session; `/dcp restore` of a folded call unfolds its turn.
 *
 * A turn is the messages from one the user typed to the next (and, after a compaction, what precedes the first). One
 * is folded once it is older than the `keepTurns` most recent (never the turn in progress) and none of its calls is
 * still waiting for a rule to prune it, so that a fold follows masking rather than taking content the model still
 * sees. A fold is a prune for the scheduler: it waits, applies and is counted like one, and once sent it is sent
 * byte-identical (its digests are made from facts that never change for a call and from the turn's parts, which do not
 * change once it is old) until it is undone.
 *
 * Every request lays its folds out afresh in the request in hand and checks them against it (`foldsToWrite`): the
 * digests list exactly the calls that leave, each found as a tool part under its ID where the index found it, in the
 * fold's turn, which is not the turn in progress. A fold that cannot be written so (a host that sent a part moved, a
 * message missing) goes out unfolded in that request, and the session's folds are not changed by it.
 *
 * Valid for every provider: a folded call's part goes whole (its call and its result leave together), a digest is
 * text in an assistant message that held a folded call, a step left empty is not sent by OpenCode at all, and the
 * turn's reasoning goes with it (providers ask for signed reasoning only in the turn being answered, never folded).
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
  /** The request in hand, and the index's pass over it: a fold is laid out in it (`foldsToWrite`). */
  readonly messages: ReadonlyArray<unknown>
  readonly pass: number
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
  const { calls, userTurns, pass } = context
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
    const next = t + 1 < userTurns.length ? userTurns[t + 1]!.messageIndex : context.messages.length
    const layout = layoutOf(
      context.messages,
      { key: turn.key, calls: folded, tokens: 0 },
      turn.messageIndex,
      next,
      { pass, previousPass: undefined, appendOnly: false }
    )
    if (layout === undefined) continue
    let tokens = textTokens(turn.reasoningChars) - digestTokens(layout, context.estimate)
    for (const call of folded) tokens += sentTokens(call, context.prunedTokens(call))
    if (tokens < 1) continue
    const plan: FoldPlan = { key: turn.key, calls: folded, tokens, position: folded[0]!.position }
    remember(plan, { ...layout, fold: plan })
    plans.push(plan)
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

/** What a digest's text part's ID adds to the ID of the tool part it stands in place of. */
const digestId = "-folded"

/**
 * Whether a part is a digest the plugin wrote in place of a folded call: by its ID, or (a part without one) by its
 * header. Only a fold's first digest has the header (see `digestText`).
 */
export const isDigest = (part: unknown): boolean =>
  Predicate.isObject(part) && part.type === "text" && typeof part.text === "string" &&
  (typeof part.id === "string" ? part.id.endsWith(digestId) : part.text.trimStart().startsWith(digestHeader))

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
 * The one digest that stands for a fold's calls in the history OpenCode's compaction summariser is sent, oldest first,
 * without their IDs (the summarised calls leave the view, and their IDs with them).
 */
const summaryDigestOf = (calls: ReadonlyArray<ToolCall>): string =>
  [digestHeader, ...calls.map((call) => lineOf(call, false))].join("\n")

/**
 * A digest as sent: the header opens a fold's first digest only (its later ones, in the same turn, read as more of
 * it: a header for each would cost as much as a line, on every later request), and a line break sets it apart from
 * text sent before or after it in its step. OpenCode sends a step as one assistant message, and its OpenAI-style
 * conversion joins the texts of a message with nothing between them (`...in b.ts.[folded tool calls]`); Anthropic's
 * keeps them as blocks of their own, where the break costs a token.
 */
const digestText = (calls: ReadonlyArray<ToolCall>, separators: number, first: boolean): string => {
  const lines = calls.map((call) => lineOf(call, true))
  const body = first ? [digestHeader, ...lines].join("\n") : lines.join("\n")
  return `${(separators & textBefore) === 0 ? "" : "\n"}${body}${(separators & textAfter) === 0 ? "" : "\n"}`
}

const textBefore = 1
const textAfter = 2

/** A fold in what a request sends: the turn, the calls its digests stand for, and the tokens it takes out. */
export interface AppliedFold {
  readonly key: string
  /** In view order. */
  readonly calls: ReadonlyArray<ToolCall>
  readonly tokens: number
}

/** The folds of `folds` in a view, with those of their calls that are in it. */
export const foldsIn = (
  folds: ReadonlyMap<string, FoldRecord>,
  view: { readonly userTurns: ReadonlyArray<UserTurn>; readonly byCallId: ReadonlyMap<string, ToolCall> }
): Array<AppliedFold> => {
  if (folds.size === 0) return []
  const applied: Array<AppliedFold> = []
  for (const turn of view.userTurns) {
    const record = folds.get(turn.key)
    if (record === undefined) continue
    const calls = record.calls.flatMap((callID) => {
      const call = view.byCallId.get(callID)
      return call === undefined ? [] : [call]
    }).sort((a, b) => a.position - b.position)
    if (calls.length > 0) applied.push({ key: turn.key, calls, tokens: record.tokens })
  }
  return applied
}

/**
 * A fold as the request in hand can send it: its calls' places in the request (message and part, in view order), and
 * its digests, one for each run of its calls with nothing sent between them that stays (the model's words, a call
 * kept in place), standing where the first call of the run stood. So a folded turn reads in the order it happened.
 */
export interface FoldLayout {
  readonly fold: AppliedFold
  /** The tool index's pass it was laid out in, or found to stand in. */
  pass: number
  /** The turn's messages: `[first, end)` in the request. */
  readonly first: number
  readonly end: number
  readonly messageIndexes: Int32Array
  readonly partIndexes: Int32Array
  /** The index (into `fold.calls`) of each run's first call, ascending. */
  readonly runs: Int32Array
  /** Whether text is sent before (bit 1) or after (bit 2) each run's digest in its step. */
  readonly separators: Uint8Array
  readonly texts: ReadonlyArray<string>
}

/** Each fold's latest layout: the request after it most often sends the fold exactly so, texts and all. */
const layouts = new WeakMap<AppliedFold, FoldLayout>()

/**
 * The layouts of `folds` in the request in hand (`messages`, indexed by `index`), read-only: a fold is written only
 * where its turn is in the request, is not the turn in progress, and holds every call of the fold that the request
 * holds, each a tool part under its call ID where the index found it. A fold that cannot be written so has none: it
 * goes out unfolded in this request, and no other; the session's folds are not changed by it.
 */
export const foldsToWrite = (
  messages: ReadonlyArray<unknown>,
  index: IndexPass & { readonly userTurns: ReadonlyArray<UserTurn> },
  folds: ReadonlyArray<AppliedFold>
): Array<FoldLayout> => {
  if (folds.length === 0) return []
  const { userTurns } = index
  // The turn in progress is never folded: signed reasoning must stay in the turn being answered.
  const turns = new Map<string, number>()
  for (let t = 0; t < userTurns.length - 1; t++) turns.set(userTurns[t]!.key, t)
  const written: Array<FoldLayout> = []
  for (const fold of folds) {
    const t = turns.get(fold.key)
    if (t === undefined) continue
    const layout = layoutOf(messages, fold, userTurns[t]!.messageIndex, userTurns[t + 1]!.messageIndex, index)
    if (layout !== undefined) written.push(layout)
  }
  return written
}

/**
 * The layout of `fold` in the turn `[first, end)` of the request, or undefined when it cannot be written there. The
 * places are those of the fold's previous layout while they still hold (reading each folded call's object on every
 * request was most of the rewrite's time in long sessions), else the index's.
 */
const layoutOf = (
  messages: ReadonlyArray<unknown>,
  fold: AppliedFold,
  first: number,
  end: number,
  index: IndexPass
): FoldLayout | undefined => {
  const previous = layouts.get(fold)
  if (previous !== undefined) {
    // Laid out in this pass, or in the one before when this one only added calls to it: each call of the fold is
    // where the index found it then (`ToolIndex.appendOnly` compares every call's place), in the same turn.
    const standing = previous.pass === index.pass || (index.appendOnly && previous.pass === index.previousPass)
    if (standing && previous.first === first && previous.end === end) {
      previous.pass = index.pass
      return previous
    }
    const layout = scan(messages, fold, first, end, previous.messageIndexes, previous.partIndexes, previous, index.pass)
    if (layout !== undefined) return remember(fold, layout)
  }
  if (fold.calls.some((call) => call.seen !== index.pass)) return undefined
  const messageIndexes = Int32Array.from(fold.calls, (call) => call.messageIndex)
  const partIndexes = Int32Array.from(fold.calls, (call) => call.partIndex)
  const layout = scan(messages, fold, first, end, messageIndexes, partIndexes, previous, index.pass)
  return layout === undefined ? undefined : remember(fold, layout)
}

/** The tool index's pass over the request in hand, and how it relates to the pass before (`ToolIndex`). */
interface IndexPass {
  readonly pass: number
  readonly previousPass: number | undefined
  readonly appendOnly: boolean
}

const remember = (fold: AppliedFold, layout: FoldLayout): FoldLayout => {
  layouts.set(fold, layout)
  return layout
}

/**
 * Reads the turn `[first, end)` of the request: finds the fold's calls at the given places, in order, each a tool part
 * under its ID, and cuts them into runs at what stays between them. Undefined when a call is not where it should be.
 */
const scan = (
  messages: ReadonlyArray<unknown>,
  fold: AppliedFold,
  first: number,
  end: number,
  messageIndexes: Int32Array,
  partIndexes: Int32Array,
  previous: FoldLayout | undefined,
  pass: number
): FoldLayout | undefined => {
  const { calls } = fold
  const count = calls.length
  if (count === 0 || messageIndexes[0]! < first || messageIndexes[count - 1]! >= end || end > messages.length) {
    return undefined
  }
  const runs: Array<number> = []
  const separators: Array<number> = []
  let next = 0
  let runOpen = false
  // Runs whose digest is in the current step, waiting to learn whether text follows it there.
  let inStep: Array<number> = []
  let textInStep = false
  const text = () => {
    for (const run of inStep) separators[run]! |= textAfter
    inStep = []
    textInStep = true
  }
  for (let m = first; m < end; m++) {
    const message = messages[m]
    textInStep = false
    inStep = []
    if (!Predicate.isObject(message) || !Array.isArray(message.parts)) continue
    // OpenCode leaves out a message that ended in an error: a run neither enters nor leaves one, so that no digest
    // there stands for calls it sends, nor one elsewhere for calls it never sent.
    const unsent = failed(message)
    if (unsent) runOpen = false
    const parts = message.parts
    for (let p = 0; p < parts.length; p++) {
      const part = parts[p]
      if (next < count && messageIndexes[next] === m && partIndexes[next] === p) {
        if (!Predicate.isObject(part) || part.type !== "tool" || part.callID !== calls[next]!.callID) return undefined
        if (!runOpen) {
          if (textInStep) text()
          runs.push(next)
          separators.push(textInStep ? textBefore : 0)
          inStep.push(runs.length - 1)
          textInStep = true
          runOpen = true
        }
        next++
        continue
      }
      if (!Predicate.isObject(part)) continue
      switch (part.type) {
        case "step-start":
          textInStep = false
          inStep = []
          break
        case "text":
          if (typeof part.text === "string" && part.text !== "" && part.ignored !== true) {
            text()
            runOpen = false
          }
          break
        case "tool":
        case "file":
        case "compaction":
        case "subtask":
          runOpen = false
          break
      }
    }
    if (unsent) runOpen = false
  }
  if (next !== count) return undefined
  const same = previous !== undefined && previous.runs.length === runs.length &&
    runs.every((run, r) => previous.runs[r] === run && previous.separators[r] === separators[r])
  return {
    fold,
    pass,
    first,
    end,
    messageIndexes,
    partIndexes,
    runs: same ? previous.runs : Int32Array.from(runs),
    separators: same ? previous.separators : Uint8Array.from(separators),
    texts: same
      ? previous.texts
      : runs.map((run, r) => digestText(calls.slice(run, runs[r + 1] ?? count), separators[r]!, r === 0))
  }
}

/** The tokens of a fold's digests as `layout` sends them. */
const digestTokens = (layout: FoldLayout, estimate: Estimate): number =>
  layout.texts.reduce((sum, text) => sum + estimate(text), 0)

/**
 * Writes folds into a request's messages, in place, after everything else is written (placeholders, tags, the
 * breakpoint: they address parts by their index, which this changes). In each folded turn the folded calls' parts
 * leave, the first of each run becoming its digest, and the turn's reasoning parts leave with them. Only the messages
 * that hold a folded call or reasoning are touched (a long session's folded turns are most of its history, rewritten
 * on every request): `reasoningMessages` are the indexes of the messages that hold reasoning
 * (`ToolIndex.reasoningMessages`), ascending.
 */
export const writeFolds = (
  messages: ReadonlyArray<unknown>,
  layouts: ReadonlyArray<FoldLayout>,
  reasoningMessages: ReadonlyArray<number>
): void => {
  for (const layout of layouts) {
    const { messageIndexes } = layout
    const count = messageIndexes.length
    const end = layout.end
    let c = 0
    let run = 0
    let r = firstAtOrAfter(reasoningMessages, layout.first)
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
        run = dropParts(message.parts, layout, c, after, withReasoning === m, run)
      }
      c = after
    }
  }
}

/**
 * Takes the parts of the calls `from` to `to` (excluded; all in `parts`' message, in order) out of `parts`, each
 * run's digest in place of its first call's part, and the reasoning parts when there are any. `run` is the first run
 * not written yet; returns the next.
 */
const dropParts = (
  parts: Array<unknown>,
  layout: FoldLayout,
  from: number,
  to: number,
  reasoning: boolean,
  run: number
): number => {
  const { partIndexes, runs, texts } = layout
  let next = from
  let kept = 0
  for (let p = 0; p < parts.length; p++) {
    const part = parts[p]
    if (next < to && partIndexes[next] === p) {
      if (run < runs.length && runs[run] === next) parts[kept++] = digestPart(part, texts[run++]!)
      next++
      continue
    }
    if (reasoning && Predicate.isObject(part) && part.type === "reasoning") continue
    // Most parts stay where they are: written only once an earlier one left.
    if (kept !== p) parts[kept] = part
    kept++
  }
  if (kept !== parts.length) parts.length = kept
  return run
}

/** An assistant message that ended in an error other than the user's abort, which OpenCode does not send. */
const failed = (message: Record<string, unknown>): boolean => {
  const info = message.info
  if (!Predicate.isObject(info) || info.error === undefined || info.error === null) return false
  return !(Predicate.isObject(info.error) && info.error.name === "MessageAbortedError")
}

/** The digest as a text part in place of the tool part `part`, in its message. */
const digestPart = (part: unknown, text: string): Record<string, unknown> => {
  const from = Predicate.isObject(part) ? part : {}
  return {
    ...(typeof from.id === "string" ? { id: `${from.id}${digestId}` } : {}),
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
      parts.set(p, i === 0 ? digestPart(part, summaryDigestOf(present)) : undefined)
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
