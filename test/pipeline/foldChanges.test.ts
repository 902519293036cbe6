import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { digestHeader } from "../../src/engine/fold.ts"
import { checkFoldOrder, checkRequest, NumberLedger } from "../support/foldOracle.ts"
import {
  assistant,
  fresh,
  lines,
  type Msg,
  reasoning,
  sessionID,
  text,
  tool,
  toolPart,
  user
} from "../support/history.ts"
import { digestsOf, firstTurn, foldConfig, laterTurns } from "../support/foldTurns.ts"
import { build, type ToolCallSpec } from "../support/generate.ts"
import { requestsOf } from "../support/hostChanges.ts"
import { pipelineTest, send, stateOf, withoutTail } from "./helpers.ts"

/**
 * Folds computed from, and checked against, the request in hand (src/engine/fold.ts): the cases of histories that do
 * not only grow, each as it was found, and the order a folded turn reads in. Every request is checked by the oracle of
 * test/support/foldOracle.ts, which compares it with what the host handed the transform. Masking takes every output
 * but the newest at once, so a turn folds as soon as two newer ones follow it.
 */
const config = foldConfig

const history = () => [...firstTurn(), ...laterTurns()]

/** A generated history's completed call (test/support/generate.ts). */
const call = (tool: string, input: Record<string, unknown>, output: ToolCallSpec["output"]): ToolCallSpec => ({
  kind: "tool",
  tool,
  input,
  status: "completed",
  output,
  error: "",
  attachments: false
})

/** Sends `messages` and checks what went out against them; returns what went out, without the trailing note. */
const sendChecked = (messages: Array<Msg>, numbers: NumberLedger) =>
  Effect.gen(function*() {
    const before = structuredClone(messages)
    const after = yield* send(messages)
    checkRequest(before, after, numbers)
    checkFoldOrder(before, after)
    return withoutTail(after)
  })

/** `messages` with the tool part of `callID` moved to the head of the next message, before its step-start. */
const movedToNext = (messages: Array<Msg>, callID: string): Array<Msg> => {
  const copy = fresh(messages)
  const m = copy.findIndex((message) => message.parts.some((part) => part.callID === callID))
  const p = copy[m]!.parts.findIndex((part) => part.callID === callID)
  const [part] = copy[m]!.parts.splice(p, 1)
  copy[m + 1]!.parts.unshift({ ...part!, messageID: copy[m + 1]!.info.id })
  return copy
}

describe("folds under histories that do not only grow", () => {
  it.effect("a call ID that comes back with another tool is a new call: the digest names it, under a number of its own", () =>
    pipelineTest(
      Effect.gen(function*() {
        const numbers = new NumberLedger()
        // One request in which e1 is a test run, then the real history in which it is the edit.
        const bogus = firstTurn()
        bogus[2] = assistant([tool({ tool: "bash", callID: "e1", input: { command: "npm test" }, output: "ok" })])
        yield* sendChecked(fresh(bogus), numbers)
        const sent = yield* sendChecked(fresh(history()), numbers)
        assert.deepStrictEqual(digestsOf(sent), [
          `\n${digestHeader}\n#1 read src/a.ts\n#2 bash npm test -> exit 1\n#4 edit src/a.ts`
        ])
      }),
      config
    ))

  it.effect("a folded call's part moved to the next message for one request: that request folds it from where it is", () =>
    pipelineTest(
      Effect.gen(function*() {
        const numbers = new NumberLedger()
        yield* sendChecked(fresh(history()), numbers)
        const moved = yield* sendChecked(movedToNext(history(), "b1"), numbers)
        assert.deepStrictEqual(digestsOf(moved), [
          `\n${digestHeader}\n#1 read src/a.ts\n#2 bash npm test -> exit 1\n#3 edit src/a.ts`
        ])
        assert.throws(() => toolPart(moved, "b1"))
        const again = yield* sendChecked(fresh(history()), numbers)
        assert.deepStrictEqual(digestsOf(again), digestsOf(moved))
      }),
      config
    ))

  it.effect("a middle user message missing for one request: the digests list exactly the calls that left", () =>
    pipelineTest(
      Effect.gen(function*() {
        const numbers = new NumberLedger()
        // As the property test found it (test/pipeline/hostChanges.test.ts): a search in the first turn, an edit and a
        // read of the file in the second; the user's message opening the second is missing from one request, which
        // makes its calls part of the first turn there.
        const full = build({
          messages: [
            { kind: "user", text: "go on" },
            { kind: "assistant", parts: [], summary: false },
            { kind: "assistant", parts: [], summary: false },
            { kind: "assistant", parts: [call("grep", { pattern: "TODO" }, { seed: 0, lines: 109 })], summary: false },
            { kind: "user", text: "go on" },
            {
              kind: "assistant",
              parts: [
                call("edit", {
                  filePath: "src/app.ts",
                  oldString: { seed: 10, lines: 34 },
                  newString: { seed: 10, lines: 32 }
                }, ""),
                call("read", { filePath: "src/app.ts" }, "")
              ],
              summary: false
            },
            { kind: "user", text: "go on" },
            { kind: "user", text: "go on" }
          ]
        }, sessionID)
        for (let n = 1; n <= 6; n++) yield* sendChecked(fresh(full.slice(0, n)), numbers)
        yield* sendChecked(fresh(full.slice(0, 7).filter((_, i) => i !== 4)), numbers)
        yield* sendChecked(fresh(full), numbers)
      }),
      { ...config, strategies: { ...config.strategies, fold: { keepTurns: 1 } }, cache: { mode: "auto" } }
    ))

  it.effect("a message missing for one request changes nothing the session keeps: its calls come back as they were", () =>
    pipelineTest(
      Effect.gen(function*() {
        const numbers = new NumberLedger()
        const full = history()
        yield* sendChecked(fresh(full), numbers)
        const before = yield* stateOf(sessionID)
        yield* sendChecked(fresh(full.filter((message) => message.info.id !== "msg_a1")), numbers)
        const again = yield* sendChecked(fresh(full), numbers)
        const after = yield* stateOf(sessionID)
        assert.deepStrictEqual([after.ids, after.pruned, after.folds], [before.ids, before.pruned, before.folds])
        assert.deepStrictEqual(digestsOf(again), [
          `\n${digestHeader}\n#1 read src/a.ts\n#2 bash npm test -> exit 1\n#3 edit src/a.ts`
        ])
      }),
      config
    ))

  it.effect("a call back after a request without its message, with another tool, is a new call under a number of its own", () =>
    pipelineTest(
      Effect.gen(function*() {
        const numbers = new NumberLedger()
        const full = history()
        yield* sendChecked(fresh(full), numbers)
        yield* sendChecked(fresh(full.filter((message) => message.info.id !== "msg_a1")), numbers)
        const back = fresh(full)
        const b1 = toolPart(back, "b1")
        b1.tool = "grep"
        b1.state.input = { pattern: "TODO" }
        const sent = yield* sendChecked(back, numbers)
        assert.notInclude(digestsOf(sent).join("\n"), "#2 grep")
      }),
      config
    ))

  it.effect("a call back after the request that lacked it lost a compaction summary too is compared all the same", () =>
    pipelineTest(
      Effect.gen(function*() {
        const numbers = new NumberLedger()
        // As the property test found it: a write held by a summary message, sent as a read, then missing with the
        // summary, then back as the write, which the number the read got named.
        const history = build({
          messages: [
            { kind: "user", text: "go on" },
            { kind: "assistant", parts: [], summary: false },
            {
              kind: "assistant",
              parts: [call("write", { filePath: "src/app.ts", content: { seed: 10, lines: 1 } }, "")],
              summary: true
            },
            { kind: "assistant", parts: [], summary: false },
            {
              kind: "assistant",
              parts: [call("read", { filePath: "src/app.ts" }, { seed: 0, lines: 10 })],
              summary: false
            },
            { kind: "assistant", parts: [], summary: false },
            { kind: "user", text: "go on" }
          ]
        }, sessionID)
        const requests = requestsOf(history, [
          { grow: 1, change: undefined },
          { grow: 1, change: undefined },
          { grow: 1, change: undefined },
          { grow: 1, change: { kind: "drop", at: 0, user: false } },
          { grow: 1, change: { kind: "swap", at: 0, from: 1 } },
          { grow: 1, change: { kind: "drop", at: 1, user: false } },
          { grow: 1, change: { kind: "move", at: 0, beforeStep: false } }
        ])
        for (const request of requests) yield* sendChecked(request, numbers)
      }),
      { ...config, strategies: { ...config.strategies, fold: { keepTurns: 1 } }, cache: { mode: "immediate" } }
    ))

  it.effect("requests in reverse order, with a reused call ID and a message missing: each checked against itself", () =>
    pipelineTest(
      Effect.gen(function*() {
        const numbers = new NumberLedger()
        const more = [
          ...history(),
          assistant([text("All green.")], { id: "msg_a5" }),
          user("one more thing", { id: "msg_u4" }),
          assistant([tool({ tool: "read", callID: "r3", input: { filePath: "src/c.ts" }, output: lines(50, "c") })], {
            id: "msg_a6"
          })
        ]
        // The middle request of three, sent second: without msg_a3, and a search under b1, the ID of a folded test run.
        const middle = fresh(more.slice(0, 8)).filter((message) => message.info.id !== "msg_a3")
        const b1 = toolPart(middle, "b1")
        b1.tool = "grep"
        b1.state.input = { pattern: "TODO" }
        yield* sendChecked(fresh(more), numbers)
        const sent = yield* sendChecked(middle, numbers)
        assert.notInclude(digestsOf(sent).join("\n"), "bash npm test")
        yield* sendChecked(fresh(more.slice(0, 7)), numbers)
      }),
      config
    ))

  it.effect("a folded call's output changed under the same call ID: the fold stands, byte for byte", () =>
    pipelineTest(
      Effect.gen(function*() {
        const numbers = new NumberLedger()
        const first = yield* sendChecked(fresh(history()), numbers)
        const changed = history()
        toolPart(changed, "b1").state.output = lines(61, "FAIL")
        const sent = yield* sendChecked(fresh(changed), numbers)
        assert.deepStrictEqual(digestsOf(sent), digestsOf(first))
      }),
      config
    ))
})

describe("a folded turn reads in order", () => {
  /** A turn whose calls the model's words separate, some in one step, some across steps. */
  const wordyTurn = (): Array<Msg> => [
    user("compare a.ts and b.ts", { id: "msg_u1" }),
    assistant([
      text("First a.ts."),
      tool({ tool: "read", callID: "r1", input: { filePath: "src/a.ts" }, output: lines(100, "a") }),
      text("Now b.ts and c.ts."),
      tool({ tool: "read", callID: "r2", input: { filePath: "src/b.ts" }, output: lines(100, "b") })
    ], { id: "msg_a1" }),
    assistant([
      reasoning("c.ts next"),
      tool({ tool: "read", callID: "r3", input: { filePath: "src/c.ts" }, output: lines(100, "c") })
    ], { id: "msg_a2" }),
    assistant([
      text("They differ in one line."),
      tool({
        tool: "todowrite",
        callID: "t1",
        input: { todos: [{ content: "align", status: "pending" }] },
        output: "[]"
      }),
      tool({ tool: "grep", callID: "g1", input: { pattern: "differ" }, output: lines(20, "g") })
    ], { id: "msg_a3" })
  ]

  /** The texts of each step as OpenCode's OpenAI-style conversion joins them: one string a step, nothing between. */
  const joined = (message: Msg): string =>
    message.parts.filter((part) => part.type === "text").map((part) => String(part.text)).join("")

  it.effect("each run of calls the model's words do not separate has its digest where its first call stood", () =>
    pipelineTest(
      Effect.gen(function*() {
        const sent = yield* sendChecked(fresh([...wordyTurn(), ...laterTurns()]), new NumberLedger())
        // The header opens the fold's first digest: the later ones read as more of it.
        assert.deepStrictEqual(
          joined(sent[1]!),
          [
            "First a.ts.",
            digestHeader,
            "#1 read src/a.ts",
            "Now b.ts and c.ts.",
            "#2 read src/b.ts",
            "#3 read src/c.ts"
          ].join("\n")
        )
        // Its calls sent with the one before: the step has nothing left to send.
        assert.deepStrictEqual(sent[2]!.parts.map((part) => part.type), ["step-start", "step-finish"])
        // A call kept in place ends a run too.
        assert.deepStrictEqual(sent[3]!.parts.map((part) => part.type), [
          "step-start",
          "text",
          "tool",
          "text",
          "step-finish"
        ])
        assert.strictEqual(joined(sent[3]!), "They differ in one line.\n#5 grep differ")
      }),
      config
    ))

  it.effect("a message OpenCode does not send (it ended in an error) has its calls' digest to itself", () =>
    pipelineTest(
      Effect.gen(function*() {
        const failed = assistant([
          tool({ tool: "read", callID: "r2", input: { filePath: "src/b.ts" }, output: lines(100) })
        ])
        failed.info = { ...failed.info, error: { name: "APIError", data: { message: "overloaded" } } }
        const turn = [
          user("read the three files", { id: "msg_u1" }),
          assistant([tool({ tool: "read", callID: "r1", input: { filePath: "src/a.ts" }, output: lines(100) })]),
          failed,
          assistant([tool({ tool: "read", callID: "r3", input: { filePath: "src/c.ts" }, output: lines(100) })])
        ]
        const sent = yield* sendChecked(fresh([...turn, ...laterTurns()]), new NumberLedger())
        assert.deepStrictEqual(digestsOf(sent), [
          `${digestHeader}\n#1 read src/a.ts`,
          "#2 read src/b.ts",
          "#3 read src/c.ts"
        ])
        assert.deepStrictEqual(digestsOf([sent[2]!]), ["#2 read src/b.ts"])
      }),
      config
    ))

  it.effect("a digest alone in its step, or first in it, has no line break before it", () =>
    pipelineTest(
      Effect.gen(function*() {
        const turn = [
          user("read a.ts", { id: "msg_u1" }),
          assistant([
            tool({ tool: "read", callID: "r1", input: { filePath: "src/a.ts" }, output: lines(100, "a") }),
            text("It exports one function.")
          ])
        ]
        const sent = yield* sendChecked(fresh([...turn, ...laterTurns()]), new NumberLedger())
        assert.deepStrictEqual(digestsOf(sent), [`${digestHeader}\n#1 read src/a.ts\n`])
        assert.strictEqual(joined(sent[1]!), `${digestHeader}\n#1 read src/a.ts\nIt exports one function.`)
      }),
      config
    ))
})
