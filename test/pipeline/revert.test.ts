import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { discard, extract, recall } from "../../src/hooks/tools.ts"
import { assistant, fresh, type Msg, sessionID, tool, toolPart, user } from "../support/history.ts"
import { tempDir } from "../support/layers.ts"
import { pipelineTest, pipelineUnder, send, stateOf, tagged } from "./helpers.ts"

/**
 * OpenCode's undo (`/undo`, `session.revert`) takes the newest messages out of the session: the next request sends
 * the history without them, and a new prompt after it. The prunes made in what was taken out go with it; those the
 * remaining history still calls for stay.
 */

const big = (label: string) => Array.from({ length: 150 }, (_, i) => `${label} ${i}: some content here`).join("\n")

const read = (root: string, file: string, callID: string) =>
  tool({ tool: "read", callID, input: { filePath: `${root}/project/src/${file}` }, output: big(file) })

const bash = (command: string, callID: string) =>
  tool({ tool: "bash", callID, input: { command }, output: big(command) })

const output = (messages: ReadonlyArray<Msg>, callID: string): string => toolPart(messages, callID).state.output

/** The history as it was before the undone turn, and the prompt the user sends after the undo. */
const afterUndo = (before: ReadonlyArray<Msg>) => fresh([...before, user("do it another way")])

/** A turn after `before` in which the model discards id 1 (the first call), sent once: the discard reached the model. */
const discardInNextTurn = (before: ReadonlyArray<Msg>) =>
  Effect.gen(function*() {
    const reply = yield* discard(sessionID, ["noise", "1"], "msg_discarding")
    const turn = [
      user("prune"),
      assistant([tool({ tool: "discard", callID: "d1", input: { ids: ["noise", "1"] }, output: reply })], {
        id: "msg_discarding"
      })
    ]
    assert.match(output(yield* send(fresh([...before, ...turn])), "c1"), /^\[pruned; recall 1\]$/)
  })

describe("after OpenCode's undo", () => {
  it.effect("a duplicate whose newer copy was undone is sent whole again", () =>
    pipelineTest((root) =>
      Effect.gen(function*() {
        const first = [user("read a.ts"), assistant([read(root, "a.ts", "c1")])]
        const undone = [user("read it again"), assistant([read(root, "a.ts", "c2")])]
        assert.match(output(yield* send(fresh([...first, ...undone])), "c1"), /^\[pruned duplicate; recall 1\]$/)

        assert.strictEqual(output(yield* send(afterUndo(first)), "c1"), tagged(1, big("a.ts")))
      })
    ))

  it.effect("a duplicate whose newer copy is still there stays pruned", () =>
    pipelineTest((root) =>
      Effect.gen(function*() {
        const first = [user("read a.ts twice"), assistant([read(root, "a.ts", "c1"), read(root, "a.ts", "c2")])]
        const undone = [user("now b.ts"), assistant([read(root, "b.ts", "c3")])]
        yield* send(fresh([...first, ...undone]))

        assert.match(output(yield* send(afterUndo(first)), "c1"), /^\[pruned duplicate; recall 1\]$/)
      })
    ))

  it.effect("the model's discard in an undone turn is undone", () =>
    pipelineTest((root) =>
      Effect.gen(function*() {
        const first = [user("read"), assistant([read(root, "a.ts", "c1"), read(root, "b.ts", "c2")])]
        yield* send(fresh(first))
        yield* discardInNextTurn(first)

        assert.strictEqual(output(yield* send(afterUndo(first)), "c1"), tagged(1, big("a.ts")))
      })
    ))

  it.effect("a discard in an undone turn that no request carried prunes nothing", () =>
    pipelineTest((root) =>
      Effect.gen(function*() {
        const first = [user("read"), assistant([read(root, "a.ts", "c1"), read(root, "b.ts", "c2")])]
        yield* send(fresh([...first, user("go on"), assistant([read(root, "c.ts", "c3")])]))
        // The turn was stopped right after the discard ran, then undone.
        yield* discard(sessionID, ["noise", "1"], "msg_stopped")

        assert.strictEqual(output(yield* send(afterUndo(first)), "c1"), tagged(1, big("a.ts")))
      })
    ))

  it.effect("a discard undone while OpenCode was not running is undone at the first request after it starts", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const first = [user("read"), assistant([read(root, "a.ts", "c1"), read(root, "b.ts", "c2")])]
      yield* Effect.gen(function*() {
        yield* send(fresh(first))
        yield* discardInNextTurn(first)
      }).pipe(Effect.provide(pipelineUnder(root)))

      const restarted = yield* send(afterUndo(first)).pipe(Effect.provide(pipelineUnder(root)))
      assert.strictEqual(output(restarted, "c1"), tagged(1, big("a.ts")))
    }))

  it.effect("the findings of an extract in an undone turn are dropped", () =>
    pipelineTest((root) =>
      Effect.gen(function*() {
        const first = [user("read"), assistant([read(root, "a.ts", "c1"), read(root, "b.ts", "c2")])]
        yield* send(fresh(first))
        const input = { ids: ["1"], distillation: ["a.ts holds 150 lines of content"] }
        const reply = yield* extract(sessionID, input.ids, input.distillation, "msg_extracting")
        const undone = [
          user("distil"),
          assistant([tool({ tool: "extract", callID: "x1", input, output: reply })], { id: "msg_extracting" })
        ]
        yield* send(fresh([...first, ...undone]))
        assert.lengthOf((yield* stateOf(sessionID)).findings, 1)

        yield* send(afterUndo(first))
        assert.deepStrictEqual((yield* stateOf(sessionID)).findings, [])
      })
    ))

  describe("stale outputs (keep the 2 most recent)", () => {
    const masking = { strategies: { staleOutputs: { trigger: 100, keepRecent: 2, keepFiles: 0, clearAtLeast: 10 } } }
    const undoMasking = () =>
      Effect.gen(function*() {
        const first = [user("look"), assistant([bash("ls", "c1"), bash("pwd", "c2"), bash("env", "c3")])]
        const undone = [user("more"), assistant([bash("date", "c4"), bash("id", "c5"), bash("who", "c6")])]
        const masked = yield* send(fresh([...first, ...undone]))
        assert.match(output(masked, "c3"), /^\[pruned; recall 3\]$/)
        return yield* send(afterUndo(first))
      })

    it.effect("an output masked for being old that is among the most recent again is sent whole", () =>
      pipelineTest(
        () =>
          Effect.map(undoMasking(), (sent) => {
            assert.strictEqual(output(sent, "c2"), tagged(2, big("pwd")))
            assert.strictEqual(output(sent, "c3"), tagged(3, big("env")))
          }),
        masking
      ))

    it.effect("an output still older than the most recent stays masked", () =>
      pipelineTest(
        () => Effect.map(undoMasking(), (sent) => assert.match(output(sent, "c1"), /^\[pruned; recall 1\]$/)),
        masking
      ))
  })

  it.effect("the undone calls' IDs are not given again, and recall says they are gone", () =>
    pipelineTest((root) =>
      Effect.gen(function*() {
        const first = [user("read"), assistant([read(root, "a.ts", "c1")])]
        yield* send(fresh([...first, user("more"), assistant([read(root, "b.ts", "c2")])]))
        yield* send(afterUndo(first))
        const next = yield* send(fresh([...afterUndo(first), assistant([read(root, "c.ts", "c3")])]))

        assert.strictEqual(output(next, "c3"), tagged(3, big("c.ts")))
        const refusal = yield* Effect.flip(recall(sessionID, { ids: ["2"] }))
        assert.include(refusal.message, "There is no tool call with id 2 in this conversation.")
      })
    ))
})
