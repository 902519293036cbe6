import type { ToolCall } from "./calls.ts"
import { formatTokens } from "./placeholders.ts"

/** A call the model may discard or extract, as listed for it. */
export interface Listed {
  readonly id: number
  readonly call: ToolCall
  readonly tokens: number
}

/** Outputs smaller than this are not listed: pruning them would save less than the placeholder costs. */
export const minListedTokens = 100

export interface ListInput {
  readonly listed: ReadonlyArray<Listed>
  /** Quantified reminder, present only on the requests where a nudge is due. */
  readonly nudge: boolean
  /** A discard or extract just ran: the model is asked to carry on with its task first. */
  readonly cooldown: boolean
}

/**
 * The block appended at the end of every request. Its bytes depend only on the listed calls (in stable ID order)
 * and on whether a nudge or cooldown is due, so an unchanged list is byte-identical across requests.
 */
export const prunableBlock = ({ cooldown, listed, nudge }: ListInput): string => {
  if (cooldown) {
    return "<prunable-tools>\nContext was just pruned. Continue with the task; the list returns after your next tool call.\n</prunable-tools>"
  }
  if (listed.length === 0) return "<prunable-tools>\nNothing to prune.\n</prunable-tools>"
  const lines = listed.map(({ call, id, tokens }) =>
    `${id}: ${call.tool}${call.keyParameter === "" ? "" : `, ${call.keyParameter}`} (${formatTokens(tokens)})`
  )
  const total = listed.reduce((sum, entry) => sum + entry.tokens, 0)
  const footer = nudge
    ? `\n${formatTokens(total)} tokens in ${listed.length} outputs above could be discarded or extracted if you no longer need them.`
    : ""
  return `<prunable-tools>\nOutputs you may discard or extract (id: tool, argument (tokens)):\n${lines.join("\n")}${footer}\n</prunable-tools>`
}
