import { assert, describe, it } from "vitest"
import type { SessionStatus } from "../../src/state/status.ts"
import type { Loaded } from "../../src/tui/board.ts"
import { type Action, dialogModel, dialogWidth, type Line, panelLines, reportedContext } from "../../src/tui/render.ts"

const main = { subAgent: false }

/** A session one request in: a duplicate read pruned, the context at 12.4k of a 200k window. */
const status = (overrides: Partial<SessionStatus> = {}): Loaded => ({
  _tag: "ok",
  status: {
    version: 1,
    sessionID: "ses_a",
    updatedAt: 1_000,
    context: {
      tokens: 12_400,
      limit: 200_000,
      system: 1_800,
      text: 2_600,
      tools: 8_000,
      calls: 9,
      pruned: 3_100,
      at: 900
    },
    pruned: { calls: 3, tokens: 3_100 },
    session: {
      calls: 5,
      tokens: 4_000,
      byReason: { deduplication: { calls: 3, tokens: 3_100 }, sweep: { calls: 2, tokens: 900 } }
    },
    recent: [
      { id: 7, tool: "read", target: "src/app.ts", tokens: 1_200, reason: "deduplication" },
      { id: 4, tool: "bash", target: "npm test", tokens: 800, reason: "sweep" }
    ],
    commands: true,
    ...overrides
  }
})

const texts = (lines: ReadonlyArray<Line>) => lines.map((line) => line.text)

describe("the sidebar panel", () => {
  it("shows the context size, its share of the window and what is pruned", () => {
    assert.deepStrictEqual(texts(panelLines(status(), main)), [
      "Context pruning",
      "~12k tokens, 6% of 200k",
      "Pruned: 3 calls, ~3.1k tokens"
    ])
  })

  it("shows the folded turns and the calls their digests stand for", () => {
    const lines = texts(panelLines(status({ folded: { turns: 2, calls: 30, tokens: 1_800 } }), main))
    assert.strictEqual(lines[3], "Folded: 2 turns, 30 calls")
  })

  it("says when nothing is pruned yet, muted", () => {
    const lines = panelLines(status({ pruned: { calls: 0, tokens: 0 }, recent: [] }), main)
    assert.deepStrictEqual(lines[2], { text: "Pruned: nothing yet", tone: "muted" })
  })

  it("shows pending prunes and why they wait, when the server part reports them", () => {
    const lines = texts(panelLines(status({ pending: { calls: 2, tokens: 1_500, reason: "warm cache" } }), main))
    assert.deepStrictEqual(lines.slice(3), ["Pending: 2 calls, ~1.5k", "  waiting: warm cache"])
  })

  it("says there is nothing stale when nothing is pruned or pending", () => {
    const lines = texts(panelLines(
      status({ pruned: { calls: 0, tokens: 0 }, recent: [], pending: { calls: 0, tokens: 0, reason: "" } }),
      main
    ))
    assert.strictEqual(lines.at(-1), "No stale tool output so far.")
  })

  it("shows the cost effect under the pricing profile, when reported", () => {
    const lines = texts(panelLines(status({ cost: { profile: "anthropic", saved: 4_000, rebuilt: 1_900 } }), main))
    assert.deepStrictEqual(lines.slice(3), ["Cost: ~2.1k saved (anthropic)"])
  })

  it("the provider's figure for the context, when there is one, is the size shown", () => {
    assert.strictEqual(
      texts(panelLines(status(), { subAgent: false, reported: 15_230 }))[1],
      "15,230 tokens, 8% of 200k"
    )
  })

  it("without a window size, shows the tokens sent only", () => {
    const base = status()
    const context = base._tag === "ok" ? { ...base.status.context!, limit: undefined } : undefined
    assert.strictEqual(texts(panelLines(status({ context: context! }), main))[1], "~12k tokens sent")
  })

  it("before the session's first request, says where the data comes from", () => {
    assert.deepStrictEqual(texts(panelLines({ _tag: "missing" }, main)), [
      "Context pruning",
      "No data yet: it comes with the",
      "first request of this session."
    ])
  })

  it("a status file from another release is a warning, not an error", () => {
    assert.deepStrictEqual(panelLines({ _tag: "otherVersion", version: 2 }, main).slice(1), [
      { text: "Status from another version.", tone: "warning" },
      { text: "Update both parts of the plugin.", tone: "muted" }
    ])
  })

  it("a sub-agent session is left as is, whatever its file says", () => {
    assert.deepStrictEqual(texts(panelLines(status(), { subAgent: true })), [
      "Context pruning",
      "Sub-agent session: left as is."
    ])
  })
})

describe("the context size the provider reported", () => {
  const usage = (input: number, output: number, read = 0) => ({
    role: "assistant",
    tokens: { input, output, reasoning: 0, cache: { read, write: 0 } }
  })

  it("is the newest assistant message's request and reply, as OpenCode's own sidebar counts it", () => {
    assert.strictEqual(
      reportedContext([usage(100, 10), { role: "user" }, usage(9_000, 41, 500), { role: "user" }]),
      9_541
    )
  })

  it("skips a reply still streaming (no usage yet), and is absent before any", () => {
    assert.strictEqual(reportedContext([usage(8_000, 30), usage(0, 0)]), 8_030)
    assert.isUndefined(reportedContext([{ role: "user" }]))
  })
})

describe("the /dcp dialog", () => {
  it("breaks the context down as bars of one whole: what was sent plus what pruning left out", () => {
    const { lines } = dialogModel(status(), main)
    assert.deepStrictEqual(texts(lines).slice(0, 7), [
      "Context: ~12k tokens, 6% of a 200k window (estimated from the last request).",
      "",
      "System        ███░░░░░░░░░░░░░░░░░░░░░  12%   ~1.8k",
      "Conversation  ████░░░░░░░░░░░░░░░░░░░░  17%   ~2.6k",
      "Tools (9)     ████████████░░░░░░░░░░░░  52%     ~8k",
      "Pruned        █████░░░░░░░░░░░░░░░░░░░  20%   ~3.1k",
      "              Without pruning: ~16k tokens."
    ])
  })

  it("with the provider's figure, what it counted beyond the estimated content is Other", () => {
    const { lines } = dialogModel(status(), { subAgent: false, reported: 15_400 })
    assert.deepStrictEqual(texts(lines).slice(0, 10), [
      "Context: 15,400 tokens, 8% of a 200k window (reported by the provider).",
      "",
      "System        ██░░░░░░░░░░░░░░░░░░░░░░  10%   ~1.8k",
      "Conversation  ███░░░░░░░░░░░░░░░░░░░░░  14%   ~2.6k",
      "Tools (9)     ██████████░░░░░░░░░░░░░░  43%     ~8k",
      "Other         ████░░░░░░░░░░░░░░░░░░░░  16%     ~3k",
      "Pruned        ████░░░░░░░░░░░░░░░░░░░░  17%   ~3.1k",
      "              Without pruning: ~19k tokens (estimated).",
      "              Other: tool definitions and the provider's own framing.",
      ""
    ])
  })

  it("a provider figure below the estimate scales the rows down to it", () => {
    const rows = texts(dialogModel(status(), { subAgent: false, reported: 6_200 }).lines).slice(2, 5)
    assert.deepStrictEqual(rows.map((row) => row.trim().split(/\s+/).at(-1)), ["~900", "~1.3k", "~4k"])
  })

  it("shows what is pruned now and in the session, by reason", () => {
    const { lines } = dialogModel(status(), main)
    assert.deepStrictEqual(texts(lines).slice(8, 10), [
      "In effect     3 calls, ~3.1k tokens out of every request",
      "This session  5 calls, ~4k tokens pruned (duplicate 3, swept 2)"
    ])
  })

  it("shows pending prunes and the cost effect when the server part reports them", () => {
    const { lines } = dialogModel(
      status({
        pending: { calls: 2, tokens: 1_500, reason: "warm cache" },
        cost: { profile: "anthropic", saved: 1_000, rebuilt: 1_800 }
      }),
      main
    )
    assert.deepStrictEqual(texts(lines).slice(10), [
      "Pending       2 calls, ~1.5k tokens, waiting: warm cache",
      "Cost          ~800 more in input tokens: pruned tokens ~1k, cache rebuilds ~1.8k",
      "              (anthropic pricing, estimated)"
    ])
  })

  it("takes what the model's reads of masked files cost from the cost effect, and names it", () => {
    const { lines } = dialogModel(
      status({ cost: { profile: "anthropic", saved: 4_000, rebuilt: 1_000, reRead: 500 } }),
      main
    )
    assert.deepStrictEqual(texts(lines).slice(-2), [
      "Cost          ~2.5k saved in input tokens: pruned tokens ~4k, cache rebuilds",
      "              ~1k, masked files read again ~500 (anthropic pricing, estimated)"
    ])
  })

  it("offers sweep, restore all, and each recent prune to restore", () => {
    assert.deepStrictEqual(dialogModel(status(), main).actions, [
      {
        args: "sweep",
        title: "Sweep",
        description: "prune every tool call since your last message",
        category: "Prune"
      },
      {
        args: "restore all",
        title: "Restore all",
        description: "3 calls back into context",
        footer: "~3.1k",
        category: "Restore"
      },
      {
        args: "restore 7",
        title: "7  read src/app.ts",
        description: "duplicate",
        footer: "~1.2k",
        category: "Restore"
      },
      { args: "restore 4", title: "4  bash npm test", description: "swept", footer: "~800", category: "Restore" }
    ])
  })

  it("with nothing pruned, offers only the sweep", () => {
    const actions = dialogModel(status({ pruned: { calls: 0, tokens: 0 }, recent: [] }), main).actions
    assert.deepStrictEqual(actions.map((action) => action.args), ["sweep"])
  })

  it("offers nothing to run when the server part's commands are off, and says why", () => {
    const model = dialogModel(status({ commands: false }), main)
    assert.deepStrictEqual(model.actions, [])
    assert.strictEqual(
      texts(model.lines).at(-1),
      "Sweep and restore are off: `commands.enabled` is false in the dcp config."
    )
  })

  it("offers nothing to run without a status from the server part", () => {
    assert.deepStrictEqual(dialogModel({ _tag: "missing" }, main), {
      lines: [
        { text: "No data yet: it comes with the", tone: "muted" },
        { text: "first request of this session.", tone: "muted" }
      ],
      actions: []
    })
  })
})

describe("the layout at 80, 120 and 160 columns", () => {
  /** A session with long paths and commands, IDs of one and two digits, and long waiting and cost lines. */
  const busy = status({
    pruned: { calls: 12, tokens: 15_100 },
    recent: [12, 11, 10, 9, 8].map((id) => ({
      id,
      tool: id === 12 ? "bash" : "read",
      target: id === 12
        ? "ls -la src/components/dashboard/widgets && echo finished listing the widgets directory"
        : `src/components/dashboard/widgets/ContextPruningPanel${id - 1}.tsx`,
      tokens: 300 * id,
      reason: id > 9 ? "sweep" : "staleOutputs"
    })),
    pending: { calls: 4, tokens: 17_000, reason: "warm cache, pays back after ~12 requests" },
    cost: { profile: "anthropic", saved: 4_000, rebuilt: 1_000, reRead: 500 }
  })
  const columns = (text: string) => [...text].length
  /** What OpenCode's dialog shows of a choice: the title (cut at 61), a space, the description, the footer apart. */
  const rowWidth = (action: Action) =>
    Math.min(61, columns(action.title)) + 1 + columns(action.description) + 1 + columns(action.footer ?? "")

  for (const terminal of [80, 120, 160]) {
    const width = dialogWidth(terminal)

    it(`${terminal} columns: every dialog line fits, and a wrapped one continues under its value`, () => {
      const lines = texts(dialogModel(busy, main, width).lines)
      assert.deepStrictEqual(lines.filter((line) => columns(line) > width), [])
      const pending = lines.findIndex((line) => line.startsWith("Pending"))
      assert.match(lines[pending + 1]!, /^ {14}\S/)
    })

    it(`${terminal} columns: every restore choice fits its row whole, the IDs right-aligned`, () => {
      const restores = dialogModel(busy, main, width).actions.filter((action) => /^restore \d/.test(action.args))
      assert.deepStrictEqual(restores.filter((action) => columns(action.title) > 61 || rowWidth(action) > width), [])
      assert.deepStrictEqual(restores.map((action) => action.title.slice(0, 8)), [
        "12  bash",
        "11  read",
        "10  read",
        " 9  read",
        " 8  read"
      ])
    })
  }

  it("a long path keeps its file's name and whole folders; a long command keeps its start", () => {
    const [bash, read] = dialogModel(busy, main, dialogWidth(80)).actions.filter((action) =>
      /^restore \d/.test(action.args)
    )
    assert.strictEqual(read!.title, "11  read src/…/dashboard/widgets/ContextPruningPanel10.tsx")
    assert.match(bash!.title, /^12 {2}bash ls -la src\/components\/dashboard\/widgets && echo …$/)
  })

  it("the panel keeps to the sidebar's 37 columns, a wrapped line under its value", () => {
    const lines = texts(panelLines(busy, main))
    assert.deepStrictEqual(lines.filter((line) => columns(line) > 37), [])
    assert.deepStrictEqual(lines.slice(4, 6), ["  waiting: warm cache, pays back", "           after ~12 requests"])
  })

  it("the dialog is 88 columns wide, or the terminal less 2, with 4 columns of padding each side", () => {
    assert.deepStrictEqual([80, 120, 160].map(dialogWidth), [70, 80, 80])
  })
})
