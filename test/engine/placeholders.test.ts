import { assert, describe, it } from "vitest"
import {
  diagnosticsPlaceholder,
  formatTokens,
  idOnlyHint,
  inputPlaceholder,
  linesShown,
  outputPlaceholder,
  recallToolHint,
  targetOf,
  targetTokens
} from "../../src/engine/placeholders.ts"
import { addFile, call, patchText, updateFile, worktree } from "./support.ts"

const read = () => call({ tool: "read", input: { filePath: `${worktree}/src/app.ts` }, outputTokens: 4200 })

describe("formatTokens", () => {
  it("shows small counts exactly and large ones rounded, with a tilde", () => {
    assert.strictEqual(formatTokens(0), "~0")
    assert.strictEqual(formatTokens(850), "~850")
    assert.strictEqual(formatTokens(1000), "~1k")
    assert.strictEqual(formatTokens(4200), "~4.2k")
    assert.strictEqual(formatTokens(12_400), "~12k")
    assert.strictEqual(formatTokens(1_300_000), "~1.3M")
  })

  it("switches unit where rounding would carry into the next one", () => {
    assert.strictEqual(formatTokens(9_990), "~10k")
    assert.strictEqual(formatTokens(999_400), "~999k")
    assert.strictEqual(formatTokens(999_700), "~1M")
  })
})

describe("outputPlaceholder", () => {
  const grep = call({ tool: "grep", input: { pattern: "TODO" }, outputTokens: 900 })

  it("gives the stable ID and nothing else; the call itself still shows its tool and arguments", () => {
    assert.strictEqual(outputPlaceholder(grep, "discard", 17, idOnlyHint), "[pruned; id 17]")
  })

  it("points to the recall tool when it is enabled", () => {
    assert.strictEqual(outputPlaceholder(grep, "discard", 17, recallToolHint), "[pruned; recall 17]")
  })

  it("says why when the reason matters to the model", () => {
    assert.strictEqual(outputPlaceholder(grep, "deduplication", 3, idOnlyHint), "[pruned duplicate; id 3]")
    assert.strictEqual(outputPlaceholder(grep, "extract", 3, idOnlyHint), "[pruned after extract; id 3]")
  })

  it("says which file and lines a read held", () => {
    const held = call({ tool: "read", input: { filePath: `${worktree}/src/app.ts` }, lines: [1, 240] })
    assert.strictEqual(
      outputPlaceholder(held, "staleOutputs", 17, recallToolHint),
      "[pruned: src/app.ts lines 1-240; recall 17]"
    )
    assert.strictEqual(
      outputPlaceholder(held, "deduplication", 17, recallToolHint),
      "[pruned duplicate: src/app.ts lines 1-240; recall 17]"
    )
  })

  it("names a read of one line by that line", () => {
    const one = call({ tool: "read", input: { filePath: "src/app.ts", offset: 40, limit: 1 }, lines: [40, 40] })
    assert.strictEqual(outputPlaceholder(one, "discard", 5, idOnlyHint), "[pruned: src/app.ts line 40; id 5]")
  })

  it("says nothing more of a read whose output showed no numbered lines", () => {
    assert.strictEqual(outputPlaceholder(read(), "discard", 17, recallToolHint), "[pruned; recall 17]")
  })

  it("points a repeat to the earlier copy of what it sent", () => {
    const held = call({ tool: "read", input: { filePath: "src/app.ts" }, lines: [1, 240] })
    assert.strictEqual(
      outputPlaceholder(held, "repeat", 9, recallToolHint, { id: 4, kind: "same" }),
      "[same output as id 4; recall 9]"
    )
    assert.strictEqual(
      outputPlaceholder(held, "repeat", 9, recallToolHint, { id: 4, kind: "contained" }),
      "[these lines are unchanged in the output of id 4; recall 9]"
    )
    assert.strictEqual(
      outputPlaceholder(held, "repeat", 9, recallToolHint, { id: 4, kind: "written" }),
      "[the same content as the earlier write of this file; recall 9]"
    )
    assert.strictEqual(
      outputPlaceholder(grep, "repeat", 9, recallToolHint, { id: 9, kind: "input" }),
      "[the same list as this call's input; recall 9]"
    )
  })

  it("is a plain prune of a repeat that points at no copy, with what it held", () => {
    const held = call({ tool: "read", input: { filePath: "src/app.ts" }, lines: [1, 240] })
    assert.strictEqual(
      outputPlaceholder(held, "repeat", 9, recallToolHint),
      "[pruned: src/app.ts lines 1-240; recall 9]"
    )
  })

  it("is byte-identical for the same prune on every request", () => {
    const first = outputPlaceholder(grep, "deduplication", 17, idOnlyHint)
    const again = outputPlaceholder(grep, "deduplication", 17, idOnlyHint)
    assert.strictEqual(again, first)
  })

  it("is much shorter than what it replaces", () => {
    assert.isBelow(outputPlaceholder(grep, "discard", 17, idOnlyHint).length, 30)
  })
})

describe("linesShown", () => {
  it("reads the lines of OpenCode's read output, numbered `N: `, from its offset", () => {
    const output = [
      "<path>/srv/app/src/a.ts</path>",
      "<type>file</type>",
      "<content>",
      "40: export const a = 1",
      "41: ",
      "42: export const b = 2",
      "",
      "(Showing lines 40-42 of 90. Use offset=43 to continue.)",
      "</content>"
    ].join("\n")
    assert.deepStrictEqual(linesShown(output), [40, 42])
  })

  it("reads `cat -n` and Claude Code's numbering", () => {
    assert.deepStrictEqual(linesShown("Here's the result of running `cat -n` on a.py:\n     1\timport os\n     2\t"), [
      1,
      2
    ])
    assert.deepStrictEqual(linesShown("   100→\t}\n   101→\n   102→\tstrat := GetStrategy()\n\n<system-reminder>"), [
      100,
      102
    ])
  })

  it("stops at the first gap in the numbering", () => {
    assert.deepStrictEqual(linesShown("1: a\n2: b\n9: c"), [1, 2])
  })

  it("finds nothing in an output without numbered lines", () => {
    assert.isUndefined(linesShown("<path>/srv/app/src</path>\n<type>directory</type>\n<entries>\na.ts\n</entries>"))
    assert.isUndefined(linesShown(""))
  })
})

describe("inputPlaceholder", () => {
  const write = () =>
    call({ tool: "write", input: { filePath: "src/a.ts", content: "x" }, inputTokens: { filePath: 3, content: 2500 } })

  it("names the input and the ID, and says the file was read again", () => {
    assert.strictEqual(
      inputPlaceholder(write(), "supersedeWrites", "content", 9, idOnlyHint),
      "[pruned content; the file was read again later; id 9]"
    )
  })

  it("says the files were read again, for a patch of several files", () => {
    const patch = call({
      tool: "apply_patch",
      input: { patchText: patchText(updateFile("src/a.ts"), addFile("src/b.ts")) },
      inputTokens: { patchText: 800 }
    })
    assert.strictEqual(
      inputPlaceholder(patch, "supersedeWrites", "patchText", 4, idOnlyHint),
      "[pruned patchText; the files were read again later; id 4]"
    )
  })

  it("says the input belonged to a failed call", () => {
    const failed = call({ tool: "bash", input: { command: "x" }, inputTokens: { command: 40 }, error: "exit 1" })
    assert.strictEqual(
      inputPlaceholder(failed, "purgeErrors", "command", 2, idOnlyHint),
      "[pruned command of a failed call; id 2]"
    )
  })

  it("gives no size: the same input pruned is the same text however large it was", () => {
    const sized = (content: number) =>
      call({ tool: "write", input: { filePath: "src/a.ts", content: "x" }, inputTokens: { filePath: 3, content } })
    assert.strictEqual(
      inputPlaceholder(sized(40), "supersedeWrites", "content", 9, idOnlyHint),
      inputPlaceholder(sized(40_000), "supersedeWrites", "content", 9, idOnlyHint)
    )
  })
})

describe("diagnosticsPlaceholder", () => {
  it("says what became of a change's errors and how to get them back, as its content's placeholders do", () => {
    const edit = call({ tool: "edit", input: { filePath: "a", oldString: "x", newString: "y" }, diagnosticsTokens: 90 })
    assert.strictEqual(
      diagnosticsPlaceholder(edit, "staleOutputs", 4, recallToolHint),
      "[pruned LSP errors of an old change; recall 4]"
    )
    assert.strictEqual(
      diagnosticsPlaceholder(edit, "supersedeWrites", 4, recallToolHint),
      "[pruned LSP errors; the file was read again later; recall 4]"
    )
  })
})

describe("targetOf", () => {
  it("targets the output of a completed call", () => {
    assert.deepStrictEqual(targetOf(read(), "discard"), { kind: "output" })
    assert.deepStrictEqual(targetOf(read(), "deduplication"), { kind: "output" })
  })

  it("targets the large string inputs of a failed call, not the small ones", () => {
    const failed = call({
      tool: "bash",
      input: { command: "x", description: "y" },
      inputTokens: { command: 300, description: 5 },
      error: "exit 1"
    })
    assert.deepStrictEqual(targetOf(failed, "purgeErrors"), { kind: "inputs", keys: ["command"] })
  })

  it("has nothing to target in a failed call with small inputs only", () => {
    assert.isUndefined(targetOf(call({ tool: "bash", input: { command: "ls" }, error: "exit 1" }), "purgeErrors"))
  })

  it("targets the content inputs of a superseded write or edit", () => {
    const write = call({ tool: "write", input: { filePath: "a", content: "body" } })
    const edit = call({ tool: "edit", input: { filePath: "a", oldString: "x", newString: "y", replaceAll: true } })
    assert.deepStrictEqual(targetOf(write, "supersedeWrites"), { kind: "inputs", keys: ["content"] })
    assert.deepStrictEqual(targetOf(edit, "supersedeWrites"), { kind: "inputs", keys: ["oldString", "newString"] })
  })

  it("targets the language server's errors in a file change's output with its content", () => {
    const edit = call({ tool: "edit", input: { filePath: "a", oldString: "x", newString: "y" }, diagnosticsTokens: 90 })
    assert.deepStrictEqual(targetOf(edit, "staleOutputs"), {
      kind: "inputs",
      keys: ["oldString", "newString"],
      diagnostics: true
    })
    assert.deepStrictEqual(targetOf(edit, "supersedeWrites"), {
      kind: "inputs",
      keys: ["oldString", "newString"],
      diagnostics: true
    })
  })

  it("targets the questions of a question call, so the answers in its output stay", () => {
    const question = call({ tool: "question", input: { questions: [{ question: "Which?" }] } })
    assert.deepStrictEqual(targetOf(question, "discard"), { kind: "inputs", keys: ["questions"] })
  })

  it("has nothing to target in an unfinished call, a non-text output or one OpenCode already cleared", () => {
    assert.isUndefined(targetOf(call({ tool: "read", input: {}, status: "running" }), "discard"))
    assert.isUndefined(targetOf(call({ tool: "read", input: {}, status: "pending" }), "discard"))
    assert.isUndefined(targetOf(call({ tool: "read", input: {}, hasTextOutput: false }), "discard"))
    assert.isUndefined(targetOf(call({ tool: "read", input: {}, compacted: true }), "discard"))
  })
})

describe("targetTokens", () => {
  it("is the output's tokens for an output target", () => {
    assert.strictEqual(targetTokens(read(), { kind: "output" }), 4200)
  })

  it("adds up the tokens of the targeted inputs", () => {
    const edit = call({
      tool: "edit",
      input: { filePath: "a", oldString: "x", newString: "y" },
      inputTokens: { filePath: 1, oldString: 30, newString: 40 }
    })
    assert.strictEqual(targetTokens(edit, { kind: "inputs", keys: ["oldString", "newString"] }), 70)
  })

  it("adds the language server's errors when the target has them", () => {
    const edit = call({
      tool: "edit",
      input: { filePath: "a", oldString: "x", newString: "y" },
      inputTokens: { filePath: 1, oldString: 30, newString: 40 },
      diagnosticsTokens: 90
    })
    assert.strictEqual(targetTokens(edit, { kind: "inputs", keys: ["oldString", "newString"], diagnostics: true }), 160)
  })
})
