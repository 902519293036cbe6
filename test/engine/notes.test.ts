import { assert, describe, it } from "vitest"
import { formatNote, type PrunedCall } from "../../src/engine/notes.ts"

const pruned: ReadonlyArray<PrunedCall> = [
  { id: 3, tool: "read", keyParameter: "src/config.ts", reason: "deduplication", tokens: 4200 },
  { id: 5, tool: "read", keyParameter: "src/app.ts", reason: "deduplication", tokens: 1300 },
  { id: 7, tool: "write", keyParameter: "src/app.ts", reason: "supersedeWrites", tokens: 2500 },
  { id: 9, tool: "mystery", keyParameter: "", reason: "purgeErrors", tokens: 40 }
]
const extracted: ReadonlyArray<PrunedCall> = [
  {
    id: 4,
    tool: "bash",
    keyParameter: "npm test",
    reason: "extract",
    tokens: 900,
    distillation: "3 tests fail in auth.test.ts"
  }
]

const note = (calls: ReadonlyArray<PrunedCall>, mode: "off" | "minimal" | "detailed", showDistillation = false) =>
  formatNote(calls, { mode, sessionTokens: 52_000, showDistillation })

describe("formatNote", () => {
  it("says nothing when notifications are off", () => {
    assert.isUndefined(note(pruned, "off"))
  })

  it("says nothing when nothing was pruned", () => {
    assert.isUndefined(note([], "detailed"))
  })

  it("in minimal mode, gives one line with the tokens saved now, in the session, and why", () => {
    assert.strictEqual(
      note(pruned, "minimal"),
      "Context pruned: ~8k tokens from 4 calls (2 duplicate, 1 superseded write, 1 failed call input); ~52k saved in this session."
    )
  })

  it("says call, not calls, for a single call", () => {
    assert.match(note(extracted, "minimal")!, /from 1 call \(1 extracted\)/)
  })

  it("in detailed mode, adds one line per call with its ID, tool, argument, reason and size", () => {
    const lines = note(pruned, "detailed")!.split("\n")
    assert.strictEqual(lines[0], note(pruned, "minimal"))
    assert.deepStrictEqual(lines.slice(1), [
      "  3  read src/config.ts  duplicate, ~4.2k",
      "  5  read src/app.ts  duplicate, ~1.3k",
      "  7  write src/app.ts  superseded write, ~2.5k",
      "  9  mystery  failed call input, ~40"
    ])
  })

  it("shows paths as given, which are already relative to the project", () => {
    assert.include(note(pruned, "detailed"), " read src/config.ts ")
    assert.notInclude(note(pruned, "detailed"), "/root/")
  })

  it("adds the distilled text under its call when asked to", () => {
    assert.deepStrictEqual(note(extracted, "detailed", true)!.split("\n").slice(1), [
      "  4  bash npm test  extracted, ~900",
      "      ↳ 3 tests fail in auth.test.ts"
    ])
  })

  it("right-aligns the IDs, so what follows them starts in one column", () => {
    const calls = [9, 10, 112].map((id) => ({ ...pruned[1]!, id }))
    assert.deepStrictEqual(note(calls, "detailed", true)!.split("\n").slice(1), [
      "    9  read src/app.ts  duplicate, ~1.3k",
      "   10  read src/app.ts  duplicate, ~1.3k",
      "  112  read src/app.ts  duplicate, ~1.3k"
    ])
  })

  it("puts the distilled text under the tool, after IDs of any width, the calls in the order of their IDs", () => {
    assert.deepStrictEqual(
      note([{ ...extracted[0]!, id: 12 }, { ...extracted[0]!, id: 4 }], "detailed", true)!.split("\n").slice(1),
      [
        "   4  bash npm test  extracted, ~900",
        "       ↳ 3 tests fail in auth.test.ts",
        "  12  bash npm test  extracted, ~900",
        "       ↳ 3 tests fail in auth.test.ts"
      ]
    )
  })

  it("leaves the distilled text out unless asked to", () => {
    assert.notInclude(note(extracted, "detailed", false), "3 tests fail")
  })

  it("leaves the distilled text out of the minimal line", () => {
    assert.notInclude(note(extracted, "minimal", true), "3 tests fail")
  })

  describe("a fold of an old turn", () => {
    /** Calls 1-3 read files and were masked as stale output; call 4's output was too small to prune. */
    const stale = [1, 2, 3].map((id): PrunedCall => ({
      id,
      tool: "read",
      keyParameter: `src/${"abc"[id - 1]}.ts`,
      reason: "staleOutputs",
      tokens: 3000
    }))
    const fold = (pruned: boolean): PrunedCall => ({
      id: 1,
      tool: "read",
      keyParameter: "src/a.ts",
      reason: "fold",
      tokens: 111,
      folded: [
        ...stale.map((call) => ({ id: call.id, tool: call.tool, keyParameter: call.keyParameter, tokens: 28, pruned })),
        { id: 4, tool: "bash", keyParameter: "echo ok", tokens: 27, pruned: false }
      ]
    })

    it("counts each call once: a pruned call under its prune's reason, a call only the fold takes out as folded", () => {
      assert.strictEqual(
        note([...stale, fold(true)], "minimal"),
        "Context pruned: ~9.1k tokens from 4 calls (3 stale output, 1 folded), 1 old turn folded; ~52k saved in this session."
      )
    })

    it("names every call, the fold's own calls with their share of it, and which calls the digest stands for", () => {
      assert.deepStrictEqual(note([...stale, fold(true)], "detailed")!.split("\n").slice(1), [
        "  1  read src/a.ts  stale output, folded, ~3k",
        "  2  read src/b.ts  stale output, folded, ~3k",
        "  3  read src/c.ts  stale output, folded, ~3k",
        "  4  bash echo ok  folded, ~27",
        "  old turn folded: 1-4 sent as one digest, ~111 of the tokens"
      ])
    })

    it("of calls pruned before, counts only what the fold alone takes out", () => {
      assert.strictEqual(
        note([fold(true)], "minimal"),
        "Context pruned: ~111 tokens from 1 call (1 folded), 1 old turn folded; ~52k saved in this session."
      )
      assert.strictEqual(
        note([{ ...fold(true), folded: fold(true).folded!.slice(0, 3) }], "minimal"),
        "Context pruned: ~111 tokens, 1 old turn folded; ~52k saved in this session."
      )
    })
  })
})
