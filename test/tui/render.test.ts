import { assert, describe, it } from "vitest"
import type { SessionStatus } from "../../src/state/status.ts"
import type { Loaded } from "../../src/tui/board.ts"
import {
  type Action,
  dialogLineRows,
  dialogModel,
  dialogWidth,
  type Line,
  panelLines,
  reportedContext
} from "../../src/tui/render.ts"

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
      { id: 5, tool: "read", target: "src/lib.ts", tokens: 1_100, reason: "deduplication" },
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
    assert.strictEqual(lines[3], "Folded: 2 turns (30 calls)")
  })

  it('says "nothing yet" when nothing was ever pruned, muted, and that nothing is stale', () => {
    const lines = panelLines(
      status({
        pruned: { calls: 0, tokens: 0 },
        recent: [],
        session: { calls: 0, tokens: 0, byReason: {} },
        pending: { calls: 0, tokens: 0, reason: "" }
      }),
      main
    )
    assert.deepStrictEqual(lines.slice(2), [
      { text: "Pruned: nothing yet", tone: "muted" },
      { text: "No stale tool output so far.", tone: "muted" }
    ])
  })

  it('after a restore of everything, says none is pruned now and how many were restored, never "nothing yet"', () => {
    const lines = texts(panelLines(
      status({
        pruned: { calls: 0, tokens: 0 },
        recent: [],
        restored: 3,
        pending: { calls: 0, tokens: 0, reason: "" },
        cost: { profile: "openai", saved: 4_500, rebuilt: 0 }
      }),
      main
    ))
    assert.deepStrictEqual(lines.slice(2), ["Pruned: none now (restored)", "Cost: ~4.5k saved (openai)"])
  })

  it("shows pending prunes and why they wait, while the prompt cache they wait for is warm", () => {
    const lines = texts(panelLines(
      status({ pending: { calls: 2, tokens: 1_500, reason: "warm cache", expiresAt: 5_000 } }),
      { ...main, now: 4_999 }
    ))
    assert.deepStrictEqual(lines.slice(3), ["Pending: 2 calls, ~1.5k", "  waiting: warm cache"])
  })

  it("once the prompt cache has gone cold, the waiting reason has expired: they apply with the next request", () => {
    const lines = texts(panelLines(
      status({ pending: { calls: 2, tokens: 1_500, reason: "warm cache", expiresAt: 5_000 } }),
      { ...main, now: 5_000 }
    ))
    assert.deepStrictEqual(lines.slice(3), [
      "Pending: 2 calls, ~1.5k",
      "  cache expired: they apply with the",
      "                 next request"
    ])
  })

  it("shows the cost effect under the pricing profile, and why it is less than the pruned tokens", () => {
    const lines = panelLines(status({ cost: { profile: "openai", saved: 12_000, rebuilt: 0, reRead: 7_100 } }), main)
    assert.deepStrictEqual(lines.slice(3), [
      { text: "Cost: ~4.9k saved (openai)", tone: "text" },
      { text: "  pruned tokens ~12k", tone: "muted" },
      { text: "  less masked files read again ~7.1k", tone: "muted" }
    ])
  })

  it("a cost effect with nothing taken off the pruned tokens needs no reason", () => {
    const lines = texts(panelLines(status({ cost: { profile: "anthropic", saved: 4_000, rebuilt: 0 } }), main))
    assert.deepStrictEqual(lines.slice(3), ["Cost: ~4k saved (anthropic)"])
  })

  it("names the config's problems as long as the status reports them", () => {
    const lines = panelLines(
      status({ problems: [{ file: "/p/.opencode/dcp.jsonc", message: "strategies.nonsense: unknown key" }] }),
      main
    )
    assert.deepStrictEqual(lines.at(-1), { text: "Config: 1 problem, see /dcp", tone: "warning" })
  })

  it("the provider's figure for the context, when there is one, is the size shown", () => {
    assert.strictEqual(
      texts(panelLines(status(), { subAgent: false, reported: 15_230 }))[1],
      "15,230 tokens, 8% of 200k"
    )
  })

  it("after a sweep, keeps the provider's figure and adds the next request's", () => {
    const swept = status()
    const context = swept._tag === "ok" ? { ...swept.status.context!, changed: true, leftAtLatest: 1_100 } : undefined
    assert.deepStrictEqual(
      panelLines(status({ context: context! }), { subAgent: false, reported: 15_230 }).slice(1, 3),
      [
        { text: "15,230 tokens, 8% of 200k", tone: "text" },
        { text: "  next request: ~13k", tone: "muted" }
      ]
    )
  })

  it("without a window size, shows the tokens only", () => {
    const base = status()
    const context = base._tag === "ok" ? { ...base.status.context!, limit: undefined } : undefined
    assert.strictEqual(texts(panelLines(status({ context: context! }), main))[1], "~12k tokens")
  })

  it("before the provider's first count, an estimate without the system prompt is not shown as the context", () => {
    const first = status({
      context: {
        tokens: 6,
        limit: 200_000,
        system: 0,
        systemUnknown: true,
        text: 6,
        tools: 0,
        calls: 0,
        pruned: 0,
        at: 1
      }
    })
    assert.deepStrictEqual(panelLines(first, main)[1], { text: "Context: not known yet", tone: "muted" })
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
  it("opens on what the sidebar shows, for terminals too narrow for it: context, pruned, cost", () => {
    const { lines } = dialogModel(
      status({ cost: { profile: "openai", saved: 12_000, rebuilt: 0, reRead: 7_100 } }),
      { subAgent: false, reported: 15_400 }
    )
    assert.deepStrictEqual(texts(lines).slice(0, 4), [
      "Context       15,400 tokens, 8% of 200k",
      "Pruned        3 calls, ~3.1k tokens out of every request",
      "Cost          ~4.9k saved in input tokens (openai pricing, estimated)",
      "              pruned tokens ~12k, less masked files read again ~7.1k"
    ])
  })

  it("names the config's problems, with their file, until they are fixed", () => {
    const { lines } = dialogModel(
      status({ problems: [{ file: "/p/.opencode/dcp.jsonc", message: "strategies.nonsense: unknown key" }] }),
      main
    )
    assert.deepStrictEqual(lines.slice(2, 4), [
      { text: "Config        strategies.nonsense: unknown key (.opencode/dcp.jsonc; until", tone: "warning" },
      { text: "              fixed)", tone: "warning" }
    ])
  })

  it("breaks the context down as /dcp context does: bars of one whole, what was sent plus what pruning left out", () => {
    const model = texts(dialogModel(status(), main).lines)
    const at = model.findIndex((line) => line.startsWith("Next request:"))
    assert.deepStrictEqual(model.slice(at), [
      "Next request: ~12k tokens, 6% of a 200k window (estimated; the provider counts",
      "it with its reply).",
      "",
      "System        ███░░░░░░░░░░░░░░░░░░░░░  12%   ~1.8k",
      "Conversation  ████░░░░░░░░░░░░░░░░░░░░  17%   ~2.6k",
      "Tools (9)     ████████████░░░░░░░░░░░░  52%     ~8k",
      "Pruned        █████░░░░░░░░░░░░░░░░░░░  20%   ~3.1k",
      "              Without pruning: ~16k tokens (estimated)."
    ])
  })

  it("with the provider's figure, what it counted beyond the estimated content is Other", () => {
    const model = texts(dialogModel(status(), { subAgent: false, reported: 15_400 }).lines)
    const at = model.findIndex((line) => line.startsWith("Context: "))
    assert.deepStrictEqual(model.slice(at), [
      "Context: 15,400 tokens, 8% of a 200k window (reported by the provider).",
      "",
      "System        ██░░░░░░░░░░░░░░░░░░░░░░  10%   ~1.8k",
      "Conversation  ███░░░░░░░░░░░░░░░░░░░░░  14%   ~2.6k",
      "Tools (9)     ██████████░░░░░░░░░░░░░░  43%     ~8k",
      "Other         ████░░░░░░░░░░░░░░░░░░░░  16%     ~3k",
      "Pruned        ████░░░░░░░░░░░░░░░░░░░░  17%   ~3.1k",
      "              Without pruning: ~19k tokens (estimated).",
      "              Other: tool definitions and the provider's own framing."
    ])
  })

  it("the system prompt not known yet says so, as /dcp context does, rather than showing 0", () => {
    const base = status()
    const context = base._tag === "ok" ? { ...base.status.context!, system: 0, systemUnknown: true } : undefined
    const model = texts(dialogModel(status({ context: context! }), { subAgent: false, reported: 15_400 }).lines)
    assert.include(model, "System        not known until this process sends a request")
    assert.include(
      model.join("\n"),
      "              Other: tool definitions and the provider's own framing, and the\n                     system prompt until it is known."
    )
  })

  it("shows the folds, what waits, and what was pruned in the session by reason", () => {
    const { lines } = dialogModel(
      status({
        folded: { turns: 1, calls: 4, tokens: 111 },
        pending: { calls: 2, tokens: 1_500, reason: "warm cache", expiresAt: 5_000 }
      }),
      { ...main, now: 1_000 }
    )
    assert.deepStrictEqual(texts(lines).slice(2, 5), [
      "Folded        1 old turn (4 of those calls sent as one digest), ~111 of those",
      "              tokens",
      "Pending       2 calls, ~1.5k tokens, waiting: warm cache"
    ])
  })

  it("once the prompt cache has gone cold, the waiting reason has expired", () => {
    const { lines } = dialogModel(
      status({ pending: { calls: 2, tokens: 1_500, reason: "warm cache", expiresAt: 5_000 } }),
      { ...main, now: 6_000 }
    )
    assert.include(
      texts(lines).join("\n"),
      "Pending       2 calls, ~1.5k tokens: the cache has gone cold, they apply with\n              the next request"
    )
  })

  it("after everything was restored, says none is pruned now, and the session's prunes stay counted", () => {
    const { lines } = dialogModel(status({ pruned: { calls: 0, tokens: 0 }, recent: [], restored: 3 }), main)
    assert.deepStrictEqual(texts(lines).slice(1, 3), [
      "Pruned        none now (restored)",
      "This session  5 calls, ~4k tokens pruned (duplicate 3, swept 2)"
    ])
  })

  it("offers sweep, restore all, and every call in effect to restore, with what it takes out", () => {
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
      {
        args: "restore 5",
        title: "5  read src/lib.ts",
        description: "duplicate",
        footer: "~1.1k",
        category: "Restore"
      },
      { args: "restore 4", title: "4  bash npm test", description: "swept", footer: "~800", category: "Restore" }
    ])
  })

  it("lists a call only its turn's fold takes out as folded, and a pruned call in a folded turn as both", () => {
    const descriptions = dialogModel(
      status({
        recent: [
          { id: 4, tool: "bash", target: "echo ok", tokens: 28, reason: "fold", folded: true },
          { id: 3, tool: "read", target: "src/c.ts", tokens: 843, reason: "staleOutputs", folded: true }
        ]
      }),
      main
    ).actions.slice(2).map((action) => [action.title, action.description, action.footer])
    assert.deepStrictEqual(descriptions, [
      ["4  bash echo ok", "folded", "~28"],
      ["3  read src/c.ts", "stale output, folded", "~843"]
    ])
  })

  it("says when the list holds only the newest calls, and how to restore any other", () => {
    const { lines } = dialogModel(status({ pruned: { calls: 250, tokens: 90_000 } }), main)
    assert.strictEqual(
      texts(lines).at(-1),
      "The list holds the 3 newest of the 250 calls; /dcp restore <id> restores any."
    )
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

describe("the dialog's height", () => {
  const actions = (calls: number): Array<Action> => [
    { args: "sweep", title: "Sweep", description: "", category: "Prune" },
    ...Array.from({ length: calls }, (_, i) => ({
      args: `restore ${i + 1}`,
      title: `${i + 1}`,
      description: "",
      category: "Restore"
    }))
  ]

  it("leaves its lines the rows OpenCode's dialog and its list do not take, at least the head's three", () => {
    // 24 rows: the dialog starts at row 7; the list of 12 calls takes 6 rows and 6 more for its frame.
    assert.deepStrictEqual([24, 30, 40, 48].map((rows) => dialogLineRows(rows, actions(12))), [3, 4, 7, 11])
  })

  it("a short list leaves more rows to the lines", () => {
    assert.isAbove(dialogLineRows(48, actions(1)), dialogLineRows(48, actions(12)))
  })

  it("without choices, the lines take what the dialog leaves", () => {
    assert.strictEqual(dialogLineRows(24, []), 15)
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
