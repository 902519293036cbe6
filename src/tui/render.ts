import { contextOfUsage } from "../commands/breakdown.ts"
import {
  byReasonParts,
  contextBreakdown,
  costNet,
  costWhy,
  foldedLine,
  inEffectLine,
  nothingEverPruned,
  percent,
  pricingLabel,
  windowSize
} from "../commands/format.ts"
import { reportedNext, waitingExpired } from "../engine/figures.ts"
import { idColumn, wrapText } from "../engine/notes.ts"
import { formatTokens } from "../engine/placeholders.ts"
import { reasonName } from "../engine/reasons.ts"
import type { SessionStatus, StatusPrune } from "../state/status.ts"
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
  /** The time now (ms): whether the prompt cache the waiting prunes wait for has gone cold since. */
  readonly now?: number | undefined
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

/**
 * Rows the dialog's lines may take in a terminal `rows` high, above the list of `actions`, so that the whole dialog
 * stays on screen and its list's highlighted row with it. OpenCode 1.18.33 puts a dialog a quarter of the way down,
 * with a row of padding on top; a choice list takes its title and filter (3 rows), a row of gap each side of the list,
 * a row below, and for the list as many rows as its choices and their categories need (a row per choice, a row per
 * category and one between two), at most half the terminal less 6, scrolling within. Above it: the title and a row
 * below the lines.
 */
export const dialogLineRows = (rows: number, actions: ReadonlyArray<Action>): number => {
  const top = Math.ceil(rows / 4) + 1
  if (actions.length === 0) return Math.max(1, rows - top - 2)
  const categories = new Set(actions.map((action) => action.category)).size
  const list = Math.max(0, Math.min(actions.length + categories * 2 - 1, Math.floor(rows / 2) - 6))
  return Math.max(1, rows - top - 2 - (list + 6))
}

/** `lines` with every one kept within `width` columns, a wrapped one continuing under its value or column. */
const fitted = (lines: ReadonlyArray<Line>, width: number): Array<Line> =>
  lines.flatMap((entry) => wrapText(entry.text, width).split("\n").map((text) => ({ text, tone: entry.tone })))

const line = (text: string, tone: Tone = "text"): Line => ({ text, tone })

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? "" : "s"}`

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
 * The context's size in a few words, as the panel and the dialog's head show it: the provider's count of the latest
 * request (the figure OpenCode's own sidebar shows) and its share of the window, with the next request's when a sweep or
 * a restore changed it since; before there is a count, the status's estimate when it is whole (the system prompt
 * known); else that it is not known yet.
 */
const contextShort = (
  status: SessionStatus,
  situation: Situation
): { readonly size: string | undefined; readonly next: string | undefined } => {
  const limit = status.context?.limit
  const share = (tokens: number) => (limit === undefined ? "" : `, ${percent(tokens, limit)} of ${windowSize(limit)}`)
  if (situation.reported !== undefined) {
    const next = reportedNow(status, situation)
    return {
      size: `${thousands(situation.reported)} tokens${share(situation.reported)}`,
      next: status.context?.changed === true && next !== undefined ? `next request: ${formatTokens(next)}` : undefined
    }
  }
  const context = status.context
  if (context === undefined || context.systemUnknown === true) return { size: undefined, next: undefined }
  return { size: `${formatTokens(context.tokens)} tokens${share(context.tokens)}`, next: undefined }
}

const panelContext = (status: SessionStatus, situation: Situation): Array<Line> => {
  const { next, size } = contextShort(status, situation)
  if (size === undefined) return [line("Context: not known yet", "muted")]
  return [line(size), ...(next === undefined ? [] : [line(`  ${next}`, "muted")])]
}

/** A config file's path, short: its folder and name (`.opencode/dcp.jsonc`). */
const shortFile = (file: string): string => file.split(/[\\/]/).slice(-2).join("/")

/** Whether the prunes waiting for the cache still wait: once the cache has gone cold, the next request applies them. */
const pendingExpired = (status: SessionStatus, situation: Situation): boolean =>
  status.pending !== undefined && situation.now !== undefined && waitingExpired(status.pending, situation.now)

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
  const lines = [title, ...panelContext(status, situation)]
  const pruned = inEffectLine(status.pruned, status.session, status.restored)
  lines.push(
    status.pruned.calls > 0 || status.pruned.tokens > 0
      ? line(`Pruned: ${plural(status.pruned.calls, "call")}, ${formatTokens(status.pruned.tokens)} tokens`)
      : line(`Pruned: ${pruned}`, "muted")
  )
  if (status.folded !== undefined && status.folded.turns > 0) {
    lines.push(line(`Folded: ${plural(status.folded.turns, "turn")} (${plural(status.folded.calls, "call")})`))
  }
  const pending = status.pending
  if (pending !== undefined && pending.calls > 0) {
    lines.push(line(`Pending: ${plural(pending.calls, "call")}, ${formatTokens(pending.tokens)}`))
    lines.push(
      pendingExpired(status, situation)
        ? line("  cache expired: they apply with the next request", "muted")
        : line(`  waiting: ${pending.reason}`, "muted")
    )
  }
  if (status.cost !== undefined) {
    lines.push(line(`Cost: ${costNet(status.cost)} (${status.cost.profile})`))
    for (const why of costWhy(status.cost)) lines.push(line(`  ${why}`, "muted"))
  }
  const problems = status.problems ?? []
  if (problems.length > 0) {
    lines.push(line(`Config: ${plural(problems.length, "problem")}, see /dcp`, "warning"))
  }
  if (nothingEverPruned(status.pruned, status.session) && (pending === undefined || pending.calls === 0)) {
    lines.push(line("No stale tool output so far.", "muted"))
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
  /** What the dialog says above its choices, most needed first: what a short terminal cuts is the end. */
  readonly lines: ReadonlyArray<Line>
  readonly actions: ReadonlyArray<Action>
}

const labelWidth = 14

const labelled = (label: string, text: string, tone: Tone = "text"): Line =>
  line(`${label.padEnd(labelWidth)}${text}`, tone)

/**
 * The `/dcp` dialog: what the user needs most first (the context's size, what is pruned, the cost effect, the config's
 * problems), then what is folded and waits, the session's prunes by reason, and where the context goes (the breakdown
 * `/dcp context` shows), with the sweep and restore choices the server part can carry out; lines of `width` columns
 * at most (`dialogWidth`). Where the sidebar is hidden (under 121 columns), its head is the panel.
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
  const context = status.context
  const breakdown = context === undefined ? [] : contextBreakdown(context, reportedNow(status, situation))
  const { next, size } = contextShort(status, situation)
  // The head: what the sidebar panel shows, where a narrow terminal hides it, in the rows every terminal leaves.
  const lines: Array<Line> = [
    labelled("Context", size === undefined ? "not known yet" : next === undefined ? size : `${size}; ${next}`),
    labelled("Pruned", inEffectLine(status.pruned, status.session, status.restored))
  ]
  if (status.cost !== undefined) {
    lines.push(
      labelled("Cost", `${costNet(status.cost)} in input tokens (${pricingLabel(status.cost.profile)}, estimated)`)
    )
  }
  if (status.cost !== undefined) {
    const why = costWhy(status.cost)
    if (why.length > 0) lines.push(labelled("", why.join(", ")))
  }
  for (const problem of status.problems ?? []) {
    lines.push(labelled("Config", `${problem.message} (${shortFile(problem.file)}; until fixed)`, "warning"))
  }
  if (status.folded !== undefined && status.folded.turns > 0) lines.push(labelled("Folded", foldedLine(status.folded)))
  const pending = status.pending
  if (pending !== undefined && pending.calls > 0) {
    const tally = `${plural(pending.calls, "call")}, ${formatTokens(pending.tokens)} tokens`
    lines.push(labelled(
      "Pending",
      pendingExpired(status, situation)
        ? `${tally}: the cache has gone cold, they apply with the next request`
        : `${tally}, waiting: ${pending.reason}`
    ))
  }
  const reasons = byReasonParts(status.session.byReason, reasonName)
  if (status.session.calls > 0 || status.session.tokens > 0) {
    lines.push(labelled(
      "This session",
      `${plural(status.session.calls, "call")}, ${formatTokens(status.session.tokens)} tokens pruned${
        reasons === "" ? "" : ` (${reasons})`
      }`
    ))
  }
  lines.push(line(""))
  if (context === undefined) {
    lines.push(line("No request of this session seen yet: the breakdown comes with the first one.", "muted"))
  } else {
    lines.push(...breakdown.map((entry) => line(entry.text, entry.muted === true ? "muted" : "text")))
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
  if (status.recent.length < status.pruned.calls) {
    lines.push(line(""))
    lines.push(line(
      `The list holds the ${status.recent.length} newest of the ${status.pruned.calls} calls; /dcp restore <id> restores any.`,
      "muted"
    ))
  }
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
  const description = prune.folded === true && prune.reason !== "fold"
    ? `${reasonName(prune.reason)}, ${reasonName("fold")}`
    : reasonName(prune.reason)
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
