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

  it("puts the distilled text under the tool, after IDs of any width", () => {
    assert.deepStrictEqual(
      note([{ ...extracted[0]!, id: 12 }, { ...extracted[0]!, id: 4 }], "detailed", true)!.split("\n").slice(1),
      [
        "  12  bash npm test  extracted, ~900",
        "       ↳ 3 tests fail in auth.test.ts",
        "   4  bash npm test  extracted, ~900",
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
})
