import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { idOnlyHint, recallToolHint } from "../../src/engine/placeholders.ts"
import type { Reason } from "../../src/engine/reasons.ts"
import { Tokenizer } from "../../src/services/Tokenizer.ts"
import type { ToolIndex } from "../../src/engine/calls.ts"
import { ToolCache } from "../../src/services/ToolCache.ts"
import { assistant, fresh, lines, type Msg, sessionID, text, tool, toolPart, user } from "../support/history.ts"
import {
  type AppliedPrune,
  applyPrunes,
  automaticCandidates,
  indexOf,
  protect,
  realIndexLayer,
  strategies,
  worktree
} from "./support.ts"

const file = `${worktree}/src/app.ts`
const longCommand = `node -e '${"console.log(1);".repeat(40)}'`
const questions = [{
  question: "Which database should I use?",
  header: "Database",
  options: [{ label: "Postgres", description: "relational" }, { label: "SQLite", description: "embedded" }]
}]

/** One of each kind of call a prune can touch. */
const session = (): Array<Msg> => {
  const messages = [
    user("refactor the app"),
    assistant([
      text("Reading first."),
      tool({ tool: "read", callID: "r1", input: { filePath: file }, output: lines(200) }),
      tool({ tool: "bash", callID: "b1", input: { command: longCommand, description: "run" }, error: "SyntaxError: x" })
    ]),
    assistant([
      tool({
        tool: "write",
        callID: "w1",
        input: { filePath: file, content: lines(100) },
        output: "Wrote file successfully."
      }),
      tool({
        tool: "edit",
        callID: "e1",
        input: { filePath: file, oldString: lines(10), newString: lines(10, "new"), replaceAll: false },
        output: "Edit applied successfully."
      }),
      tool({ tool: "read", callID: "r2", input: { filePath: file }, output: lines(120) })
    ]),
    assistant([
      tool({
        tool: "question",
        callID: "q1",
        input: { questions },
        output: 'User has answered your questions: "Which database should I use?"="Postgres".'
      }),
      tool({ tool: "webfetch", callID: "f1", input: { url: "https://example.com/logo" }, output: "Fetched image" })
    ])
  ]
  toolPart(messages, "q1").state.metadata = { answers: [["Postgres"]] }
  toolPart(messages, "f1").state.attachments = [{ type: "file", mime: "image/png", url: "data:image/png;base64,AAAA" }]
  return messages
}

const prunes = (index: ToolIndex, entries: ReadonlyArray<readonly [string, Reason, number]>): Array<AppliedPrune> =>
  entries.map(([callID, reason, id]) => ({ call: index.byCallId.get(callID)!, reason, id }))

/** Indexes a fresh copy of `session()` and applies `entries` to another fresh copy, as the transform does. */
const applied = (entries: ReadonlyArray<readonly [string, Reason, number]>) => {
  const original = session()
  const index = indexOf(fresh(original))
  const sent = fresh(original)
  const changed = applyPrunes(sent, prunes(index, entries), idOnlyHint)
  return { original, sent, changed, index }
}

/** Everything but content: what must never change. */
const structure = (messages: ReadonlyArray<Msg>) =>
  messages.map((message) => ({
    id: message.info.id,
    role: message.info.role,
    parts: message.parts.map((part) => ({
      id: part.id,
      type: part.type,
      callID: part.callID,
      tool: part.tool,
      status: (part.state as any)?.status
    }))
  }))

describe("applyPrunes", () => {
  it("replaces the output of a completed call with its placeholder and keeps the rest of its state", () => {
    const { original, sent } = applied([["r1", "discard", 7]])
    const before = toolPart(original, "r1").state
    const after = toolPart(sent, "r1").state
    assert.strictEqual(after.output, "[pruned; id 7]")
    assert.deepStrictEqual({ ...after, output: undefined }, { ...before, output: undefined })
  })

  it("replaces the output on the request's own state object, which OpenCode builds afresh per request", () => {
    const original = session()
    const sent = fresh(original)
    const index = indexOf(original)
    const given = toolPart(sent, "r1").state
    applyPrunes(sent, prunes(index, [["r1", "discard", 7]]), idOnlyHint)
    assert.strictEqual(toolPart(sent, "r1").state, given)
    assert.match(given.output, /^\[pruned; /)
    assert.notMatch(toolPart(original, "r1").state.output, /^\[pruned/)
  })

  it("writes a fresh input object and never mutates the one it was given (the index may hold it)", () => {
    const original = session()
    const sent = fresh(original)
    const index = indexOf(original)
    const givenState = toolPart(sent, "w1").state
    const givenInput = givenState.input
    const content = givenInput.content
    applyPrunes(sent, prunes(index, [["w1", "supersedeWrites", 3]]), idOnlyHint)
    assert.notStrictEqual(toolPart(sent, "w1").state.input, givenInput)
    assert.strictEqual(givenInput.content, content)
  })

  it("replaces the large inputs of a failed call and keeps its error text", () => {
    const { original, sent } = applied([["b1", "purgeErrors", 2]])
    const state = toolPart(sent, "b1").state
    assert.match(state.input.command, /^\[pruned command of a failed call; id 2\]$/)
    assert.strictEqual(state.input.description, "run")
    assert.strictEqual(state.error, "SyntaxError: x")
    assert.strictEqual(state.status, "error")
    assert.strictEqual(toolPart(original, "b1").state.input.command, longCommand)
  })

  it("replaces the content of a superseded write and keeps its path and result", () => {
    const { sent } = applied([["w1", "supersedeWrites", 3]])
    const state = toolPart(sent, "w1").state
    assert.match(state.input.content, /^\[pruned content; the file was read again later; id 3\]$/)
    assert.strictEqual(state.input.filePath, file)
    assert.strictEqual(state.output, "Wrote file successfully.")
  })

  it("replaces the old and new strings of a superseded edit and keeps its other inputs", () => {
    const { sent } = applied([["e1", "supersedeWrites", 4]])
    const input = toolPart(sent, "e1").state.input
    assert.match(input.oldString, /^\[pruned oldString; the file was read again later; id 4\]$/)
    assert.match(input.newString, /^\[pruned newString; the file was read again later; id 4\]$/)
    assert.strictEqual(input.filePath, file)
    assert.strictEqual(input.replaceAll, false)
    assert.strictEqual(toolPart(sent, "e1").state.output, "Edit applied successfully.")
  })

  it("replaces the questions of a question call and keeps the user's answers", () => {
    const { original, sent } = applied([["q1", "discard", 5]])
    const before = toolPart(original, "q1").state
    const after = toolPart(sent, "q1").state
    assert.match(after.input.questions, /^\[pruned questions; id 5\]$/)
    assert.strictEqual(after.output, before.output)
    assert.deepStrictEqual(after.metadata, { answers: [["Postgres"]] })
  })

  it("drops the attachments of a pruned output", () => {
    const { sent } = applied([["f1", "discard", 6]])
    const state = toolPart(sent, "f1").state
    assert.notProperty(state, "attachments")
    assert.strictEqual(state.output, "[pruned; id 6]")
  })

  it("never changes messages, parts, IDs, roles, tool names or call IDs", () => {
    const { original, sent, changed } = applied([
      ["r1", "deduplication", 1],
      ["b1", "purgeErrors", 2],
      ["w1", "supersedeWrites", 3],
      ["e1", "supersedeWrites", 4],
      ["q1", "discard", 5],
      ["f1", "extract", 6]
    ])
    assert.strictEqual(changed, 6)
    assert.deepStrictEqual(structure(sent), structure(original))
    assert.deepStrictEqual(sent.map((message) => message.info), original.map((message) => message.info))
  })

  it("leaves parts that were not pruned exactly as they came", () => {
    const { original, sent } = applied([["r1", "discard", 1]])
    assert.deepStrictEqual(toolPart(sent, "r2"), toolPart(original, "r2"))
    assert.deepStrictEqual(sent[1]!.parts[1], original[1]!.parts[1])
  })

  it("produces byte-identical messages for the same prunes on every request", () => {
    const entries = [["r1", "deduplication", 1], ["b1", "purgeErrors", 2], ["w1", "supersedeWrites", 3]] as const
    const original = session()
    const request = () => {
      const sent = fresh(original)
      applyPrunes(sent, prunes(indexOf(fresh(original)), entries), idOnlyHint)
      return JSON.stringify(sent)
    }
    const first = request()
    assert.strictEqual(request(), first)
    assert.notStrictEqual(first, JSON.stringify(original))
  })

  it("puts the recall hint it is given in the placeholders", () => {
    const original = session()
    const sent = fresh(original)
    applyPrunes(sent, prunes(indexOf(original), [["r1", "discard", 7]]), recallToolHint)
    assert.strictEqual(toolPart(sent, "r1").state.output, "[pruned; recall 7]")
  })

  it("leaves a part alone when another call sits at the recorded position", () => {
    const original = session()
    const index = indexOf(original)
    const moved = fresh(original)
    moved[1]!.parts.splice(1, 0, { id: "prt_inserted", type: "text", text: "inserted" })
    const changed = applyPrunes(moved, prunes(index, [["r1", "discard", 7], ["b1", "purgeErrors", 2]]), idOnlyHint)
    assert.strictEqual(changed, 0)
    assert.strictEqual(toolPart(moved, "r1").state.output, lines(200))
    assert.strictEqual(toolPart(moved, "b1").state.input.command, longCommand)
  })

  it("skips a prune whose message is no longer there", () => {
    const original = session()
    const index = indexOf(original)
    const shorter = fresh(original).slice(0, 2)
    assert.strictEqual(applyPrunes(shorter, prunes(index, [["q1", "discard", 5]]), idOnlyHint), 0)
  })

  it("skips a call with nothing to replace", () => {
    const messages = [
      user("go"),
      assistant([tool({ tool: "read", callID: "p1", input: { filePath: file }, status: "running" })]),
      assistant([tool({ tool: "mcp_x", callID: "j1", input: {}, output: { json: true } })])
    ]
    const index = indexOf(messages)
    const sent = fresh(messages)
    assert.strictEqual(applyPrunes(sent, prunes(index, [["p1", "discard", 1], ["j1", "discard", 2]]), idOnlyHint), 0)
    assert.deepStrictEqual(sent, messages)
  })

  it.effect("removes the written content from what is sent, not just the write's short result", () =>
    Effect.gen(function*() {
      const content = Array.from(
        { length: 300 },
        (_, i) => `export function handler${i}(request: Request): Response { return respond(request, ${i * 7}) }`
      ).join("\n")
      const messages = [
        user("write the handlers"),
        assistant([
          tool({ tool: "write", callID: "w1", input: { filePath: file, content }, output: "Wrote file successfully." })
        ]),
        assistant([tool({ tool: "read", callID: "r1", input: { filePath: file }, output: content })])
      ]
      const tokenizer = yield* Tokenizer
      const index = yield* (yield* ToolCache).sync(sessionID, messages)
      const candidates = automaticCandidates({
        calls: index.calls,
        pruned: new Set(),
        protection: protect({ currentTurn: index.turns }),
        strategies: strategies(),
        currentTurn: index.turns
      })
      assert.deepStrictEqual(candidates, [{ callID: "w1", reason: "supersedeWrites" }])

      const sent = fresh(messages)
      applyPrunes(sent, [{ call: index.byCallId.get("w1")!, reason: "supersedeWrites", id: 1 }], idOnlyHint)
      const part = toolPart(sent, "w1")
      assert.notInclude(JSON.stringify(part), "handler17(")
      assert.strictEqual(part.state.output, "Wrote file successfully.")

      // The content as it sits in the serialized part: JSON-escaped, newlines as `\n`.
      const contentTokens = yield* tokenizer.count(JSON.stringify(content))
      const before = yield* tokenizer.count(JSON.stringify(toolPart(messages, "w1")))
      const after = yield* tokenizer.count(JSON.stringify(part))
      assert.isAbove(index.byCallId.get("w1")!.inputTokens.content!, 3000)
      assert.approximately(before - after, contentTokens, contentTokens * 0.03)
      assert.isBelow(after, contentTokens / 20)
    }).pipe(Effect.provide(realIndexLayer)))
})
