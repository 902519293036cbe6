import { formatTokens } from "../engine/placeholders.ts"
import type { Figures } from "../engine/figures.ts"
import type { Waiting } from "../engine/schedule.ts"
import type { LifetimeTotals, SessionStats, Tally } from "../state/schema.ts"
import type { CacheUsage } from "./breakdown.ts"
import { subcommands } from "./parse.ts"

export const formatHelp = (): string => {
  const width = Math.max(...subcommands.map((entry) => entry.usage.length))
  const lines = subcommands.map((entry) => `  ${entry.usage.padEnd(width)}  ${entry.summary}`)
  return ["Context pruning commands:", ...lines].join("\n")
}

/** Where the tokens of the current context go, by kind of content. */
export interface Breakdown {
  /** Undefined when this process has not sent a request yet: OpenCode hands the system prompt over with each one. */
  readonly system: number | undefined
  readonly user: number
  readonly assistant: number
  readonly tools: number
  readonly toolCalls: number
  readonly prunedCalls: number
  /** Tokens pruning takes out of every request: what the context would grow by without it. */
  readonly prunedTokens: number
  /** Old turns folded (src/engine/fold.ts): the turns, the calls their digests stand for, the tokens they take out. */
  readonly folded?: { readonly turns: number; readonly calls: number; readonly tokens: number } | undefined
  /**
   * The context's size as OpenCode shows it, from what the provider reported for the latest request and its reply
   * (`contextOfUsage`), when it reported any and nothing changed since.
   */
  readonly reported: number | undefined
  /**
   * `reported` is the provider's count of the latest request less what a sweep or a restore since changed (an
   * estimate of the next request in the provider's terms), not the count itself.
   */
  readonly reportedChanged?: boolean | undefined
  /** Prunes made since the latest request (by the model or the user): the next request carries them. */
  readonly pending: Tally
  /** Automatic prunes waiting for the prompt cache, and why. */
  readonly waiting: WaitingPrunes | undefined
  readonly ttlSeconds: number
  readonly pressure: number
}

interface WaitingPrunes {
  readonly calls: number
  readonly tokens: number
  readonly why: Waiting
}

const callCount = (n: number) => `${n} call${n === 1 ? "" : "s"}`

/** Why automatic prunes wait, in two or three short lines. */
const waitingLines = (waiting: WaitingPrunes, ttlSeconds: number, pressure: number, indent: string): Array<string> => {
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

const barWidth = 24

/** A horizontal bar, `share` (0 to 1) of it filled. */
export const bar = (share: number, width = barWidth): string => {
  const full = Math.max(0, Math.min(width, Math.round(share * width)))
  return `${"█".repeat(full)}${"░".repeat(width - full)}`
}

const thousands = (n: number) => n.toLocaleString("en-US")

/**
 * The provider's figure for the latest request is the total when there is one. What the tokenizer does not see
 * in the messages (tool definitions, the provider's own formatting) shows as "Other"; should the provider count
 * less than the tokenizer, the rows are scaled down to its total. The content is counted exactly; what pruning
 * removed comes from the request path's estimates (the ledger), so the pruned figures and the tool row less them
 * are estimates, and say so.
 */
export const formatContext = (b: Breakdown): string => {
  const system = b.system ?? 0
  const counted = system + b.user + b.assistant + b.tools
  const current = b.reported ?? counted
  const other = Math.max(0, current - counted)
  const scale = counted === 0 || current >= counted ? 1 : current / counted
  const rows: Array<[string, number]> = [
    ["System", system * scale],
    ["User", b.user * scale],
    ["Assistant", b.assistant * scale],
    [`Tools (${b.toolCalls})`, b.tools * scale],
    ...(other > 0 ? [["Other", other] as [string, number]] : [])
  ]
  const labelWidth = Math.max(...rows.map(([label]) => label.length))
  const lines = ["Current context by kind of content (o200k tokenizer; what pruning removed is estimated):"]
  for (const [label, tokens] of rows) {
    const share = current === 0 ? 0 : tokens / current
    const shown = formatTokens(Math.round(tokens)).padStart(6)
    lines.push(`  ${label.padEnd(labelWidth)}  ${bar(share)} ${`${Math.round(share * 100)}%`.padStart(4)}  ${shown}`)
  }
  if (other > 0) lines.push("  (Other: what the provider counted beyond the messages, such as tool definitions.)")
  if (b.system === undefined) {
    lines.push("  (System: not known until this process sends a request; OpenCode hands it the system prompt then.)")
  }
  const currentText = b.reported === undefined
    ? `${formatTokens(counted)} tokens (estimated)`
    : b.reportedChanged === true
    ? `${
      formatTokens(b.reported)
    } tokens (estimated: what OpenCode shows for the latest request, less what changed since)`
    : `${thousands(b.reported)} tokens (as OpenCode shows it: the latest request and reply, reported by the provider)`
  lines.push("", `Pruned:           ${callCount(b.prunedCalls)}, ${formatTokens(b.prunedTokens)} tokens (estimated)`)
  const folded = b.folded ?? { turns: 0, calls: 0, tokens: 0 }
  if (folded.turns > 0) {
    lines.push(
      `Folded:           ${folded.turns} old turn${folded.turns === 1 ? "" : "s"}, ${
        callCount(folded.calls)
      } sent as digests, ${formatTokens(folded.tokens)} tokens more (estimated)`
    )
  }
  if (b.pending.calls > 0) {
    lines.push(
      `                  ${b.pending.calls} of them (${formatTokens(b.pending.tokens)}) go out with the next request.`
    )
  }
  if (b.waiting !== undefined) {
    const [first, ...rest] = waitingLines(b.waiting, b.ttlSeconds, b.pressure, "                  ")
    lines.push(`Waiting:          ${first}`, ...rest)
  }
  lines.push(
    `${
      b.reported === undefined || b.reportedChanged === true ? "Next request:   " : "Current context:"
    }  ${currentText}`,
    `Without pruning:  ${formatTokens(current + b.prunedTokens + folded.tokens)} tokens (estimated)`
  )
  return lines.join("\n")
}

const profileNames: Readonly<Record<string, string>> = {
  anthropic: "Anthropic prompt-cache pricing",
  "anthropic-1h": "Anthropic 1-hour prompt-cache pricing",
  openai: "prefix-cache pricing",
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
  readonly figures: Pick<Figures, "inEffect" | "folded" | "queued" | "waiting">
  readonly lifetime: LifetimeTotals
  readonly now: number
  readonly reasonName: (reason: string) => string
  /** What the provider reported for this session, when the stored session could be read. */
  readonly cache?: CacheUsage | undefined
  readonly ttlSeconds: number
  readonly pressure: number
  /** The pricing profile the cost figures follow. */
  readonly profile?: string | undefined
}): string => {
  const { figures, lifetime, session } = input
  const { folded, inEffect, queued, waiting } = figures
  const lines = [
    `This session: ${callCount(inEffect.calls)} pruned now, ${
      formatTokens(inEffect.tokens)
    } tokens out of every request.`
  ]
  if (folded.turns > 0) {
    lines.push(
      `  folded:      ${folded.turns} old turn${folded.turns === 1 ? "" : "s"} (${
        callCount(folded.calls)
      } sent as digests), ${formatTokens(folded.tokens)} tokens more.`
    )
  }
  if (queued.calls > 0) {
    lines.push(
      `  next request: ${callCount(queued.calls)} of them (${
        formatTokens(queued.tokens)
      } tokens) changed since the latest request.`
    )
  }
  if (waiting !== undefined) {
    const [first, ...rest] = waitingLines(waiting, input.ttlSeconds, input.pressure, "    ")
    lines.push(`  waiting for the cache: ${first}`, ...rest)
  }
  if (session.calls > 0) {
    lines.push(
      `  since the start: ${session.calls} prune${session.calls === 1 ? "" : "s"} reached the model, ${
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
      `  cost (${profileName(cost.profile)}, estimated, in input tokens): the pruned tokens would have cost ${
        formatTokens(Math.round(cost.saved))
      } ` +
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
