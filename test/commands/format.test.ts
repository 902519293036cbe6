import { assert, describe, it } from "vitest"
import { formatContext, formatHelp, formatStats } from "../../src/commands/format.ts"
import { type Reason, reasonName } from "../../src/engine/reasons.ts"
import { emptySessionFile, type LifetimeTotals } from "../../src/state/schema.ts"

const emptyStats = () => emptySessionFile("ses_none", 0).stats

const names = (reason: string) => reasonName(reason as Reason)

/** Nothing pruned since the latest request, nothing waiting for the cache; the default cache settings. */
const settled = { pending: { calls: 0, tokens: 0 }, waiting: undefined, ttlSeconds: 300, pressure: 0.9 }

/** A context of 10k tokens, 4.2k pruned. */
const context = {
  ...settled,
  system: 2000,
  user: 500,
  assistant: 1500,
  tools: 6000,
  toolCalls: 12,
  prunedCalls: 3,
  prunedTokens: 4200,
  reported: undefined
}

/** Three automatic prunes waiting for a warm cache: they would pay back after 11.2 requests, the cache serves 7.4. */
const waiting = { calls: 3, tokens: 6200, why: { reason: "warm-cache", paysBackAfter: 11.2, horizon: 7.4 } } as const

const nothingNow = {
  inEffect: { calls: 0, tokens: 0 },
  folded: { turns: 0, calls: 0, tokens: 0 },
  queued: { calls: 0, tokens: 0 },
  waiting: undefined
}

const noLifetime: LifetimeTotals = { sessions: 0, calls: 0, tokens: 0, byReason: {} }

describe("/dcp output", () => {
  it("help lists one line per subcommand, and says what /dcp alone does on each surface", () => {
    assert.strictEqual(
      formatHelp(),
      [
        "Context pruning commands:",
        "  /dcp context           where the tokens of the current context go, and what pruning saves",
        "  /dcp stats             what was pruned in this session, by strategy and tool, and across all sessions",
        "  /dcp sweep [n]         prune every tool output since your last message, or the last n",
        "  /dcp restore <id|all>  send a pruned output (or all of them) to the model again; the ids are in the pruning notes",
        "  /dcp help              this list; /dcp alone shows it too, except in the terminal UI, where it opens the pruning dialog"
      ].join("\n")
    )
  })

  it("context without a provider figure: estimated split, total, and the total without pruning", () => {
    assert.strictEqual(
      formatContext(context),
      [
        "Current context by kind of content (o200k tokenizer; what pruning removed is estimated):",
        "  System      █████░░░░░░░░░░░░░░░░░░░  20%     ~2k",
        "  User        █░░░░░░░░░░░░░░░░░░░░░░░   5%    ~500",
        "  Assistant   ████░░░░░░░░░░░░░░░░░░░░  15%   ~1.5k",
        "  Tools (12)  ██████████████░░░░░░░░░░  60%     ~6k",
        "",
        "Pruned:           3 calls, ~4.2k tokens (estimated)",
        "Next request:     ~10k tokens (estimated)",
        "Without pruning:  ~14k tokens (estimated)"
      ].join("\n")
    )
  })

  it("context counts the folded turns, the calls their digests stand for, and what they save besides", () => {
    const lines = formatContext({ ...context, folded: { turns: 2, calls: 30, tokens: 1_800 } }).split("\n")
    assert.include(lines, "Folded:           2 old turns, 30 calls sent as digests, ~1.8k tokens more (estimated)")
    assert.include(lines, "Without pruning:  ~16k tokens (estimated)")
  })

  it("context says how many of the pruned calls go out with the next request", () => {
    assert.include(
      formatContext({ ...context, pending: { calls: 2, tokens: 3000 } }).split("\n"),
      "                  2 of them (~3k) go out with the next request."
    )
  })

  it("context says why automatic prunes wait for the cache, and when they apply", () => {
    const lines = formatContext({ ...context, waiting }).split("\n")
    assert.deepStrictEqual(lines.slice(lines.findIndex((line) => line.startsWith("Waiting:")), -2), [
      "Waiting:          3 calls, ~6.2k tokens: applying them now would pay for the prompt-cache rebuild after ~12 more requests, and this session's cache serves ~7.",
      "                  They apply when the cache goes cold (5 min without a request, another model, a new day), at a compaction, or at 90% of the window."
    ])
  })

  it("context says when waiting prunes are too few to be worth a rebuild", () => {
    const text = formatContext({
      ...context,
      waiting: { ...waiting, why: { ...waiting.why, reason: "below-minimum" } }
    })
    assert.include(
      text,
      "Waiting:          3 calls, ~6.2k tokens: too few tokens to be worth a prompt-cache rebuild yet."
    )
  })

  it("context says when waiting prunes pay back but are being gathered into one batch, and when they apply", () => {
    const text = formatContext({
      ...context,
      waiting: { ...waiting, why: { reason: "gathering", paysBackAfter: 3.5, horizon: 40, appliesAfter: 6 } }
    })
    assert.include(
      text,
      "Waiting:          3 calls, ~6.2k tokens: they would pay for the prompt-cache rebuild within the ~40 requests this session's cache serves, and are gathered into one batch first: they apply in ~6 more requests."
    )
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
      reported: 8000,
      ...settled
    })
    assert.include(text, "  System     ███░░░░░░░░░░░░░░░░░░░░░  13%     ~1k")
    assert.include(text, "  Other      ████████████░░░░░░░░░░░░  50%     ~4k")
    assert.include(
      text,
      "Current context:  8,000 tokens (as OpenCode shows it: the latest request and reply, reported by the provider)"
    )
    assert.include(text, "Without pruning:  ~8.9k tokens (estimated)")
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
      reported: 4000,
      ...settled
    })
    assert.include(text, "  System     ██████░░░░░░░░░░░░░░░░░░  25%     ~1k")
    assert.notInclude(text, "Other")
  })

  it("stats: this session by strategy and tool with the last prune, then lifetime totals", () => {
    const now = 1_700_000_600_000
    assert.strictEqual(
      formatStats({
        session: {
          calls: 5,
          tokens: 12_400,
          applications: { count: 2, cold: 1, rebuiltTokens: 20_000 },
          cost: { profile: "anthropic", requests: 40, saved: 36_000, rebuilt: 23_000, reReads: 0, reRead: 0 },
          compactions: { count: 0 },
          byReason: { deduplication: { calls: 3, tokens: 9000 }, discard: { calls: 2, tokens: 3400 } },
          byTool: { read: { calls: 4, tokens: 11_000 }, bash: { calls: 1, tokens: 1400 } },
          lastPrune: { at: now - 5 * 60_000, reason: "discard", calls: 2, tokens: 3400 }
        },
        lifetime: {
          sessions: 7,
          calls: 120,
          tokens: 310_000,
          byReason: { deduplication: { calls: 100, tokens: 250_000 }, purgeErrors: { calls: 20, tokens: 60_000 } }
        },
        now,
        cache: { requests: 40, read: 1_200_000, write: 90_000, uncached: 15_000 },
        reasonName: names,
        figures: { ...nothingNow, inEffect: { calls: 4, tokens: 11_000 } },
        ttlSeconds: 300,
        pressure: 0.9
      }),
      [
        "This session: 4 calls pruned now, ~11k tokens out of every request.",
        "  since the start: 5 prunes reached the model, ~12k tokens (restored and undone ones included)",
        "  by strategy: duplicate 3 (~9k) · discarded 2 (~3.4k)",
        "  by tool:     read 4 (~11k) · bash 1 (~1.4k)",
        "  last prune:  5 min ago, 2 calls (discarded), ~3.4k tokens",
        "  prompt cache: prunes reached the model 2 times (1 with the cache already expired); ~20k cached tokens were rebuilt for them (estimated).",
        "  cost (Anthropic prompt-cache pricing, estimated, in input tokens): the pruned tokens would have cost ~36k over 40 requests; cache rebuilds cost ~23k; net ~13k saved.",
        "  provider: 40 requests, ~1.2M tokens read from cache, ~90k written to it, ~15k uncached (as reported).",
        "All sessions: 120 calls pruned, ~310k tokens, in 7 sessions.",
        "  by strategy: duplicate 100 (~250k) · failed call input 20 (~60k)"
      ].join("\n")
    )
  })

  it("stats before anything was pruned", () => {
    assert.strictEqual(
      formatStats({
        session: emptyStats(),
        figures: nothingNow,
        lifetime: noLifetime,
        now: 0,
        reasonName: names,
        ttlSeconds: 300,
        pressure: 0.9
      }),
      [
        "This session: 0 calls pruned now, ~0 tokens out of every request.",
        "All sessions: 0 calls pruned, ~0 tokens, in 0 sessions."
      ].join("\n")
    )
  })

  it("stats counts prunes made since the latest request as going out with the next one", () => {
    const text = formatStats({
      session: emptyStats(),
      figures: { ...nothingNow, inEffect: { calls: 2, tokens: 3000 }, queued: { calls: 2, tokens: 3000 } },
      lifetime: noLifetime,
      now: 0,
      reasonName: names,
      ttlSeconds: 300,
      pressure: 0.9
    })
    assert.include(text.split("\n"), "  next request: 2 calls of them (~3k tokens) changed since the latest request.")
  })

  it("stats names the compactions the plugin asked for, with the figure OpenCode showed", () => {
    const text = formatStats({
      session: {
        ...emptyStats(),
        compactions: { count: 2, last: { at: 1_700_000_000_000, tokens: 52_103, threshold: 50_400 } }
      },
      figures: nothingNow,
      lifetime: noLifetime,
      now: 1_700_000_300_000,
      reasonName: names,
      ttlSeconds: 300,
      pressure: 0.9
    })
    assert.include(
      text.split("\n"),
      "  compactions: 2 asked between turns (compaction.enabled), the latest 5 min ago at 52,103 tokens as OpenCode counts them (compaction.atTokens 50,400)"
    )
  })

  it("stats counts the folded turns apart from the prunes", () => {
    const text = formatStats({
      session: emptyStats(),
      figures: { ...nothingNow, folded: { turns: 3, calls: 40, tokens: 2_100 } },
      lifetime: noLifetime,
      now: 0,
      reasonName: names,
      ttlSeconds: 300,
      pressure: 0.9
    })
    assert.include(text.split("\n"), "  folded:      3 old turns (40 calls sent as digests), ~2.1k tokens more.")
  })

  it("stats says why automatic prunes wait for the cache, and when they apply", () => {
    const text = formatStats({
      session: emptyStats(),
      figures: { ...nothingNow, waiting },
      lifetime: noLifetime,
      now: 0,
      reasonName: names,
      ttlSeconds: 3600,
      pressure: 0.9
    })
    assert.deepStrictEqual(text.split("\n").slice(1, 3), [
      "  waiting for the cache: 3 calls, ~6.2k tokens: applying them now would pay for the prompt-cache rebuild after ~12 more requests, and this session's cache serves ~7.",
      "    They apply when the cache goes cold (60 min without a request, another model, a new day), at a compaction, or at 90% of the window."
    ])
  })
})
