import type { PluginConfig } from "../config/schema.ts"
import { applyRendered, type Rendered, render } from "./apply.ts"
import { addToRules, candidatesFrom, emptyRules, type Rules } from "./automatic.ts"
import type { ToolCall } from "./calls.ts"
import { contextTokens } from "./context.ts"
import { nudgeDue } from "./listing.ts"
import { type Handle, targetOf, targetTokens } from "./placeholders.ts"
import type { Protection } from "./protection.ts"
import { type Listed, minListedTokens, prunableBlock } from "./prunable.ts"
import type { Candidate, Reason } from "./strategies/candidate.ts"

/**
 * What the request path derives from a session's view of tool calls, kept between requests and extended with the
 * calls each request adds, so that a request costs in proportion to what changed rather than to the whole history:
 * the automatic rules' state, the calls' token total and the pruned part of it, the prunes to apply, the calls the
 * model may prune, and the last `<prunable-tools>` block. It is rebuilt from the whole view whenever the view did
 * more than add calls (compaction, revert, a status change), or prunes, restores or the nudge baseline changed
 * outside the request path (the session's `revision` moved).
 */
export interface View {
  /** The ToolCache pass this view reflects. */
  pass: number
  /** The session revision it reflects. */
  revision: number
  readonly config: PluginConfig
  readonly handle: Handle
  /** Calls taken into account: positions `0 .. count - 1` of the view. */
  count: number
  readonly rules: Rules
  /** Tokens of every call's inputs and output. */
  tokens: number
  /** Tokens the applied prunes take out of them. */
  prunedTokens: number
  /** Pruned calls in the view, with their replacement texts. */
  readonly applied: Array<ToolCall>
  readonly appliedTexts: Array<Rendered | undefined>
  /** Positions of calls the model may prune unless pruned or turn-protected, ascending, with their tokens. */
  readonly listable: Array<number>
  readonly listableTokens: Array<number>
  /** Completed calls newer than the nudge baseline. */
  resultsSince: number
  /** The calls listed in the last block, and that block. */
  listed: ReadonlyArray<Listed>
  block: string | undefined
  blockNudge: boolean
}

export interface ViewInput {
  readonly calls: ReadonlyArray<ToolCall>
  readonly pass: number
  /** The ToolCache pass before `pass`, and whether `pass` only added calls to it. */
  readonly previousPass: number | undefined
  readonly appendOnly: boolean
  readonly pruned: ReadonlyMap<string, { readonly reason: string; readonly tokens: number }>
  readonly revision: number
  readonly nudgeAfter: number
  readonly config: PluginConfig
  readonly protection: Protection
  readonly handle: Handle
  readonly idOf: (call: ToolCall) => number
}

/** Whether the model gets the `<prunable-tools>` list at all. */
export const listsPrunable = (config: PluginConfig): boolean =>
  config.tools.discard.enabled || config.tools.extract.enabled

/** The view for this request: `previous` extended with the new calls when that is sound, else built afresh. */
export const trackView = (previous: View | undefined, input: ViewInput): View => {
  const reusable = previous !== undefined && input.appendOnly && previous.pass === input.previousPass &&
    previous.revision === input.revision && previous.config === input.config && previous.handle === input.handle &&
    previous.count <= input.calls.length
  const view = reusable ? previous : emptyView(input)
  for (let position = view.count; position < input.calls.length; position++) add(view, input, position)
  view.count = input.calls.length
  view.pass = input.pass
  return view
}

const emptyView = (input: ViewInput): View => ({
  pass: input.pass,
  revision: input.revision,
  config: input.config,
  handle: input.handle,
  count: 0,
  rules: emptyRules(input.config.strategies, input.protection),
  tokens: 0,
  prunedTokens: 0,
  applied: [],
  appliedTexts: [],
  listable: [],
  listableTokens: [],
  resultsSince: 0,
  listed: [],
  block: undefined,
  blockNudge: false
})

const add = (view: View, input: ViewInput, position: number) => {
  const call = input.calls[position]!
  addToRules(view.rules, input.calls, position)
  view.tokens += call.totalTokens
  const record = input.pruned.get(call.callID)
  if (record !== undefined) applied(view, call, record, input.idOf(call))
  if (call.status === "completed" && input.idOf(call) > input.nudgeAfter) view.resultsSince++
  if (!listsPrunable(input.config)) return
  const tokens = listableTokens(call, input.protection, input.config.tools.settings.protectedTools)
  if (tokens === undefined) return
  view.listable.push(position)
  view.listableTokens.push(tokens)
}

const applied = (view: View, call: ToolCall, record: { readonly reason: string; readonly tokens: number }, id: number) => {
  view.prunedTokens += record.tokens
  view.applied.push(call)
  view.appliedTexts.push(render(call, record.reason as Reason, id, view.handle))
}

/**
 * The tokens the model would free by pruning the call, when it may prune it as far as fixed rules go (protected
 * tools and files, unfinished calls, nothing to replace, too small to list): the same rules as `whyNotPrunable`
 * and `listPrunable`, less those that change from request to request (pruned, turn-protected).
 */
const listableTokens = (call: ToolCall, protection: Protection, protectedTools: ReadonlyArray<string>) => {
  if (protection.tool(call.tool, protectedTools) || protection.file(call)) return undefined
  if (call.status === "pending" || call.status === "running") return undefined
  const target = targetOf(call, "discard")
  if (target === undefined) return undefined
  const tokens = targetTokens(call, target)
  return tokens < minListedTokens ? undefined : tokens
}

/** Records prunes the request path just applied (through the ledger), keeping the view current. */
export const notePrunes = (
  view: View,
  calls: ReadonlyArray<ToolCall>,
  pruned: ReadonlyMap<string, { readonly reason: string; readonly tokens: number }>,
  revision: number,
  idOf: (call: ToolCall) => number
): void => {
  for (const call of calls) {
    const record = pruned.get(call.callID)
    if (record !== undefined) applied(view, call, record, idOf(call))
  }
  view.revision = revision
}

/** The automatic rules' candidates in this request. */
export const viewCandidates = (
  view: View,
  input: Omit<Parameters<typeof candidatesFrom>[1], "strategies">
): Array<Candidate> => candidatesFrom(view.rules, { ...input, strategies: view.config.strategies })

/** The size of this request, estimated from the counts its view holds, less applied prunes. */
export const viewContext = (view: View, textChars: number, systemTokens: number): number =>
  contextTokens(systemTokens, textChars, view.tokens - view.prunedTokens)

/** Puts every applied prune's placeholder into `messages`. */
export const applyView = (view: View, messages: ReadonlyArray<unknown>): void => {
  for (let i = 0; i < view.applied.length; i++) {
    const texts = view.appliedTexts[i]
    if (texts !== undefined) applyRendered(messages, view.applied[i]!, texts)
  }
}

/**
 * The `<prunable-tools>` block (not in cooldown): every call the model may prune, in stable-ID order, with the nudge
 * when due. The block's text is reused while the list and the nudge stay the same.
 */
export const prunableTail = (
  view: View,
  input: {
    readonly calls: ReadonlyArray<ToolCall>
    readonly pruned: ReadonlyMap<string, unknown>
    readonly protection: Protection
    readonly idOf: (call: ToolCall) => number
    readonly nudgeAfter: number
    readonly lastMessage: number
  }
): string => {
  const { calls, idOf } = input
  const previous = view.listed
  let same = true
  let sorted = true
  let count = 0
  let kept = 0
  let lastId = -Infinity
  for (let i = 0; i < view.listable.length; i++) {
    const position = view.listable[i]!
    const call = calls[position]!
    if (input.pruned.has(call.callID)) continue
    view.listable[kept] = position
    view.listableTokens[kept] = view.listableTokens[i]!
    kept++
    if (input.protection.recent(call)) continue
    const id = idOf(call)
    if (id < lastId) sorted = false
    lastId = id
    if (same && (count >= previous.length || previous[count]!.call !== call)) same = false
    count++
  }
  view.listable.length = kept
  view.listableTokens.length = kept
  if (count !== previous.length) same = false
  if (!same || !sorted) {
    const listed: Array<Listed> = []
    for (let i = 0; i < view.listable.length; i++) {
      const call = calls[view.listable[i]!]!
      if (input.protection.recent(call)) continue
      listed.push({ id: idOf(call), call, tokens: view.listableTokens[i]! })
    }
    if (!sorted) listed.sort((a, b) => a.id - b.id)
    view.listed = listed
  }
  // The nudge is decided from this request alone (plus the last prune): it is due on the request whose newest
  // results (those in the last message) take the count since the last prune past a multiple of the frequency. So a
  // request sent again unchanged gets the same bytes, and the nudge still comes at most once per interval.
  let arrived = 0
  for (let i = calls.length - 1; i >= 0 && calls[i]!.messageIndex === input.lastMessage; i--) {
    const call = calls[i]!
    if (call.status === "completed" && idOf(call) > input.nudgeAfter) arrived++
  }
  const settings = view.config.tools.settings
  const results = view.resultsSince
  const frequency = settings.nudgeFrequency
  const crossed = Math.floor(results / frequency) > Math.floor((results - arrived) / frequency)
  const nudge = crossed && nudgeDue({
    enabled: settings.nudgeEnabled,
    frequency,
    minTokens: settings.nudgeMinTokens,
    resultsSince: results,
    listed: view.listed
  })
  if (view.block === undefined || !same || !sorted || nudge !== view.blockNudge) {
    view.block = prunableBlock({ listed: view.listed, nudge, cooldown: false })
    view.blockNudge = nudge
  }
  return view.block
}
