import { formatTokens } from "../engine/placeholders.ts"
import { type ContextParts, type Figures, waitingExpired } from "../engine/figures.ts"
import type { Waiting } from "../engine/schedule.ts"
import type { LifetimeTotals, SessionStats, Tally } from "../state/schema.ts"
import type { CacheUsage } from "./breakdown.ts"
import { subcommands } from "./parse.ts"

export const formatHelp = (): string => {
  const width = Math.max(...subcommands.map((entry) => entry.usage.length))
  const lines = subcommands.map((entry) => `  ${entry.usage.padEnd(width)}  ${entry.summary}`)
  return ["Context pruning commands:", ...lines].join("\n")
}

const callCount = (n: number) => `${n} call${n === 1 ? "" : "s"}`

const barWidth = 24

/** A horizontal bar, `share` (0 to 1) of it filled. */
export const bar = (share: number, width = barWidth): string => {
  const full = Math.max(0, Math.min(width, Math.round(share * width)))
  return `${"█".repeat(full)}${"░".repeat(width - full)}`
}

const thousands = (n: number) => n.toLocaleString("en-US")

/** A share as a whole percentage; a share under 1% that is not nothing as "<1%". */
export const percent = (part: number, whole: number): string => {
  if (whole <= 0) return "0%"
  const value = (part / whole) * 100
  return value > 0 && value < 1 ? "<1%" : `${Math.round(value)}%`
}

/** A context window as models are described ("200k"): an exact size, so without the estimate's "~". */
export const windowSize = (limit: number): string => formatTokens(limit).replace(/^~/, "")

/** A line of text, and whether it is a remark rather than a figure (the terminal UI shows those muted). */
export interface TextLine {
  readonly text: string
  readonly muted?: boolean
}

const labelWidth = 14

/** A row of the breakdown: label, bar, share, tokens. */
const breakdownRow = (label: string, tokens: number, whole: number): string =>
  `${label.padEnd(labelWidth)}${bar(whole === 0 ? 0 : tokens / whole)} ${percent(tokens, whole).padStart(4)}  ${
    formatTokens(tokens).padStart(6)
  }`

/**
 * The context's size, in one line: the provider's count when there is one (less what changed since, "~"), else the
 * figures' estimate when it is whole, else that it is not known yet.
 */
const contextSize = (context: ContextParts | undefined, reported: number | undefined): string => {
  if (context === undefined && reported === undefined) return "Context: not known yet: it comes with the first request."
  const limit = context?.limit
  const window = (tokens: number) =>
    limit === undefined ? "" : `, ${percent(tokens, limit)} of a ${windowSize(limit)} window`
  if (reported !== undefined) {
    return context?.changed === true
      ? `Next request: ${formatTokens(reported)} tokens${
        window(reported)
      } (the provider's count of the latest request, less what changed since).`
      : `Context: ${thousands(reported)} tokens${window(reported)} (reported by the provider).`
  }
  if (context!.systemUnknown === true) {
    return "Context: not known yet: the provider counts it with its reply, and this process has not seen the system prompt."
  }
  const counted = context!.system + context!.text + context!.tools
  return `Next request: ${formatTokens(counted)} tokens${
    window(counted)
  } (estimated; the provider counts it with its reply).`
}

/**
 * Where the next request's tokens go, as bars of one whole: what is sent plus what pruning leaves out. The provider's
 * figure is the size sent when there is one; what it counts beyond the estimated content (tool definitions, its own
 * framing, and the system prompt while it is not known) is "Other", and should it count less, the rows are scaled
 * down to it. A part not known yet says so. The `/dcp` dialog and `/dcp context` show these same lines.
 */
export const contextBreakdown = (context: ContextParts, reported: number | undefined): Array<TextLine> => {
  const counted = context.system + context.text + context.tools
  const sent = reported ?? counted
  const other = Math.max(0, sent - counted)
  const scale = counted === 0 || sent >= counted ? 1 : sent / counted
  const whole = sent + context.pruned
  const indent = " ".repeat(labelWidth)
  const unknownSystem = context.systemUnknown === true
  return [
    { text: contextSize(context, reported) },
    { text: "" },
    unknownSystem
      ? { text: `${"System".padEnd(labelWidth)}not known until this process sends a request`, muted: true }
      : { text: breakdownRow("System", Math.round(context.system * scale), whole) },
    { text: breakdownRow("Conversation", Math.round(context.text * scale), whole) },
    { text: breakdownRow(`Tools (${context.calls})`, Math.round(context.tools * scale), whole) },
    ...(other > 0 ? [{ text: breakdownRow("Other", other, whole) }] : []),
    { text: breakdownRow("Pruned", context.pruned, whole), muted: context.pruned === 0 },
    { text: `${indent}Without pruning: ${formatTokens(whole)} tokens (estimated).`, muted: true },
    ...(other > 0
      ? [{
        text: `${indent}Other: tool definitions and the provider's own framing${
          unknownSystem ? ", and the system prompt until it is known" : ""
        }.`,
        muted: true
      }]
      : [])
  ]
}

/** The cost effect as `/dcp stats` prices it, in input tokens. */
export interface CostFigures {
  readonly profile: string
  readonly saved: number
  readonly rebuilt: number
  readonly reRead?: number | undefined
}

/** The pricing a cost figure follows, named alike everywhere (`/dcp stats` describes it at length). */
export const pricingLabel = (profile: string): string => `${profile} pricing`

/** The net cost effect in input tokens: `~2.1k saved` or `~800 more`. */
export const costNet = (cost: CostFigures): string => {
  const net = Math.round(cost.saved - cost.rebuilt - (cost.reRead ?? 0))
  return net >= 0 ? `${formatTokens(net)} saved` : `${formatTokens(-net)} more`
}

/**
 * Why the net effect is what it is, where it is less than the pruned tokens: what they would have cost, less the cache
 * rebuilds and the model's reads of masked files; nothing when nothing was taken off them.
 */
export const costWhy = (cost: CostFigures): Array<string> => {
  const rebuilt = Math.round(cost.rebuilt)
  const reRead = Math.round(cost.reRead ?? 0)
  if (rebuilt === 0 && reRead === 0) return []
  return [
    `pruned tokens ${formatTokens(Math.round(cost.saved))}`,
    ...(rebuilt === 0 ? [] : [`less cache rebuilds ${formatTokens(rebuilt)}`]),
    ...(reRead === 0 ? [] : [`less masked files read again ${formatTokens(reRead)}`])
  ]
}

/** The cost effect in one line: net, why, and the pricing. */
const costLine = (cost: CostFigures): string => {
  const why = costWhy(cost)
  return `${costNet(cost)} in input tokens (${pricingLabel(cost.profile)}, estimated)${
    why.length === 0 ? "" : `: ${why.join(", ")}`
  }`
}

/** Everything pruned over a session, by reason (`tallyByReason`: each call once), in one line of parts. */
export const byReasonParts = (byReason: Readonly<Record<string, Tally>>, name: (reason: string) => string): string =>
  Object.entries(byReason).filter(([, tally]) => tally.calls > 0)
    .sort((a, b) => b[1].tokens - a[1].tokens)
    .map(([reason, tally]) => `${name(reason)} ${tally.calls}`)
    .join(", ")

/** A problem in a config file in effect. */
export interface ConfigProblem {
  readonly file: string
  readonly message: string
}

/** The problems of the config files in effect, with their files, for as long as they are not fixed. */
export const problemLines = (problems: ReadonlyArray<ConfigProblem>): Array<string> => {
  if (problems.length === 0) return []
  const files = [...new Set(problems.map((problem) => problem.file))]
  const head = `${problems.length} config problem${problems.length === 1 ? "" : "s"} in ${
    files.join(", ")
  } (shown until fixed):`
  return [head, ...problems.map((problem) => `  • ${problem.message}`)]
}

/** Whether a session pruned anything yet: "nothing yet" is said only when it never did. */
export const nothingEverPruned = (inEffect: Tally, session: Tally): boolean =>
  inEffect.calls === 0 && inEffect.tokens === 0 && session.calls === 0 && session.tokens === 0

/** What is in effect, in one line: the calls and tokens, or why there are none. */
export const inEffectLine = (inEffect: Tally, session: Tally, restored: number | undefined): string => {
  if (inEffect.calls > 0 || inEffect.tokens > 0) {
    return `${callCount(inEffect.calls)}, ${formatTokens(inEffect.tokens)} tokens out of every request`
  }
  if (nothingEverPruned(inEffect, session)) return "nothing yet"
  return restored !== undefined && restored > 0 ? "none now (restored)" : "none now"
}

/** The folded turns, in one line: the calls their digests stand for are among those in effect. */
export const foldedLine = (folded: { readonly turns: number; readonly calls: number; readonly tokens: number }) =>
  `${folded.turns} old turn${folded.turns === 1 ? "" : "s"} (${folded.calls} of those calls sent as ${
    folded.turns === 1 ? "one digest" : "digests"
  }), ${formatTokens(folded.tokens)} of those tokens`

interface WaitingPrunes {
  readonly calls: number
  readonly tokens: number
  readonly why: Waiting
  /** When the cache goes cold without another request: the reason expires with it. */
  readonly expiresAt?: number | undefined
}

/** Why automatic prunes wait, in two or three short lines; once the cache went cold, that they apply next. */
const waitingLines = (
  waiting: WaitingPrunes,
  options: { readonly ttlSeconds: number; readonly pressure: number; readonly now: number },
  indent: string
): Array<string> => {
  const { ttlSeconds, pressure } = options
  if (waitingExpired(waiting, options.now)) {
    return [
      `${callCount(waiting.calls)}, ${formatTokens(waiting.tokens)} tokens, waited for the prompt cache, which has ` +
      `gone cold since (${Math.round(ttlSeconds / 60)} min without a request): they apply with the next request.`
    ]
  }
  const { appliesAfter, paysBackAfter, horizon, reason } = waiting.why
  const why = reason === "below-minimum"
    ? "too few tokens to be worth a prompt-cache rebuild yet"
    : reason === "gathering"
    ? `they would pay for the prompt-cache rebuild within the ~${Math.round(horizon)} requests this session's cache ` +
      `serves, and are gathered into one batch first: they apply in ~${appliesAfter ?? 1} more requests`
    : `applying them now would pay for the prompt-cache rebuild after ~${Math.ceil(paysBackAfter)} more requests, ` +
      `and this session's cache serves ~${Math.round(horizon)}`
  return [
    `${callCount(waiting.calls)}, ${formatTokens(waiting.tokens)} tokens: ${why}.`,
    `${indent}They apply when the cache goes cold (${
      Math.round(ttlSeconds / 60)
    } min without a request, another model, a new day), at a compaction, or at ${
      Math.round(pressure * 100)
    }% of the window.`
  ]
}

/** What of the figures in effect the latest request did not carry: the next one does. */
const notSentYet = (queued: Tally): string =>
  `Of those, ${
    queued.calls > 0
      ? `${callCount(queued.calls)} (${formatTokens(queued.tokens)} tokens)`
      : `${formatTokens(queued.tokens)} tokens`
  } ${queued.calls === 1 ? "goes" : "go"} out with the next request for the first time.`

/** What `/dcp context` reports: the figures of the next request (src/engine/figures.ts), as the dialog shows them. */
export interface ContextReport {
  readonly context: ContextParts
  /** The provider's count for the next request (`reportedNext`), when there is one. */
  readonly reported: number | undefined
  readonly figures: Pick<Figures, "inEffect" | "folded" | "queued" | "waiting" | "restored">
  /** The session's prunes since the start: whether anything was ever pruned. */
  readonly session: Tally
  readonly cost?: CostFigures | undefined
  readonly problems?: ReadonlyArray<ConfigProblem> | undefined
  readonly now: number
  readonly ttlSeconds: number
  readonly pressure: number
}

/**
 * `/dcp context`: the config's problems while they last, the next request's breakdown (the dialog's), what is in
 * effect and folded, what goes out with the next request, what waits, and the cost effect.
 */
export const formatContext = (report: ContextReport): string => {
  const { figures } = report
  const { folded, inEffect, queued, waiting } = figures
  const pad = (label: string) => label.padEnd(10)
  const problems = problemLines(report.problems ?? [])
  const lines = [
    ...problems,
    ...(problems.length === 0 ? [] : [""]),
    ...contextBreakdown(report.context, report.reported).map((line) => line.text === "" ? "" : `  ${line.text}`)
      .map((line, i) => (i === 0 ? line.trimStart() : line)),
    "",
    `${pad("Pruned:")}${inEffectLine(inEffect, report.session, figures.restored)}${
      inEffect.calls > 0 || inEffect.tokens > 0 ? " (estimated)" : ""
    }`
  ]
  if (folded.turns > 0) lines.push(`${pad("Folded:")}${foldedLine(folded)}`)
  if (queued.calls > 0 || queued.tokens > 0) lines.push(`${pad("")}${notSentYet(queued)}`)
  if (waiting !== undefined) {
    const [first, ...rest] = waitingLines(waiting, report, pad(""))
    lines.push(`${pad("Waiting:")}${first}`, ...rest)
  }
  if (report.cost !== undefined) lines.push(`${pad("Cost:")}${costLine(report.cost)}`)
  return lines.join("\n")
}

const profileNames: Readonly<Record<string, string>> = {
  anthropic: "Anthropic's prompt cache",
  "anthropic-1h": "Anthropic's 1-hour prompt cache",
  openai: "a prefix cache",
  "per-request": "billed per request",
  none: "no prompt cache"
}

const profileName = (name: string) => profileNames[name] ?? name

const tallies = (record: Readonly<Record<string, Tally>>, name: (key: string) => string): string => {
  const entries = Object.entries(record).sort((a, b) => b[1].tokens - a[1].tokens)
  if (entries.length === 0) return "none"
  return entries.map(([key, tally]) => `${name(key)} ${tally.calls} (${formatTokens(tally.tokens)})`).join(" · ")
}

const ago = (at: number, now: number): string => {
  const minutes = Math.max(0, Math.round((now - at) / 60_000))
  if (minutes < 1) return "just now"
  if (minutes < 60) return `${minutes} min ago`
  const hours = Math.round(minutes / 60)
  if (hours < 48) return `${hours} h ago`
  return `${Math.round(hours / 24)} days ago`
}

export const formatStats = (input: {
  readonly session: SessionStats
  /** What is in effect now, made since the latest request, and waiting (src/engine/figures.ts). */
  readonly figures: Pick<Figures, "inEffect" | "folded" | "queued" | "waiting"> & { readonly restored?: number }
  readonly lifetime: LifetimeTotals
  readonly now: number
  readonly reasonName: (reason: string) => string
  /** What the provider reported for this session, when the stored session could be read. */
  readonly cache?: CacheUsage | undefined
  readonly ttlSeconds: number
  readonly pressure: number
  /** Problems in the config files in effect: shown until they are fixed. */
  readonly problems?: ReadonlyArray<ConfigProblem> | undefined
}): string => {
  const { figures, lifetime, session } = input
  const { folded, inEffect, queued, waiting } = figures
  const now = inEffectLine(inEffect, session, figures.restored)
  const problems = problemLines(input.problems ?? [])
  const lines = [
    ...problems,
    ...(problems.length === 0 ? [] : [""]),
    inEffect.calls > 0 || inEffect.tokens > 0
      ? `This session: ${callCount(inEffect.calls)} pruned now, ${
        formatTokens(inEffect.tokens)
      } tokens out of every request.`
      : `This session: ${now === "nothing yet" ? "nothing pruned yet" : now.replace(/^none now/, "none pruned now")}.`
  ]
  if (folded.turns > 0) lines.push(`  folded:      ${foldedLine(folded)}.`)
  if (queued.calls > 0 || queued.tokens > 0) lines.push(`  ${notSentYet(queued)}`)
  if (waiting !== undefined) {
    const [first, ...rest] = waitingLines(waiting, input, "    ")
    lines.push(`  waiting for the cache: ${first}`, ...rest)
  }
  if (session.calls > 0 || session.tokens > 0) {
    lines.push(
      `  since the start: ${callCount(session.calls)} pruned, ${
        formatTokens(session.tokens)
      } tokens (restored and undone ones included)`
    )
    lines.push(`  by strategy: ${tallies(session.byReason, input.reasonName)}`)
    lines.push(`  by tool:     ${tallies(session.byTool, (tool) => tool)}`)
  }
  if (session.lastPrune !== undefined) {
    const last = session.lastPrune
    lines.push(
      `  last prune:  ${ago(last.at, input.now)}, ${last.calls} call${last.calls === 1 ? "" : "s"} (${
        input.reasonName(last.reason)
      }), ${formatTokens(last.tokens)} tokens`
    )
  }
  const compactions = session.compactions
  if (compactions.last !== undefined) {
    const { at, threshold, tokens } = compactions.last
    lines.push(
      `  compactions: ${compactions.count} asked between turns (compaction.enabled), the latest ${
        ago(at, input.now)
      } at ${thousands(tokens)} tokens as OpenCode counts them (compaction.atTokens ${thousands(threshold)})`
    )
  }
  const applied = session.applications
  if (applied.count > 0) {
    const warm = applied.count - applied.cold
    lines.push(
      `  prompt cache: prunes reached the model ${applied.count} time${
        applied.count === 1 ? "" : "s"
      } (${applied.cold} with the cache already expired); ` +
        (warm === 0
          ? "no cache was rebuilt for them."
          : `${formatTokens(applied.rebuiltTokens)} cached tokens were rebuilt for them (estimated).`)
    )
  }
  const cost = session.cost
  if (cost.requests > 0 && (cost.saved > 0 || cost.rebuilt > 0)) {
    const net = cost.saved - cost.rebuilt - cost.reRead
    lines.push(
      `  cost (${pricingLabel(cost.profile)}, ${
        profileName(cost.profile)
      }; estimated, in input tokens): the pruned tokens would have cost ${formatTokens(Math.round(cost.saved))} ` +
        `over ${cost.requests} request${cost.requests === 1 ? "" : "s"}; cache rebuilds cost ${
          formatTokens(Math.round(cost.rebuilt))
        }; ` +
        (cost.reReads > 0
          ? `the model read ${cost.reReads} masked file${cost.reReads === 1 ? "" : "s"} again, for ${
            formatTokens(Math.round(cost.reRead))
          }; `
          : "") +
        (net >= 0
          ? `net ${formatTokens(Math.round(net))} saved.`
          : `net ${formatTokens(Math.round(-net))} more than without pruning.`)
    )
  }
  if (input.cache !== undefined && input.cache.requests > 0) {
    const { read, requests, uncached, write } = input.cache
    lines.push(
      read + write === 0
        ? `  provider: ${requests} request${requests === 1 ? "" : "s"}, ${
          formatTokens(uncached)
        } input tokens, no prompt-cache usage reported.`
        : `  provider: ${requests} request${requests === 1 ? "" : "s"}, ${formatTokens(read)} tokens read from cache, ${
          formatTokens(write)
        } written to it, ${formatTokens(uncached)} uncached (as reported).`
    )
  }
  lines.push(
    `All sessions: ${lifetime.calls} call${lifetime.calls === 1 ? "" : "s"} pruned, ${
      formatTokens(lifetime.tokens)
    } tokens, in ${lifetime.sessions} session${lifetime.sessions === 1 ? "" : "s"}.`
  )
  if (lifetime.calls > 0) lines.push(`  by strategy: ${tallies(lifetime.byReason, input.reasonName)}`)
  return lines.join("\n")
}
