import { assert, describe, it } from "vitest"
import { type ContextReport, formatContext, formatHelp, formatStats } from "../../src/commands/format.ts"
import { type Reason, reasonName } from "../../src/engine/reasons.ts"
import { emptySessionFile, type LifetimeTotals } from "../../src/state/schema.ts"

const emptyStats = () => emptySessionFile("ses_none", 0).stats

const names = (reason: string) => reasonName(reason as Reason)

/** Three automatic prunes waiting for a warm cache: they would pay back after 11.2 requests, the cache serves 7.4. */
const waiting = { calls: 3, tokens: 6200, why: { reason: "warm-cache", paysBackAfter: 11.2, horizon: 7.4 } } as const

/** The next request: 10k tokens sent of a 200k window, 4.2k pruned, the system prompt known. */
const parts = { system: 2000, text: 2000, tools: 6000, calls: 12, pruned: 4200, limit: 200_000, changed: false }

/** Three calls pruned now, nothing else; no provider figure yet; the default cache settings. */
const report = (overrides: Partial<ContextReport> = {}): ContextReport => ({
  context: parts,
  reported: undefined,
  figures: {
    inEffect: { calls: 3, tokens: 4200 },
    folded: { turns: 0, calls: 0, tokens: 0 },
    queued: { calls: 0, tokens: 0 },
    waiting: undefined,
    restored: 0
  },
  session: { calls: 3, tokens: 4200 },
  now: 0,
  ttlSeconds: 300,
  pressure: 0.9,
  ...overrides
})

const contextLines = (overrides: Partial<ContextReport> = {}) => formatContext(report(overrides)).split("\n")

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

  it("context without a provider figure: the estimate, broken down as bars of one whole with what pruning left out", () => {
    assert.strictEqual(
      formatContext(report()),
      [
        "Next request: ~10k tokens, 5% of a 200k window (estimated; the provider counts it with its reply).",
        "",
        "  System        ███░░░░░░░░░░░░░░░░░░░░░  14%     ~2k",
        "  Conversation  ███░░░░░░░░░░░░░░░░░░░░░  14%     ~2k",
        "  Tools (12)    ██████████░░░░░░░░░░░░░░  42%     ~6k",
        "  Pruned        ███████░░░░░░░░░░░░░░░░░  30%   ~4.2k",
        "                Without pruning: ~14k tokens (estimated).",
        "",
        "Pruned:   3 calls, ~4.2k tokens out of every request (estimated)"
      ].join("\n")
    )
  })

  it("context with a provider figure: it is the size, and what the messages do not explain shows as Other", () => {
    const lines = contextLines({ reported: 14_000 })
    assert.strictEqual(lines[0], "Context: 14,000 tokens, 7% of a 200k window (reported by the provider).")
    assert.include(lines, "  Other         █████░░░░░░░░░░░░░░░░░░░  22%     ~4k")
    assert.include(lines, "                Without pruning: ~18k tokens (estimated).")
    assert.include(lines, "                Other: tool definitions and the provider's own framing.")
  })

  it("context after a sweep or a restore: the next request's size is the provider's count less what changed", () => {
    assert.strictEqual(
      contextLines({ reported: 12_000, context: { ...parts, changed: true } })[0],
      "Next request: ~12k tokens, 6% of a 200k window (the provider's count of the latest request, less what changed since)."
    )
  })

  it("context where the provider counted less than the estimate: the rows are scaled down to its total", () => {
    const lines = contextLines({ reported: 5000 })
    assert.include(lines, "  System        ███░░░░░░░░░░░░░░░░░░░░░  11%     ~1k")
    assert.notInclude(lines.join("\n"), "Other")
  })

  it("context before this process saw the system prompt says so, and that Other holds it until then", () => {
    const lines = contextLines({ reported: 14_000, context: { ...parts, system: 0, systemUnknown: true } })
    assert.include(lines, "  System        not known until this process sends a request")
    assert.include(
      lines,
      "                Other: tool definitions and the provider's own framing, and the system prompt until it is known."
    )
  })

  it("context with neither a provider figure nor the system prompt says the size is not known yet", () => {
    assert.strictEqual(
      contextLines({ context: { ...parts, system: 0, systemUnknown: true } })[0],
      "Context: not known yet: the provider counts it with its reply, and this process has not seen the system prompt."
    )
  })

  it("context counts the folded turns among the calls in effect, and what goes out with the next request", () => {
    const lines = contextLines({
      figures: {
        ...report().figures,
        inEffect: { calls: 4, tokens: 4311 },
        folded: { turns: 1, calls: 4, tokens: 111 },
        queued: { calls: 1, tokens: 111 }
      }
    })
    assert.include(lines, "Pruned:   4 calls, ~4.3k tokens out of every request (estimated)")
    assert.include(lines, "Folded:   1 old turn (4 of those calls sent as one digest), ~111 of those tokens")
    assert.include(lines, "          Of those, 1 call (~111 tokens) goes out with the next request for the first time.")
  })

  it("context says why automatic prunes wait for the cache, and when they apply", () => {
    const lines = contextLines({ figures: { ...report().figures, waiting } })
    assert.deepStrictEqual(lines.slice(lines.findIndex((line) => line.startsWith("Waiting:"))), [
      "Waiting:  3 calls, ~6.2k tokens: applying them now would pay for the prompt-cache rebuild after ~12 more requests, and this session's cache serves ~7.",
      "          They apply when the cache goes cold (5 min without a request, another model, a new day), at a compaction, or at 90% of the window."
    ])
  })

  it("context says when waiting prunes are too few to be worth a rebuild", () => {
    const lines = contextLines({
      figures: { ...report().figures, waiting: { ...waiting, why: { ...waiting.why, reason: "below-minimum" } } }
    })
    assert.include(lines, "Waiting:  3 calls, ~6.2k tokens: too few tokens to be worth a prompt-cache rebuild yet.")
  })

  it("context says when waiting prunes pay back but are being gathered into one batch, and when they apply", () => {
    const lines = contextLines({
      figures: {
        ...report().figures,
        waiting: { ...waiting, why: { reason: "gathering", paysBackAfter: 3.5, horizon: 40, appliesAfter: 6 } }
      }
    })
    assert.include(
      lines,
      "Waiting:  3 calls, ~6.2k tokens: they would pay for the prompt-cache rebuild within the ~40 requests this session's cache serves, and are gathered into one batch first: they apply in ~6 more requests."
    )
  })

  it("context: once the cache has gone cold, the waiting prunes' reason expired, and they apply with the next request", () => {
    const lines = contextLines({
      now: 300_000,
      figures: { ...report().figures, waiting: { ...waiting, expiresAt: 300_000 } }
    })
    assert.include(
      lines,
      "Waiting:  3 calls, ~6.2k tokens, waited for the prompt cache, which has gone cold since (5 min without a request): they apply with the next request."
    )
  })

  it("context names the cost effect, why it is less than the pruned tokens, and the pricing it follows", () => {
    const lines = contextLines({ cost: { profile: "openai", saved: 12_000, rebuilt: 0, reRead: 7000 } })
    assert.strictEqual(
      lines.at(-1),
      "Cost:     ~5k saved in input tokens (openai pricing, estimated): pruned tokens ~12k, less masked files read again ~7k"
    )
  })

  it("context names the config's problems first, as long as they last", () => {
    const lines = contextLines({
      problems: [{ file: "/p/.opencode/dcp.jsonc", message: "strategies.nonsense: unknown key" }]
    })
    assert.deepStrictEqual(lines.slice(0, 3), [
      "1 config problem in /p/.opencode/dcp.jsonc (shown until fixed):",
      "  • strategies.nonsense: unknown key",
      ""
    ])
  })

  it('context says "nothing yet" only when nothing was ever pruned, and how many calls were restored', () => {
    const none = { ...report().figures, inEffect: { calls: 0, tokens: 0 } }
    assert.include(contextLines({ figures: none, session: { calls: 0, tokens: 0 } }), "Pruned:   nothing yet")
    assert.include(contextLines({ figures: { ...none, restored: 3 } }), "Pruned:   none now (restored)")
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
        "  since the start: 5 calls pruned, ~12k tokens (restored and undone ones included)",
        "  by strategy: duplicate 3 (~9k) · discarded 2 (~3.4k)",
        "  by tool:     read 4 (~11k) · bash 1 (~1.4k)",
        "  last prune:  5 min ago, 2 calls (discarded), ~3.4k tokens",
        "  prompt cache: prunes reached the model 2 times (1 with the cache already expired); ~20k cached tokens were rebuilt for them (estimated).",
        "  cost (anthropic pricing, Anthropic's prompt cache; estimated, in input tokens): the pruned tokens would have cost ~36k over 40 requests; cache rebuilds cost ~23k; net ~13k saved.",
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
        "This session: nothing pruned yet.",
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
    assert.include(
      text.split("\n"),
      "  Of those, 2 calls (~3k tokens) go out with the next request for the first time."
    )
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
    assert.include(
      text.split("\n"),
      "  folded:      3 old turns (40 of those calls sent as digests), ~2.1k of those tokens."
    )
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
