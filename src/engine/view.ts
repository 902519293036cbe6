import type { PluginConfig } from "../config/schema.ts"
import type { PruneRecord } from "../state/schema.ts"
import { applyRendered, applyTag, type Rendered, render, tagFor } from "./apply.ts"
import { addToRules, candidatesFrom, emptyRules, type Rules } from "./automatic.ts"
import type { ToolCall } from "./calls.ts"
import { contextTokens } from "./context.ts"
import { taggable } from "./listing.ts"
import { type Handle, targetOf } from "./placeholders.ts"
import type { Protection } from "./protection.ts"
import type { Reason } from "./reasons.ts"
import type { Candidate } from "./strategies/candidate.ts"
import type { Copy } from "./strategies/repeats.ts"

/**
 * What the request path derives from a session's view of tool calls, kept between requests and extended with the
 * calls each request adds, so that a request costs in proportion to what changed rather than to the whole history:
 * the automatic rules' state, the calls' token total and the pruned part of it, the prunes to apply, and the calls
 * that carry their stable ID. It is rebuilt from the whole view whenever the view did more than add calls
 * (compaction, revert, a status change), or prunes, restores or the nudge baseline changed outside the request path
 * (the session's `revision` moved).
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
  /**
   * Positions of the calls that carry their stable ID at the head of their output (ascending), with the tokens a
   * discard would free: decided by rules that never change for a call, so a call sent with its tag keeps it.
   */
  readonly tagged: Array<number>
  readonly taggedTokens: Array<number>
  /** Completed calls newer than the nudge baseline. */
  resultsSince: number
  /** Repeats among the calls sent for the first time in the latest pass, for the request path to prune. */
  copies: Array<{ readonly call: ToolCall; readonly copy: Copy }>
}

export interface ViewInput {
  readonly calls: ReadonlyArray<ToolCall>
  readonly pass: number
  /** The ToolCache pass before `pass`, and whether `pass` only added calls to it. */
  readonly previousPass: number | undefined
  readonly appendOnly: boolean
  readonly pruned: ReadonlyMap<string, PruneRecord>
  readonly revision: number
  readonly nudgeAfter: number
  readonly config: PluginConfig
  readonly protection: Protection
  readonly handle: Handle
  readonly idOf: (call: ToolCall) => number
  /** A call's output in the request being built. */
  readonly outputOf: (call: ToolCall) => string | undefined
}

/** Whether the model has tools to prune with, and so whether outputs carry their IDs. */
const offersPruning = (config: PluginConfig): boolean => config.tools.discard.enabled || config.tools.extract.enabled

/** The view for this request: `previous` extended with the new calls when that is sound, else built afresh. */
export const trackView = (previous: View | undefined, input: ViewInput): View => {
  const reusable = previous !== undefined && input.appendOnly && previous.pass === input.previousPass &&
    previous.revision === input.revision && previous.config === input.config && previous.handle === input.handle &&
    previous.count <= input.calls.length
  const view = reusable ? previous : emptyView(input)
  view.copies = []
  const copied = new Set<number>()
  const sent = (position: number) => !copied.has(position) && !input.pruned.has(input.calls[position]!.callID)
  for (let position = view.count; position < input.calls.length; position++) add(view, input, position, copied, sent)
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
  tagged: [],
  taggedTokens: [],
  resultsSince: 0,
  copies: []
})

const add = (
  view: View,
  input: ViewInput,
  position: number,
  copied: Set<number>,
  sent: (position: number) => boolean
) => {
  const call = input.calls[position]!
  // A call's output is sent for the first time in the pass that first saw it finished, unless that pass is the first
  // one this process made for the session: then it may well have been sent before (OpenCode restarted).
  const firstSend = input.previousPass !== undefined && call.finalPass === input.pass
  const copy = addToRules(view.rules, input.calls, position, {
    firstSend,
    repeated: input.pruned.get(call.callID)?.reason === "repeat",
    sent,
    outputOf: input.outputOf
  })
  if (copy !== undefined) {
    copied.add(position)
    view.copies.push({ call, copy })
  }
  view.tokens += call.totalTokens
  const record = input.pruned.get(call.callID)
  if (record !== undefined) applied(view, call, record, input.idOf(call))
  if (call.status === "completed" && input.idOf(call) > input.nudgeAfter) view.resultsSince++
  if (!offersPruning(input.config)) return
  const tokens = taggable(call, input.protection, input.config.tools.settings.protectedTools)
  if (tokens === undefined) return
  view.tagged.push(position)
  view.taggedTokens.push(tokens)
}

const applied = (view: View, call: ToolCall, record: PruneRecord, id: number) => {
  view.prunedTokens += record.tokens
  view.applied.push(call)
  view.appliedTexts.push(render(call, record, id, view.handle))
}

/** Records prunes the request path or a tool just made, keeping the view current. */
export const notePrunes = (
  view: View,
  calls: ReadonlyArray<ToolCall>,
  pruned: ReadonlyMap<string, PruneRecord>,
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

/**
 * Writes what the view sends into `messages`: every applied prune's placeholder, and every tagged call's ID at the
 * head of its output, unless a prune replaced that output (a prune of inputs, such as a failed call's, leaves the
 * output and its tag as they were sent).
 */
export const applyView = (
  view: View,
  messages: ReadonlyArray<unknown>,
  calls: ReadonlyArray<ToolCall>,
  pruned: ReadonlyMap<string, { readonly reason: string }>,
  idOf: (call: ToolCall) => number
): void => {
  for (let i = 0; i < view.applied.length; i++) {
    const texts = view.appliedTexts[i]
    if (texts !== undefined) applyRendered(messages, view.applied[i]!, texts)
  }
  for (const position of view.tagged) {
    const call = calls[position]!
    const record = pruned.get(call.callID)
    if (record === undefined || targetOf(call, record.reason as Reason)?.kind !== "output") {
      applyTag(messages, call, tagFor(idOf(call)))
    }
  }
}
