import { bar } from "../commands/format.ts"
import { reasonName } from "../engine/notes.ts"
import { formatTokens } from "../engine/placeholders.ts"
import type { Reason } from "../engine/strategies/candidate.ts"
import type { SessionStatus, StatusCost } from "../state/status.ts"
import type { Loaded } from "./board.ts"

/**
 * What the sidebar panel and the `/dcp` dialog show, as lines of text: pure functions of a session's status, so
 * what a user sees is tested without a terminal. src/tui/view.ts only puts these lines on screen.
 */

export type Tone = "title" | "text" | "muted" | "warning"

export interface Line {
  readonly text: string
  readonly tone: Tone
}

/** What the UI knows about the session besides its status file. */
export interface Situation {
  /** A sub-agent session (OpenCode's `task` tool): the plugin leaves it as it is. */
  readonly subAgent: boolean
}

const line = (text: string, tone: Tone = "text"): Line => ({ text, tone })

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`

const percent = (part: number, whole: number): string => {
  if (whole <= 0) return "0%"
  const value = (part / whole) * 100
  return value > 0 && value < 1 ? "<1%" : `${Math.round(value)}%`
}

/** A reason as notes name it ("duplicate", "swept"); a reason this release does not know, as it was written. */
export const reasonLabel = (reason: string): string => reasonName(reason as Reason) ?? reason

/** The cost effect in words: `0.82x of the cost without pruning`. */
export const costRatio = (cost: StatusCost): string | undefined =>
  cost.withoutPlugin > 0 ? `${(cost.withPlugin / cost.withoutPlugin).toFixed(2)}x` : undefined

/** Lines for a status file that cannot be shown, or undefined when it can. */
const unavailable = (loaded: Loaded | undefined, situation: Situation): ReadonlyArray<Line> | undefined => {
  if (situation.subAgent) return [line("Sub-agent session: left as is.", "muted")]
  if (loaded === undefined) return [line("Reading…", "muted")]
  switch (loaded._tag) {
    case "missing":
      return [line("No data yet: it comes with the", "muted"), line("first request of this session.", "muted")]
    case "otherVersion":
      return [
        line("Status from another version.", "warning"),
        line("Update both parts of the plugin.", "muted")
      ]
    case "invalid":
      return [line("Status unreadable.", "warning")]
    case "ok":
      return undefined
  }
}

/** A context window as models are described ("200k"): an exact size, so without the estimate's "~". */
const windowSize = (limit: number): string => formatTokens(limit).replace(/^~/, "")

const contextSummary = (status: SessionStatus): string => {
  const context = status.context
  if (context === undefined) return "No request seen yet."
  const tokens = `${formatTokens(context.tokens)} tokens`
  return context.limit === undefined ? `${tokens} sent` : `${tokens}, ${percent(context.tokens, context.limit)} of ${windowSize(context.limit)}`
}

/** The sidebar panel: short lines (the sidebar is about 40 columns wide). */
export const panelLines = (loaded: Loaded | undefined, situation: Situation): ReadonlyArray<Line> => {
  const title = line("Context pruning", "title")
  const problem = unavailable(loaded, situation)
  if (problem !== undefined || loaded?._tag !== "ok") return [title, ...(problem ?? [])]
  const status = loaded.status
  const lines = [title, line(contextSummary(status))]
  lines.push(
    status.pruned.calls > 0
      ? line(`Pruned: ${plural(status.pruned.calls, "call")}, ${formatTokens(status.pruned.tokens)} tokens`)
      : line("Pruned: nothing yet", "muted")
  )
  const pending = status.pending
  if (pending !== undefined && pending.calls > 0) {
    lines.push(line(`Pending: ${plural(pending.calls, "call")}, ${formatTokens(pending.tokens)}`))
    lines.push(line(`  waiting: ${pending.reason}`, "muted"))
  } else if (pending !== undefined && status.pruned.calls === 0) {
    lines.push(line("No stale tool output so far.", "muted"))
  }
  const ratio = status.cost === undefined ? undefined : costRatio(status.cost)
  if (status.cost !== undefined && ratio !== undefined) {
    lines.push(line(`Cost: ${ratio} of no pruning`))
    lines.push(line(`  ${status.cost.profile} pricing`, "muted"))
  }
  return lines
}

/** One choice of the dialog: `args` is what it runs, as `/dcp <args>` would. */
export interface Action {
  readonly args: string
  readonly title: string
  readonly description: string
  readonly category: string
}

export interface DialogModel {
  readonly lines: ReadonlyArray<Line>
  readonly actions: ReadonlyArray<Action>
}

const labelWidth = 14

/** A row of the breakdown: label, bar, share, tokens. */
const breakdownRow = (label: string, tokens: number, whole: number): string =>
  `${label.padEnd(labelWidth)}${bar(whole === 0 ? 0 : tokens / whole)} ${percent(tokens, whole).padStart(4)}  ${
    formatTokens(tokens).padStart(6)
  }`

const byReason = (status: SessionStatus): string => {
  const entries = Object.entries(status.session.byReason).filter(([, tally]) => tally.calls > 0)
    .sort((a, b) => b[1].tokens - a[1].tokens)
  return entries.map(([reason, tally]) => `${reasonLabel(reason)} ${tally.calls}`).join(", ")
}

/**
 * The `/dcp` dialog: where the context goes (the last request as sent, plus what pruning left out of it, as bars
 * of one whole), what is pruned, what waits, and the sweep and restore choices the server part can carry out.
 */
export const dialogModel = (loaded: Loaded | undefined, situation: Situation): DialogModel => {
  const problem = unavailable(loaded, situation)
  if (problem !== undefined || loaded?._tag !== "ok") return { lines: problem ?? [], actions: [] }
  const status = loaded.status
  const lines: Array<Line> = []
  const context = status.context
  if (context === undefined) {
    lines.push(line("No request of this session seen yet: the breakdown comes with the first one.", "muted"))
  } else {
    const whole = context.tokens + context.pruned
    const window = context.limit === undefined
      ? ""
      : `, ${percent(context.tokens, context.limit)} of a ${windowSize(context.limit)} window`
    lines.push(line(`Last request: ${formatTokens(context.tokens)} tokens sent${window} (estimated).`))
    lines.push(line(""))
    lines.push(line(breakdownRow("System", context.system, whole)))
    lines.push(line(breakdownRow("Conversation", context.text, whole)))
    lines.push(line(breakdownRow(`Tools (${context.calls})`, context.tools, whole)))
    lines.push(line(breakdownRow("Pruned", context.pruned, whole), context.pruned > 0 ? "text" : "muted"))
    lines.push(line(`${" ".repeat(labelWidth)}Without pruning: ${formatTokens(whole)} tokens.`, "muted"))
  }
  lines.push(line(""))
  lines.push(line(
    `${"In effect".padEnd(labelWidth)}${plural(status.pruned.calls, "call")}, ${formatTokens(status.pruned.tokens)} tokens out of every request`
  ))
  const reasons = byReason(status)
  lines.push(line(
    `${"This session".padEnd(labelWidth)}${plural(status.session.calls, "call")}, ${
      formatTokens(status.session.tokens)
    } tokens pruned${reasons === "" ? "" : ` (${reasons})`}`
  ))
  if (status.pending !== undefined) {
    const pending = status.pending
    lines.push(line(
      pending.calls === 0
        ? `${"Pending".padEnd(labelWidth)}none`
        : `${"Pending".padEnd(labelWidth)}${plural(pending.calls, "call")}, ${formatTokens(pending.tokens)} tokens, waiting: ${pending.reason}`
    ))
  }
  const ratio = status.cost === undefined ? undefined : costRatio(status.cost)
  if (status.cost !== undefined && ratio !== undefined) {
    lines.push(line(`${"Cost".padEnd(labelWidth)}${ratio} of the cost without pruning (${status.cost.profile} pricing)`))
  }
  if (!status.commands) {
    lines.push(line(""))
    lines.push(line("Sweep and restore are off: `commands.enabled` is false in the dcp config.", "muted"))
    return { lines, actions: [] }
  }
  const actions: Array<Action> = [{
    args: "sweep",
    title: "Sweep",
    description: "prune every tool call since your last message",
    category: "Prune"
  }]
  if (status.pruned.calls > 0) {
    actions.push({
      args: "restore all",
      title: "Restore all",
      description: `${plural(status.pruned.calls, "call")}, ${formatTokens(status.pruned.tokens)} tokens back into context`,
      category: "Restore"
    })
  }
  for (const prune of status.recent) {
    actions.push({
      args: `restore ${prune.id}`,
      title: `${prune.id}  ${prune.tool}${prune.target === "" ? "" : ` ${prune.target}`}`,
      description: `${formatTokens(prune.tokens)} tokens, ${reasonLabel(prune.reason)}`,
      category: "Restore"
    })
  }
  return { lines, actions }
}
