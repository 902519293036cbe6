import { describe, expect, it } from "vitest"
import {
  formatTokens,
  idOnlyHint,
  inputPlaceholder,
  outputPlaceholder,
  recallToolHint,
  targetOf,
  targetTokens
} from "../../src/engine/placeholders.ts"
import { call, worktree } from "./support.ts"

const read = () => call({ tool: "read", input: { filePath: `${worktree}/src/app.ts` }, outputTokens: 4200 })

describe("formatTokens", () => {
  it("shows small counts exactly and large ones rounded, with a tilde", () => {
    expect(formatTokens(0)).toBe("~0")
    expect(formatTokens(850)).toBe("~850")
    expect(formatTokens(1000)).toBe("~1k")
    expect(formatTokens(4200)).toBe("~4.2k")
    expect(formatTokens(12_400)).toBe("~12k")
    expect(formatTokens(1_300_000)).toBe("~1.3M")
  })

  it("switches unit where rounding would carry into the next one", () => {
    expect(formatTokens(9_990)).toBe("~10k")
    expect(formatTokens(999_400)).toBe("~999k")
    expect(formatTokens(999_700)).toBe("~1M")
  })
})

describe("outputPlaceholder", () => {
  it("gives the original size and the stable ID; the call itself still shows its tool and arguments", () => {
    expect(outputPlaceholder(read(), "discard", 17, idOnlyHint)).toBe("[pruned, ~4.2k tokens; id 17]")
  })

  it("points to the recall tool when it is enabled", () => {
    expect(outputPlaceholder(read(), "discard", 17, recallToolHint)).toBe("[pruned, ~4.2k tokens; recall 17]")
  })

  it("says why when the reason matters to the model", () => {
    expect(outputPlaceholder(read(), "deduplication", 3, idOnlyHint)).toBe("[pruned duplicate, ~4.2k tokens; id 3]")
    expect(outputPlaceholder(read(), "extract", 3, idOnlyHint)).toBe("[pruned after extract, ~4.2k tokens; id 3]")
  })

  it("points a repeat to the earlier copy of what it sent", () => {
    expect(outputPlaceholder(read(), "repeat", 9, recallToolHint, { id: 4, kind: "same" })).toBe(
      "[same output as id 4, ~4.2k tokens; recall 9]"
    )
    expect(outputPlaceholder(read(), "repeat", 9, recallToolHint, { id: 4, kind: "contained" }))
      .toBe("[these lines are unchanged in the output of id 4, ~4.2k tokens; recall 9]")
    expect(outputPlaceholder(read(), "repeat", 9, recallToolHint, { id: 4, kind: "written" }))
      .toBe("[the same content as the earlier write of this file, ~4.2k tokens; recall 9]")
  })

  it("is byte-identical for the same call on every request", () => {
    const first = outputPlaceholder(read(), "deduplication", 17, idOnlyHint)
    const again = outputPlaceholder(read(), "deduplication", 17, idOnlyHint)
    expect(again).toBe(first)
  })

  it("is much shorter than what it replaces", () => {
    expect(outputPlaceholder(read(), "discard", 17, idOnlyHint).length).toBeLessThan(60)
  })
})

describe("inputPlaceholder", () => {
  const write = () =>
    call({ tool: "write", input: { filePath: "src/a.ts", content: "x" }, inputTokens: { filePath: 3, content: 2500 } })

  it("names the input, its size and the ID, and says the file was read again", () => {
    expect(inputPlaceholder(write(), "supersedeWrites", "content", 9, idOnlyHint))
      .toBe("[pruned content: ~2.5k tokens; the file was read again later; id 9]")
  })

  it("says the input belonged to a failed call", () => {
    const failed = call({ tool: "bash", input: { command: "x" }, inputTokens: { command: 40 }, error: "exit 1" })
    expect(inputPlaceholder(failed, "purgeErrors", "command", 2, idOnlyHint))
      .toBe("[pruned command of a failed call: ~40 tokens; id 2]")
  })

  it("estimates the size of an input that is not a string", () => {
    const question = call({
      tool: "question",
      input: { questions: [{ question: "a".repeat(390) }] },
      inputTokens: {}
    })
    // 407 characters of JSON at about four characters a token
    expect(inputPlaceholder(question, "discard", "questions", 5, idOnlyHint)).toBe(
      "[pruned questions: ~102 tokens; id 5]"
    )
  })
})

describe("targetOf", () => {
  it("targets the output of a completed call", () => {
    expect(targetOf(read(), "discard")).toEqual({ kind: "output" })
    expect(targetOf(read(), "deduplication")).toEqual({ kind: "output" })
  })

  it("targets the large string inputs of a failed call, not the small ones", () => {
    const failed = call({
      tool: "bash",
      input: { command: "x", description: "y" },
      inputTokens: { command: 300, description: 5 },
      error: "exit 1"
    })
    expect(targetOf(failed, "purgeErrors")).toEqual({ kind: "inputs", keys: ["command"] })
  })

  it("has nothing to target in a failed call with small inputs only", () => {
    expect(targetOf(call({ tool: "bash", input: { command: "ls" }, error: "exit 1" }), "purgeErrors")).toBeUndefined()
  })

  it("targets the content inputs of a superseded write or edit", () => {
    const write = call({ tool: "write", input: { filePath: "a", content: "body" } })
    const edit = call({ tool: "edit", input: { filePath: "a", oldString: "x", newString: "y", replaceAll: true } })
    expect(targetOf(write, "supersedeWrites")).toEqual({ kind: "inputs", keys: ["content"] })
    expect(targetOf(edit, "supersedeWrites")).toEqual({ kind: "inputs", keys: ["oldString", "newString"] })
  })

  it("targets the questions of a question call, so the answers in its output stay", () => {
    const question = call({ tool: "question", input: { questions: [{ question: "Which?" }] } })
    expect(targetOf(question, "discard")).toEqual({ kind: "inputs", keys: ["questions"] })
  })

  it("has nothing to target in an unfinished call, a non-text output or one OpenCode already cleared", () => {
    expect(targetOf(call({ tool: "read", input: {}, status: "running" }), "discard")).toBeUndefined()
    expect(targetOf(call({ tool: "read", input: {}, status: "pending" }), "discard")).toBeUndefined()
    expect(targetOf(call({ tool: "read", input: {}, hasTextOutput: false }), "discard")).toBeUndefined()
    expect(targetOf(call({ tool: "read", input: {}, compacted: true }), "discard")).toBeUndefined()
  })
})

describe("targetTokens", () => {
  it("is the output's tokens for an output target", () => {
    expect(targetTokens(read(), { kind: "output" })).toBe(4200)
  })

  it("adds up the tokens of the targeted inputs", () => {
    const edit = call({
      tool: "edit",
      input: { filePath: "a", oldString: "x", newString: "y" },
      inputTokens: { filePath: 1, oldString: 30, newString: 40 }
    })
    expect(targetTokens(edit, { kind: "inputs", keys: ["oldString", "newString"] })).toBe(70)
  })
})
