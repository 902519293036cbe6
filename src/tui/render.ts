import { contextOfUsage } from "../commands/breakdown.ts"
import { reportedNext } from "../engine/figures.ts"
import { bar } from "../commands/format.ts"
import { idColumn, wrapText } from "../engine/notes.ts"
import { reasonName } from "../engine/reasons.ts"
import { formatTokens } from "../engine/placeholders.ts"
import type { SessionStatus, StatusContext, StatusCost, StatusPrune } from "../state/status.ts"
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
  /**
   * The context's size as the provider reported it for the latest request (`reportedContext`), when it did: tool
   * definitions included, where the status has only estimates.
   */
  readonly reported?: number | undefined
}

interface AssistantUsage {
  readonly role: string
  readonly tokens?: {
    readonly input: number
    readonly output: number
    readonly reasoning: number
    readonly cache: { readonly read: number; readonly write: number }
  }
}

/**
 * The context's size from the newest assistant message with usage: its request and its reply, the figure
 * OpenCode's own sidebar shows as "Context" and `/dcp context` takes too, so they agree on one screen.
 */
export const reportedContext = (messages: ReadonlyArray<AssistantUsage>): number | undefined => {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role !== "assistant") continue
    const total = contextOfUsage(messages[i]!.tokens)
    if (total > 0) return total
  }
  return undefined
}

/**
 * Columns of a line in the sidebar panel: OpenCode 1.18's sidebar is 42 columns wide, 5 of them padding. Lines are
 * wrapped here, where their indentation is known; the host would wrap them at the left edge.
 */
const panelWidth = 37

/**
 * Columns of a line in the `/dcp` dialog for a terminal `terminalColumns` wide: OpenCode 1.18's large dialog is 88
 * columns wide (2 less than the terminal at most), and its text and its choices are 4 columns in from each side.
 */
export const dialogWidth = (terminalColumns: number): number => Math.max(40, Math.min(88, terminalColumns - 2) - 8)

/** `lines` with every one kept within `width` columns, a wrapped one continuing under its value or column. */
const fitted = (lines: ReadonlyArray<Line>, width: number): Array<Line> =>
  lines.flatMap((entry) => wrapText(entry.text, width).split("\n").map((text) => ({ text, tone: entry.tone })))

const line = (text: string, tone: Tone = "text"): Line => ({ text, tone })

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`

const percent = (part: number, whole: number): string => {
  if (whole <= 0) return "0%"
  const value = (part / whole) * 100
  return value > 0 && value < 1 ? "<1%" : `${Math.round(value)}%`
}

/** The net cost effect in input tokens: `~2.1k saved` or `~800 more`. */
const costNet = (cost: StatusCost): string => {
  const net = Math.round(cost.saved - cost.rebuilt - (cost.reRead ?? 0))
  return net >= 0 ? `${formatTokens(net)} saved` : `${formatTokens(-net)} more`
}

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

const thousands = (n: number) => n.toLocaleString("en-US")

/**
 * The provider's figure for the next request: its count of the latest one, less what a sweep or a restore since
 * changed (`reportedNext`); none when that is not known.
 */
const reportedNow = (status: SessionStatus, situation: Situation): number | undefined => {
  const context = status.context
  return reportedNext(
    situation.reported,
    context === undefined ? undefined : { left: context.pruned, leftAtLatest: context.leftAtLatest },
    context?.changed === true
  )
}

/**
 * The context's size: the provider's figure when there is one (estimated, "~", once a sweep or a restore changed it),
 * else the status's estimate.
 */
const contextSize = (status: SessionStatus, situation: Situation): { tokens: number; text: string } | undefined => {
  const reported = reportedNow(status, situation)
  if (reported !== undefined) {
    return { tokens: reported, text: status.context?.changed === true ? formatTokens(reported) : thousands(reported) }
  }
  const context = status.context
  return context === undefined ? undefined : { tokens: context.tokens, text: formatTokens(context.tokens) }
}

const contextSummary = (status: SessionStatus, situation: Situation): string => {
  const size = contextSize(status, situation)
  if (size === undefined) return "No request seen yet."
  const limit = status.context?.limit
  return limit === undefined
    ? `${size.text} tokens sent`
    : `${size.text} tokens, ${percent(size.tokens, limit)} of ${windowSize(limit)}`
}

/** The sidebar panel: short lines, `width` columns at most. */
export const panelLines = (
  loaded: Loaded | undefined,
  situation: Situation,
  width = panelWidth
): ReadonlyArray<Line> => fitted(panelContent(loaded, situation), width)

const panelContent = (loaded: Loaded | undefined, situation: Situation): ReadonlyArray<Line> => {
  const title = line("Context pruning", "title")
  const problem = unavailable(loaded, situation)
  if (problem !== undefined || loaded?._tag !== "ok") return [title, ...(problem ?? [])]
  const status = loaded.status
  const lines = [title, line(contextSummary(status, situation))]
  lines.push(
    status.pruned.calls > 0
      ? line(`Pruned: ${plural(status.pruned.calls, "call")}, ${formatTokens(status.pruned.tokens)} tokens`)
      : line("Pruned: nothing yet", "muted")
  )
  if (status.folded !== undefined && status.folded.turns > 0) {
    lines.push(line(`Folded: ${plural(status.folded.turns, "turn")}, ${plural(status.folded.calls, "call")}`))
  }
  const pending = status.pending
  if (pending !== undefined && pending.calls > 0) {
    lines.push(line(`Pending: ${plural(pending.calls, "call")}, ${formatTokens(pending.tokens)}`))
    lines.push(line(`  waiting: ${pending.reason}`, "muted"))
  } else if (pending !== undefined && status.pruned.calls === 0) {
    lines.push(line("No stale tool output so far.", "muted"))
  }
  if (status.cost !== undefined) {
    lines.push(line(`Cost: ${costNet(status.cost)} (${status.cost.profile})`))
  }
  return lines
}

/** One choice of the dialog: `args` is what it runs, as `/dcp <args>` would. */
export interface Action {
  readonly args: string
  readonly title: string
  readonly description: string
  /** Shown at the row's right end, never cut: the tokens a restore brings back. */
  readonly footer?: string
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
  return entries.map(([reason, tally]) => `${reasonName(reason)} ${tally.calls}`).join(", ")
}

/**
 * Where the last request's tokens went, as bars of one whole: what was sent plus what pruning left out. The
 * provider's figure is the size sent when there is one; what it counted beyond the estimated content (tool
 * definitions, its own formatting) shows as "Other", and should it count less, the rows are scaled down to it, as
 * `/dcp context` does.
 */
const breakdown = (context: StatusContext, reported: number | undefined): ReadonlyArray<Line> => {
  const changed = context.changed === true
  const counted = context.system + context.text + context.tools
  const sent = reported ?? counted
  const other = Math.max(0, sent - counted)
  const scale = counted === 0 || sent >= counted ? 1 : sent / counted
  const whole = sent + context.pruned
  const window = context.limit === undefined
    ? ""
    : `, ${percent(sent, context.limit)} of a ${windowSize(context.limit)} window`
  const size = reported === undefined
    ? `${formatTokens(sent)} tokens${window} (estimated from the last request)`
    : changed
    ? `${formatTokens(reported)} tokens${window} (the provider's count of the last request, less what changed since)`
    : `${thousands(reported)} tokens${window} (reported by the provider)`
  return [
    line(`Context: ${size}.`),
    line(""),
    line(breakdownRow("System", Math.round(context.system * scale), whole)),
    line(breakdownRow("Conversation", Math.round(context.text * scale), whole)),
    line(breakdownRow(`Tools (${context.calls})`, Math.round(context.tools * scale), whole)),
    ...(other > 0 ? [line(breakdownRow("Other", other, whole))] : []),
    line(breakdownRow("Pruned", context.pruned, whole), context.pruned > 0 ? "text" : "muted"),
    line(
      `${" ".repeat(labelWidth)}Without pruning: ${formatTokens(whole)} tokens${
        reported === undefined ? "" : " (estimated)"
      }.`,
      "muted"
    ),
    ...(other > 0
      ? [line(`${" ".repeat(labelWidth)}Other: tool definitions and the provider's own framing.`, "muted")]
      : [])
  ]
}

/**
 * The `/dcp` dialog: where the context goes (the last request as sent, plus what pruning left out of it, as bars
 * of one whole), what is pruned, what waits, and the sweep and restore choices the server part can carry out, in
 * lines of `width` columns at most (`dialogWidth`).
 */
export const dialogModel = (
  loaded: Loaded | undefined,
  situation: Situation,
  width = dialogWidth(160)
): DialogModel => {
  const { actions, lines } = dialogContent(loaded, situation, width)
  return { lines: fitted(lines, width), actions }
}

const dialogContent = (loaded: Loaded | undefined, situation: Situation, width: number): DialogModel => {
  const problem = unavailable(loaded, situation)
  if (problem !== undefined || loaded?._tag !== "ok") return { lines: problem ?? [], actions: [] }
  const status = loaded.status
  const lines: Array<Line> = []
  const context = status.context
  if (context === undefined) {
    lines.push(line("No request of this session seen yet: the breakdown comes with the first one.", "muted"))
  } else {
    lines.push(...breakdown(context, reportedNow(status, situation)))
  }
  lines.push(line(""))
  lines.push(line(
    `${"In effect".padEnd(labelWidth)}${plural(status.pruned.calls, "call")}, ${
      formatTokens(status.pruned.tokens)
    } tokens out of every request`
  ))
  if (status.folded !== undefined && status.folded.turns > 0) {
    lines.push(line(
      `${"Folded".padEnd(labelWidth)}${plural(status.folded.turns, "turn")} (${
        plural(status.folded.calls, "call")
      } as digests), ${formatTokens(status.folded.tokens)} tokens more`
    ))
  }
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
        : `${"Pending".padEnd(labelWidth)}${plural(pending.calls, "call")}, ${
          formatTokens(pending.tokens)
        } tokens, waiting: ${pending.reason}`
    ))
  }
  const cost = status.cost
  if (cost !== undefined) {
    lines.push(line(
      `${"Cost".padEnd(labelWidth)}${costNet(cost)} in input tokens: pruned tokens ${
        formatTokens(Math.round(cost.saved))
      }, ` +
        `cache rebuilds ${formatTokens(Math.round(cost.rebuilt))}` +
        (cost.reRead ? `, masked files read again ${formatTokens(Math.round(cost.reRead))}` : "") +
        ` (${cost.profile} pricing, estimated)`
    ))
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
      description: `${plural(status.pruned.calls, "call")} back into context`,
      footer: formatTokens(status.pruned.tokens),
      category: "Restore"
    })
  }
  const id = idColumn(status.recent.map((prune) => prune.id))
  for (const prune of status.recent) actions.push(restoreChoice(prune, id, width))
  return { lines, actions }
}

/** OpenCode cuts a choice's title at this many columns. */
const maxTitle = 61

/**
 * A recent prune as a restore choice that fits its row whole: the ID (right-aligned), the tool and its argument
 * shortened to what is left, the reason, and the tokens at the right end. OpenCode puts the title, a space and the
 * description in what the footer and a column of gap leave of the row, and cuts what does not fit.
 */
const restoreChoice = (prune: StatusPrune, id: (id: number) => string, width: number): Action => {
  const footer = formatTokens(prune.tokens)
  const description = reasonName(prune.reason)
  const head = `${id(prune.id)}  ${prune.tool}`
  const room = Math.min(maxTitle, width - footer.length - 1 - description.length - 1) - head.length - 1
  return {
    args: `restore ${prune.id}`,
    title: prune.target === "" ? head : `${head} ${shortened(prune.target, room)}`,
    description,
    footer,
    category: "Restore"
  }
}

/**
 * `text` in at most `room` columns. A path keeps its file's name and as many whole folders around the cut as fit
 * (`src/…/widgets/Panel.tsx`); anything else (a command, a pattern), and a name too long by itself, keeps its start.
 */
const shortened = (text: string, room: number): string => {
  if ([...text].length <= room) return text
  if (room <= 1) return "…"
  const segments = text.split("/")
  if (!/\s/.test(text) && segments.length > 1) {
    const width = (parts: ReadonlyArray<string>) => [...parts.join("/")].length
    let tail = segments.slice(-1)
    const head = segments.slice(0, 1)
    for (let i = segments.length - 2; i > 0 && width(["…", ...segments.slice(i)]) <= room; i--) tail = segments.slice(i)
    const withHead = [...head, "…", ...tail]
    if (width(withHead) <= room && segments.length > tail.length + 1) return withHead.join("/")
    if (width(["…", ...tail]) <= room) return ["…", ...tail].join("/")
  }
  return `${[...text].slice(0, room - 1).join("")}…`
}
