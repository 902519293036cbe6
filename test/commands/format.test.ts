import { describe, expect, it } from "vitest"
import { formatContext, formatHelp, formatStats } from "../../src/commands/format.ts"
import { reasonName } from "../../src/engine/notes.ts"
import type { Reason } from "../../src/engine/strategies/candidate.ts"

const names = (reason: string) => reasonName(reason as Reason)

describe("/dcp output", () => {
  it("help lists one line per subcommand", () => {
    expect(formatHelp()).toBe(
      [
        "Context pruning commands:",
        "  /dcp                   this help",
        "  /dcp context           where the tokens of the current context go, and what pruning saves",
        "  /dcp stats             what was pruned in this session, by strategy and tool, and across all sessions",
        "  /dcp sweep [n]         prune every tool output since your last message, or the last n",
        "  /dcp restore <id|all>  send a pruned output (or all of them) to the model again"
      ].join("\n")
    )
  })

  it("help after a bad invocation starts with what was wrong", () => {
    expect(formatHelp("Unknown subcommand `x`.").split("\n").slice(0, 3)).toEqual([
      "Unknown subcommand `x`.",
      "",
      "Context pruning commands:"
    ])
  })

  it("context without a provider figure: estimated split, total, and the total without pruning", () => {
    expect(formatContext({
      system: 2000,
      user: 500,
      assistant: 1500,
      tools: 6000,
      toolCalls: 12,
      prunedCalls: 3,
      prunedTokens: 4200,
      reported: undefined
    })).toBe([
      "Current context by kind of content (o200k tokenizer; what pruning removed is estimated):",
      "  System      █████░░░░░░░░░░░░░░░░░░░  20%     ~2k",
      "  User        █░░░░░░░░░░░░░░░░░░░░░░░   5%    ~500",
      "  Assistant   ████░░░░░░░░░░░░░░░░░░░░  15%   ~1.5k",
      "  Tools (12)  ██████████████░░░░░░░░░░  60%     ~6k",
      "",
      "Pruned:           3 calls, ~4.2k tokens (estimated)",
      "Current context:  ~10k tokens (estimated)",
      "Without pruning:  ~14k tokens (estimated)"
    ].join("\n"))
  })

  it("context with a provider figure: it is the total, and what the messages do not explain shows as Other", () => {
    const text = formatContext({
      system: 1000,
      user: 1000,
      assistant: 1000,
      tools: 1000,
      toolCalls: 2,
      prunedCalls: 1,
      prunedTokens: 900,
      reported: 8000
    })
    expect(text).toContain("  System     ███░░░░░░░░░░░░░░░░░░░░░  13%     ~1k")
    expect(text).toContain("  Other      ████████████░░░░░░░░░░░░  50%     ~4k")
    expect(text).toContain("Current context:  8,000 tokens (reported by the provider for the latest request)")
    expect(text).toContain("Without pruning:  ~8.9k tokens (estimated)")
  })

  it("context where the provider counted less than the tokenizer: the rows are scaled down to its total", () => {
    const text = formatContext({
      system: 2000,
      user: 2000,
      assistant: 2000,
      tools: 2000,
      toolCalls: 2,
      prunedCalls: 0,
      prunedTokens: 0,
      reported: 4000
    })
    expect(text).toContain("  System     ██████░░░░░░░░░░░░░░░░░░  25%     ~1k")
    expect(text).not.toContain("Other")
  })

  it("stats: this session by strategy and tool with the last prune, then lifetime totals", () => {
    const now = 1_700_000_600_000
    expect(formatStats({
      session: {
        calls: 5,
        tokens: 12_400,
        applications: { count: 2, cold: 1, rebuiltTokens: 20_000 },
        byReason: { deduplication: { calls: 3, tokens: 9000 }, discard: { calls: 2, tokens: 3400 } },
        byTool: { read: { calls: 4, tokens: 11_000 }, bash: { calls: 1, tokens: 1400 } },
        lastPrune: { at: now - 5 * 60_000, reason: "discard", calls: 2, tokens: 3400 }
      },
      lifetime: {
        version: 1,
        updatedAt: now,
        sessions: 7,
        calls: 120,
        tokens: 310_000,
        byReason: { deduplication: { calls: 100, tokens: 250_000 }, purgeErrors: { calls: 20, tokens: 60_000 } }
      },
      now,
      cache: { requests: 40, read: 1_200_000, write: 90_000, uncached: 15_000 },
      reasonName: names
    })).toBe([
      "This session: 5 calls pruned, ~12k tokens taken out of every later request.",
      "  by strategy: duplicate 3 (~9k) · discarded 2 (~3.4k)",
      "  by tool:     read 4 (~11k) · bash 1 (~1.4k)",
      "  last prune:  5 min ago, 2 calls (discarded), ~3.4k tokens",
      "  prompt cache: prunes reached the model 2 times (1 with the cache already expired); ~20k cached tokens were rebuilt for them (estimated).",
      "  provider: 40 requests, ~1.2M tokens read from cache, ~90k written to it, ~15k uncached (as reported).",
      "All sessions: 120 calls pruned, ~310k tokens, in 7 sessions.",
      "  by strategy: duplicate 100 (~250k) · failed call input 20 (~60k)"
    ].join("\n"))
  })

  it("stats before anything was pruned", () => {
    expect(formatStats({
      session: { calls: 0, tokens: 0, applications: { count: 0, cold: 0, rebuiltTokens: 0 }, byReason: {}, byTool: {} },
      lifetime: { version: 1, updatedAt: 0, sessions: 0, calls: 0, tokens: 0, byReason: {} },
      now: 0,
      reasonName: names
    })).toBe([
      "This session: 0 calls pruned, ~0 tokens taken out of every later request.",
      "All sessions: 0 calls pruned, ~0 tokens, in 0 sessions."
    ].join("\n"))
  })
})
