import { describe, expect, it } from "vitest"
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
    expect(note(pruned, "off")).toBeUndefined()
  })

  it("says nothing when nothing was pruned", () => {
    expect(note([], "detailed")).toBeUndefined()
  })

  it("in minimal mode, gives one line with the tokens saved now, in the session, and why", () => {
    expect(note(pruned, "minimal")).toBe(
      "Context pruned: ~8k tokens from 4 calls (2 duplicate, 1 superseded write, 1 failed call input); ~52k saved in this session."
    )
  })

  it("says call, not calls, for a single call", () => {
    expect(note(extracted, "minimal")).toMatch(/from 1 call \(1 extracted\)/)
  })

  it("in detailed mode, adds one line per call with its ID, tool, argument, reason and size", () => {
    const lines = note(pruned, "detailed")!.split("\n")
    expect(lines[0]).toBe(note(pruned, "minimal"))
    expect(lines.slice(1)).toEqual([
      "  3  read src/config.ts  duplicate, ~4.2k",
      "  5  read src/app.ts  duplicate, ~1.3k",
      "  7  write src/app.ts  superseded write, ~2.5k",
      "  9  mystery  failed call input, ~40"
    ])
  })

  it("shows paths as given, which are already relative to the project", () => {
    expect(note(pruned, "detailed")).toContain(" read src/config.ts ")
    expect(note(pruned, "detailed")).not.toContain("/root/")
  })

  it("adds the distilled text under its call when asked to", () => {
    expect(note(extracted, "detailed", true)!.split("\n").slice(1)).toEqual([
      "  4  bash npm test  extracted, ~900",
      "      ↳ 3 tests fail in auth.test.ts"
    ])
  })

  it("leaves the distilled text out unless asked to", () => {
    expect(note(extracted, "detailed", false)).not.toContain("3 tests fail")
  })

  it("leaves the distilled text out of the minimal line", () => {
    expect(note(extracted, "minimal", true)).not.toContain("3 tests fail")
  })
})
