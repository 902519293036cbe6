import fc from "fast-check"
import { assert, describe, it } from "vitest"
import { formatContext, formatHelp, formatStats } from "../../src/commands/format.ts"
import { parseCommand } from "../../src/commands/parse.ts"
import { formatNote, layoutNote } from "../../src/engine/notes.ts"
import { reasonName } from "../../src/engine/reasons.ts"
import { reportNote } from "../../src/services/Config.ts"

/** What every note starts with, and the columns its lines keep within: the narrowest text area measured below. */
const notePrefix = "DCP · "
const noteWidth = 72

/**
 * The width of a message's text in OpenCode 1.18.33's terminal UI, measured under tmux with a note of one long word
 * (where it broke): a note line longer than this is wrapped by the UI, and the rest starts at the message's left
 * edge, indentation lost. At 121 columns the sidebar opens and leaves the narrowest area.
 */
const messageWidth: ReadonlyArray<readonly [string, number]> = [
  ["an 80-column terminal", 73],
  ["a 120-column terminal", 113],
  ["a 121-column terminal (sidebar open)", 72]
]

/** Columns a line takes on screen: every character the notes use is one column wide. */
const columns = (line: string) => [...line].length

const now = 1_700_000_600_000
const longPath = "src/components/dashboard/widgets/charts/time-series/interactive-legend-with-tooltips.tsx"

/** Notes as the user gets them, with the longest lines each kind of note can have. */
const notes: ReadonlyArray<readonly [string, string]> = [
  ["/dcp (help)", formatHelp()],
  ["an unknown subcommand", (parseCommand("frobnicate") as { problem: string }).problem],
  ["a bad sweep count", (parseCommand("sweep 2.5") as { problem: string }).problem],
  ["a restore without an id", (parseCommand("restore") as { problem: string }).problem],
  [
    "/dcp stats",
    formatStats({
      session: {
        calls: 48,
        tokens: 123_400,
        applications: { count: 12, cold: 3, rebuiltTokens: 460_000 },
        cost: { profile: "anthropic-1h", requests: 400, saved: 2_400_000, rebuilt: 3_100_000, reReads: 0, reRead: 0 },
        compactions: { count: 2, last: { at: now - 60 * 60_000, tokens: 52_103, threshold: 50_400 } },
        byReason: {
          deduplication: { calls: 13, tokens: 13_000 },
          staleOutputs: { calls: 18, tokens: 32_000 },
          supersedeWrites: { calls: 15, tokens: 7000 },
          purgeErrors: { calls: 1, tokens: 170 },
          discard: { calls: 1, tokens: 900 }
        },
        byTool: {
          read: { calls: 30, tokens: 90_000 },
          bash: { calls: 10, tokens: 20_000 },
          webfetch: { calls: 8, tokens: 13_400 }
        },
        lastPrune: { at: now - 5 * 60_000, reason: "staleOutputs", calls: 6, tokens: 8400 }
      },
      lifetime: {
        sessions: 70,
        calls: 1200,
        tokens: 3_100_000,
        byReason: {
          deduplication: { calls: 600, tokens: 1_500_000 },
          staleOutputs: { calls: 500, tokens: 1_400_000 },
          purgeErrors: { calls: 100, tokens: 200_000 }
        }
      },
      now,
      cache: { requests: 400, read: 12_000_000, write: 900_000, uncached: 150_000 },
      figures: {
        inEffect: { calls: 300, tokens: 900_000 },
        folded: { turns: 12, calls: 400, tokens: 8_000 },
        queued: { calls: 12, tokens: 31_000 },
        waiting: { calls: 140, tokens: 412_000, why: { reason: "warm-cache", paysBackAfter: 11.2, horizon: 7.4 } }
      },
      ttlSeconds: 300,
      pressure: 0.8,
      problems: [{
        file: "/home/someone/project/.opencode/dcp.jsonc",
        message: `pruneNotification: expected "off", "minimal" or "detailed", found the string "loud"`
      }],
      reasonName
    })
  ],
  [
    "/dcp context",
    formatContext({
      context: {
        system: 0,
        systemUnknown: true,
        text: 12_000,
        tools: 140_000,
        calls: 412,
        pruned: 418_000,
        limit: 200_000,
        changed: true
      },
      reported: 171_234,
      figures: {
        inEffect: { calls: 230, tokens: 418_000 },
        folded: { turns: 12, calls: 400, tokens: 8_000 },
        queued: { calls: 12, tokens: 31_000 },
        waiting: { calls: 140, tokens: 412_000, why: { reason: "warm-cache", paysBackAfter: 11.2, horizon: 7.4 } },
        restored: 3
      },
      session: { calls: 900, tokens: 2_000_000 },
      cost: { profile: "anthropic-1h", saved: 2_400_000, rebuilt: 3_100_000, reRead: 12_000 },
      problems: [{
        file: "/home/someone/project/.opencode/dcp.jsonc",
        message: `pruneNotification: expected "off", "minimal" or "detailed", found the string "loud"`
      }],
      now,
      ttlSeconds: 300,
      pressure: 0.8
    })
  ],
  [
    "a detailed prune note",
    formatNote([
      { id: 1203, tool: "read", keyParameter: longPath, reason: "deduplication", tokens: 14_200 },
      {
        id: 1204,
        tool: "bash",
        keyParameter: "npm test -- --reporter verbose --run test/some/file.test.ts",
        reason: "staleOutputs",
        tokens: 3000
      },
      {
        id: 1205,
        tool: "bash",
        keyParameter: "npm run build",
        reason: "extract",
        tokens: 900,
        distillation:
          "The build fails in src/app.ts: the type of handler does not match the router's, since the router was upgraded."
      }
    ], { mode: "detailed", sessionTokens: 52_000, showDistillation: true })!
  ],
  [
    "a detailed note with a fold",
    formatNote([
      { id: 1203, tool: "read", keyParameter: longPath, reason: "staleOutputs", tokens: 14_200 },
      {
        id: 1203,
        tool: "read",
        keyParameter: longPath,
        reason: "fold",
        tokens: 480,
        folded: [
          { id: 1203, tool: "read", keyParameter: longPath, tokens: 200, pruned: true },
          {
            id: 1204,
            tool: "bash",
            keyParameter: "mkdir -p src/components/dashboard/widgets/charts",
            tokens: 140,
            pruned: false
          },
          { id: 1210, tool: "glob", keyParameter: "src/components/dashboard/*.tsx", tokens: 140, pruned: false }
        ]
      }
    ], { mode: "detailed", sessionTokens: 52_000, showDistillation: true })!
  ],
  [
    "a config problem",
    reportNote({
      file: "/home/someone/.config/opencode/dcp.jsonc",
      ignored: false,
      problems: [{
        path: "pruneNotification",
        expected: "",
        found: "",
        message: `pruneNotification: expected "off", "minimal" or "detailed", found the string "loud"`
      }]
    })
  ]
]

describe("notes in the terminal UI", () => {
  for (const [terminal, width] of messageWidth) {
    it(`in ${terminal}, no line of any note is wrapped by the UI (each fits ${width} columns)`, () => {
      for (const [what, text] of notes) {
        const long = layoutNote(text).split("\n").filter((line) => columns(line) > width)
        assert.deepStrictEqual(long, [], what)
      }
    })
  }

  it("every note starts with the plugin's prefix, so it is not taken for the user's own message", () => {
    for (const [what, text] of notes) assert.strictEqual(layoutNote(text).startsWith(notePrefix), true, what)
  })

  it("notes carry no Markdown syntax: the UI shows user messages as plain text", () => {
    for (const [what, text] of notes) assert.notMatch(layoutNote(text), /`|\*\*|^#/m, what)
  })

  it("no figure is hedged twice", () => {
    for (const [what, text] of notes) assert.notMatch(text, /\b(about|around|roughly) ~/, what)
  })

  it("a long line wraps under its own text: help entries under their summary, a call under its path", () => {
    const help = layoutNote(formatHelp()).split("\n")
    const stats = help.findIndex((line) => line.startsWith("  /dcp stats "))
    const summaryColumn = help[stats]!.indexOf("what was pruned")
    assert.match(help[stats + 1]!, new RegExp(`^ {${summaryColumn}}\\S`))

    const note = layoutNote(notes.find(([what]) => what === "a detailed prune note")![1]).split("\n")
    const call = note.findIndex((line) => line.startsWith("  1203  read "))
    assert.match(note[call + 1]!, /^ {8}\S/)
    assert.include(note.slice(call, call + 2).map((line) => line.trim()).join(""), longPath)
  })

  it("whatever the text, lines fit and nothing but spaces changes", () => {
    const text = fc.array(
      fc.oneof(
        fc.string({ unit: fc.constantFrom("a", "b", " ", "/", "-", "é", "█"), maxLength: 200 }),
        fc.string({ maxLength: 120 })
      ),
      { maxLength: 6 }
    ).map((lines) => lines.join("\n"))
    fc.assert(fc.property(text, (input) => {
      const output = layoutNote(input)
      for (const line of output.split("\n")) assert.isAtMost(columns(line), noteWidth)
      assert.strictEqual(output.replace(/\s/g, ""), `${notePrefix}${input}`.replace(/\s/g, ""))
    }))
  })
})
