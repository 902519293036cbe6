import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { dcp } from "../../src/hooks/command.ts"
import { discard } from "../../src/hooks/tools.ts"
import { assistant, fresh, type Msg, sessionID, tool, toolPart, user } from "../support/history.ts"
import { notes, pipelineTest, send, stateOf } from "../pipeline/helpers.ts"
import { content, read } from "./support.ts"

/**
 * What the model's reading again of a file the plugin masked costs, in the session's cost ledger: without pruning
 * the model would have had the file, so the request it took and the content it brought back are counted against
 * what pruning saved (`/dcp stats`).
 */

const bash = (callID: string, command: string) =>
  tool({ tool: "bash", callID, input: { command }, output: content(command) })

/** Masks every output but the 2 most recent, from the first request. */
const masking = { strategies: { staleOutputs: { trigger: 100, keepRecent: 2, keepFiles: 0, clearAtLeast: 10 } } }

const looked: Array<Msg> = [
  user("look at a.ts, then run things"),
  assistant([read("c1", "src/a.ts")]),
  assistant([bash("c2", "make"), bash("c3", "make test"), bash("c4", "make lint")])
]
const readAgain = [...looked, assistant([read("c5", "src/a.ts")])]

const costAfter = (...requests: ReadonlyArray<ReadonlyArray<Msg>>) =>
  Effect.gen(function*() {
    let sent: Array<Msg> = []
    for (const request of requests) sent = yield* send(fresh([...request]))
    const state = yield* stateOf(sessionID)
    return { sent, cost: state.stats.cost, reReads: state.reReads }
  })

describe("the model reading a masked file again", () => {
  it.effect("counts a read of a file whose only copy reached the model pruned, once, with what it costs", () =>
    pipelineTest(
      () =>
        Effect.gen(function*() {
          const { cost, reReads, sent } = yield* costAfter(looked, readAgain, readAgain)
          assert.match(toolPart(sent, "c1").state.output, /^\[pruned/)
          assert.deepStrictEqual([cost.reReads, Object.keys(reReads)], [1, ["c5"]])
          assert.isAbove(cost.reRead, 0)
        }),
      masking
    ))

  it.effect("does not count a read while an earlier copy of the file is still sent whole", () =>
    pipelineTest(
      () =>
        Effect.gen(function*() {
          const { cost } = yield* costAfter(looked, readAgain)
          assert.deepStrictEqual([cost.reReads, cost.reRead], [0, 0])
        }),
      { strategies: { staleOutputs: { enabled: false } } }
    ))

  it.effect("does not count a read the model made with the file in view, in the turn it discarded the copy", () =>
    pipelineTest(
      () =>
        Effect.gen(function*() {
          yield* send(fresh([...looked]))
          const reply = yield* discard(sessionID, ["noise", "1"], "msg_discarding")
          const turn = assistant([
            tool({ tool: "discard", callID: "d1", input: { ids: ["noise", "1"] }, output: reply }),
            read("c5", "src/a.ts")
          ], { id: "msg_discarding" })
          const { cost, sent } = yield* costAfter([...looked, turn])
          assert.match(toolPart(sent, "c1").state.output, /^\[pruned/)
          assert.deepStrictEqual([cost.reReads, cost.reRead], [0, 0])
        }),
      { strategies: { staleOutputs: { enabled: false } } }
    ))

  it.effect("charges the read on every later request, against what pruning saved", () =>
    pipelineTest(
      () =>
        Effect.gen(function*() {
          const once = (yield* costAfter(looked, readAgain)).cost.reRead
          const twice = (yield* costAfter(readAgain)).cost.reRead
          assert.isAbove(twice, once)
        }),
      masking
    ))

  it.effect("/dcp stats says how many masked files the model read again, and nets their cost", () =>
    pipelineTest(
      () =>
        Effect.gen(function*() {
          yield* costAfter(looked, readAgain)
          yield* dcp(sessionID, "stats")
          const note = (yield* notes).at(-1)?.text.replace(/\s+/g, " ") ?? ""
          assert.match(note, /cache rebuilds cost ~[\d.]+k?; the model read 1 masked file again, for ~[\d.]+k?; net /)
        }),
      masking
    ))
})
