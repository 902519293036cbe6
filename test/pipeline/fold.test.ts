import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { digestHeader } from "../../src/engine/fold.ts"
import { dcp } from "../../src/hooks/command.ts"
import { compacting } from "../../src/hooks/session.ts"
import { recall } from "../../src/hooks/tools.ts"
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
import { pipelineTest, send, stateOf, withoutTail } from "./helpers.ts"

/** Folding old turns (src/engine/fold.ts), through the request path, on the histories of test/support/foldTurns.ts. */
const config = foldConfig

const foldTest = <A, E, R>(body: Effect.Effect<A, E, R>, extra: object = {}) => pipelineTest(body, merge(config, extra))

const merge = (a: Record<string, any>, b: Record<string, any>): Record<string, any> => {
  const out = { ...a }
  for (const [key, value] of Object.entries(b)) {
    out[key] = typeof value === "object" && value !== null && !Array.isArray(value) && typeof a[key] === "object"
      ? merge(a[key], value)
      : value
  }
  return out
}

const partsOf = (message: Msg) => message.parts.map((part) => part.type)
const digestOf = (messages: ReadonlyArray<Msg>): string | undefined => digestsOf(messages)[0]

/**
 * The digest line of the call with stable ID `id`, wherever the digest puts it: a line of a text part starting
 * `#<id> ` (the tests of a line's content do not depend on how a digest lays its lines out).
 */
const digestLine = (messages: ReadonlyArray<Msg>, id: number): string | undefined =>
  messages.flatMap((message) => message.parts).flatMap((part) =>
    part.type === "text" ? String(part.text).split("\n") : []
  ).find((line) => line.startsWith(`#${id} `))

/** Every digest line in `messages`, in order, wherever the digests put them. */
const digestLines = (messages: ReadonlyArray<Msg>): Array<string> =>
  messages.flatMap((message) => message.parts).flatMap((part) =>
    part.type === "text" ? String(part.text).split("\n").filter((line) => /^#\d+ /.test(line)) : []
  )

describe("folding old turns", () => {
  it.effect("an old turn's pruned calls are sent as a digest: a line per call with its ID, tool, argument and outcome", () =>
    foldTest(Effect.gen(function*() {
      const sent = withoutTail(yield* send(fresh([...firstTurn(), ...laterTurns()])))
      // A line break sets it apart from the model's words before it in the step.
      assert.strictEqual(
        digestOf(sent),
        [
          `\n${digestHeader}`,
          "#1 read src/a.ts",
          "#2 bash npm test -> exit 1",
          "#3 edit src/a.ts"
        ].join("\n")
      )
    })))

  it.effect("the digest takes the place of the first call; the other calls' parts leave; the model's text stays", () =>
    foldTest(Effect.gen(function*() {
      const sent = withoutTail(yield* send(fresh([...firstTurn(), ...laterTurns()])))
      assert.deepStrictEqual(partsOf(sent[1]!), ["step-start", "text", "text", "step-finish"])
      assert.strictEqual(sent[1]!.parts[1]!.text, "Let me look at the test first.")
      assert.deepStrictEqual(partsOf(sent[2]!), ["step-start", "text", "step-finish"])
      assert.strictEqual(sent[2]!.parts[1]!.text, "Fixed: the comparison was inverted.")
      assert.strictEqual(sent[0]!.parts[0]!.text, "fix the failing test")
    })))

  it.effect("the turn in progress and the one before it are never folded", () =>
    foldTest(
      Effect.gen(function*() {
        const sent = withoutTail(yield* send(fresh([...firstTurn(), ...laterTurns()])))
        for (const callID of ["r2", "b2"]) assert.strictEqual(toolPart(sent, callID).callID, callID)
        const early = withoutTail(yield* send(fresh([...firstTurn(), ...laterTurns().slice(0, 2)])))
        assert.isUndefined(digestOf(early))
      }),
      { strategies: { fold: { keepTurns: 2 } } }
    ))

  it.effect("a turn too recent to fold sends its pruned outputs as placeholders, its calls in place", () =>
    foldTest(Effect.gen(function*() {
      const sent = withoutTail(yield* send(fresh([...firstTurn(), ...laterTurns()])))
      // The wording is placeholders.ts's: what matters here is a placeholder with the call's handle in place.
      assert.match(toolPart(sent, "r2").state.output, /^\[pruned[^\n]*; recall 4\]$/)
      assert.strictEqual(toolPart(sent, "b2").state.output, `[id 5]\n${lines(30, "PASS")}`)
    })))

  it.effect("with keepTurns 1, the turn before the one in progress folds too", () =>
    foldTest(
      Effect.gen(function*() {
        const sent = withoutTail(yield* send(fresh([...firstTurn(), ...laterTurns()])))
        const digests = digestsOf(sent)
        assert.lengthOf(digests, 2)
        assert.strictEqual(digests[1], `${digestHeader}\n#4 read src/b.ts`)
      }),
      { strategies: { fold: { keepTurns: 1 } } }
    ))

  it.effect("a call of a tool whose calls are never pruned stays in place, with the calls around it folded", () =>
    foldTest(Effect.gen(function*() {
      const turn = firstTurn()
      turn[1] = assistant([
        tool({ tool: "read", callID: "r1", input: { filePath: "src/a.ts" }, output: lines(200) }),
        tool({ tool: "todowrite", callID: "t1", input: { todos: [{ content: "fix", status: "done" }] }, output: "[]" })
      ])
      const sent = withoutTail(yield* send(fresh([...turn, ...laterTurns()])))
      assert.strictEqual(toolPart(sent, "t1").state.input.todos[0].content, "fix")
      assert.deepStrictEqual(partsOf(sent[1]!), ["step-start", "text", "tool", "step-finish"])
      assert.notInclude(digestOf(sent)!, "todowrite")
    })))

  it.effect("a call of a tool a protectedTools setting lists stays in place, with the calls around it folded", () =>
    foldTest(
      Effect.gen(function*() {
        const sent = withoutTail(yield* send(fresh([...firstTurn(), ...laterTurns()])))
        // Deduplication (whose own protectedTools it is not in) still prunes it: in place, as a placeholder.
        assert.match(toolPart(sent, "b1").state.output, /^\[pruned[^\n]*; recall 2\]$/)
        assert.deepStrictEqual(digestLines(sent), ["#1 read src/a.ts", "#3 edit src/a.ts"])
      }),
      { tools: { settings: { protectedTools: ["bash"] } } }
    ))

  it.effect("a call on a protected file stays in place, whole, with the calls around it folded", () =>
    foldTest(
      Effect.gen(function*() {
        const sent = withoutTail(yield* send(fresh([...firstTurn(), ...laterTurns()])))
        // Never pruned, so never tagged for the model to prune either.
        assert.strictEqual(toolPart(sent, "r1").state.output, lines(200))
        assert.deepStrictEqual(digestLines(sent), ["#2 bash npm test -> exit 1"])
      }),
      { protectedFilePatterns: ["src/a.ts"] }
    ))

  it.effect("a failed call folds with the first line of its error", () =>
    foldTest(Effect.gen(function*() {
      const turn = firstTurn()
      turn[2] = assistant([
        tool({
          tool: "edit",
          callID: "e1",
          input: { filePath: "src/a.ts", oldString: "x", newString: "y" },
          error: "oldString not found in content\nat line 3"
        })
      ])
      const sent = withoutTail(yield* send(fresh([...turn, ...laterTurns()])))
      assert.include(digestOf(sent)!, "#3 edit src/a.ts -> error: oldString not found in content")
    })))

  it.effect("a digest line cuts a long argument at 60 characters, an ellipsis the last of them", () =>
    foldTest(Effect.gen(function*() {
      const command = `node scripts/check.ts --files ${"src/engine/".repeat(8)}`
      const turn = firstTurn()
      turn[1] = assistant([tool({ tool: "bash", callID: "b1", input: { command }, output: lines(60, "FAIL") })])
      const sent = withoutTail(yield* send(fresh([...turn, ...laterTurns()])))
      const argument = digestLine(sent, 1)!.slice("#1 bash ".length)
      assert.lengthOf(argument, 60)
      assert.strictEqual(argument, "node scripts/check.ts --files src/engine/src/engine/src/eng…")
    })))

  it.effect("a digest line keeps an argument of 60 characters whole", () =>
    foldTest(Effect.gen(function*() {
      const command = `echo ${"x".repeat(55)}`
      const turn = firstTurn()
      turn[1] = assistant([tool({ tool: "bash", callID: "b1", input: { command }, output: lines(60, "out") })])
      const sent = withoutTail(yield* send(fresh([...turn, ...laterTurns()])))
      assert.strictEqual(digestLine(sent, 1), `#1 bash ${command}`)
    })))

  it.effect("a digest line cuts a long first line of an error at 60 characters", () =>
    foldTest(Effect.gen(function*() {
      const error = "Error: ENOENT: no such file or directory, open '/app/src/engine/missing/file.ts'"
      const turn = firstTurn()
      turn[1] = assistant([tool({ tool: "read", callID: "r1", input: { filePath: "src/x.ts" }, error })])
      const sent = withoutTail(yield* send(fresh([...turn, ...laterTurns()])))
      assert.strictEqual(
        digestLine(sent, 1),
        "#1 read src/x.ts -> error: Error: ENOENT: no such file or directory, open '/app/src/en…"
      )
    })))

  it.effect("parallel calls of one step fold into the one digest, in their order", () =>
    foldTest(Effect.gen(function*() {
      const turn = [
        user("where is parse defined?", { id: "msg_u1" }),
        assistant([
          tool({ tool: "grep", callID: "g1", input: { pattern: "parse" }, output: lines(40, "match") }),
          tool({ tool: "glob", callID: "g2", input: { pattern: "**/*.ts" }, output: lines(40, "file") })
        ])
      ]
      const sent = withoutTail(yield* send(fresh([...turn, ...laterTurns()])))
      assert.deepStrictEqual(partsOf(sent[1]!), ["step-start", "text", "step-finish"])
      assert.strictEqual(
        digestOf(sent),
        `${digestHeader}\n#1 grep parse\n#2 glob **/*.ts`
      )
    })))

  it.effect("a turn's reasoning leaves with its calls", () =>
    foldTest(Effect.gen(function*() {
      const turn = firstTurn()
      turn[1] = assistant([
        reasoning("The test compares the wrong way round."),
        tool({ tool: "read", callID: "r1", input: { filePath: "src/a.ts" }, output: lines(200) })
      ])
      const sent = withoutTail(yield* send(fresh([...turn, ...laterTurns()])))
      assert.deepStrictEqual(partsOf(sent[1]!), ["step-start", "text", "step-finish"])
    })))

  it.effect("a turn's reasoning leaves with its calls from a message that holds none of them", () =>
    foldTest(Effect.gen(function*() {
      const turn = firstTurn()
      turn.splice(3, 0, assistant([reasoning("All green now."), text("Done.")]))
      const sent = withoutTail(yield* send(fresh([...turn, ...laterTurns()])))
      assert.deepStrictEqual(partsOf(sent[3]!), ["step-start", "text", "step-finish"])
    })))

  it.effect("the newest copy of a working file stays in place in a folded turn", () =>
    foldTest(
      Effect.gen(function*() {
        const sent = withoutTail(
          yield* send(fresh([...firstTurn(), ...laterTurns().slice(0, 2), ...laterTurns().slice(2, 3)]))
        )
        // keepFiles 2: src/b.ts and src/a.ts are the working files; a.ts's newest copy is the read in the first turn.
        assert.strictEqual(toolPart(sent, "r1").state.output, `[id 1]\n${lines(200)}`)
        assert.notInclude(digestOf(sent)!, "read src/a.ts")
        assert.include(digestOf(sent)!, "#2 bash npm test -> exit 1")
      }),
      { strategies: { staleOutputs: { keepFiles: 2 } } }
    ))

  it.effect("a turn with an output a rule has yet to prune is not folded", () =>
    foldTest(
      Effect.gen(function*() {
        const sent = withoutTail(yield* send(fresh([...firstTurn(), ...laterTurns()])))
        assert.isUndefined(digestOf(sent))
        assert.strictEqual(toolPart(sent, "r1").state.output, `[id 1]\n${lines(200)}`)
      }),
      { strategies: { staleOutputs: { keepRecent: 10 } } }
    ))

  it.effect("a folded turn is sent byte-identical on every later request", () =>
    foldTest(Effect.gen(function*() {
      const history = [...firstTurn(), ...laterTurns()]
      const first = withoutTail(yield* send(fresh(history)))
      const later = withoutTail(
        yield* send(fresh([
          ...history,
          assistant([text("All tests pass.")]),
          user("one more thing", { id: "msg_u4" })
        ]))
      )
      assert.strictEqual(JSON.stringify(later.slice(0, 3)), JSON.stringify(first.slice(0, 3)))
    })))

  it.effect("the session records the fold: the turn, the calls it stands for and what it saves", () =>
    foldTest(Effect.gen(function*() {
      yield* send(fresh([...firstTurn(), ...laterTurns()]))
      const { folds, stats } = yield* stateOf(sessionID)
      assert.deepStrictEqual(Object.keys(folds), ["msg_u1"])
      assert.deepStrictEqual(folds.msg_u1!.calls, ["r1", "b1", "e1"])
      assert.isAbove(folds.msg_u1!.tokens, 0)
      // Each call of the fold is counted under its own prune (all three are stale): the fold adds its tokens only.
      assert.deepStrictEqual(stats.byReason.fold, { calls: 0, tokens: folds.msg_u1!.tokens })
    })))

  it.effect("a call only its fold takes out counts once in the statistics, as folded, with its share by tool", () =>
    foldTest(Effect.gen(function*() {
      const turn = firstTurn()
      turn[2] = assistant([tool({ tool: "bash", callID: "b0", input: { command: "mkdir out" }, output: "" })])
      yield* send(fresh([...turn, ...laterTurns()]))
      const { folds, pruned, stats } = yield* stateOf(sessionID)
      assert.deepStrictEqual(folds.msg_u1!.calls, ["r1", "b1", "b0"])
      assert.isUndefined(pruned.b0)
      assert.deepStrictEqual(stats.byReason.fold, { calls: 1, tokens: folds.msg_u1!.tokens })
      const byReason = Object.values(stats.byReason)
      assert.strictEqual(byReason.reduce((sum, tally) => sum + tally.calls, 0), stats.calls)
      assert.strictEqual(byReason.reduce((sum, tally) => sum + tally.tokens, 0), stats.tokens)
      const byTool = Object.values(stats.byTool)
      assert.strictEqual(byTool.reduce((sum, tally) => sum + tally.calls, 0), stats.calls)
      assert.strictEqual(byTool.reduce((sum, tally) => sum + tally.tokens, 0), stats.tokens)
    })))

  it.effect("recall returns a folded call's output from the stored session", () =>
    Effect.gen(function*() {
      const history = [...firstTurn(), ...laterTurns()]
      yield* pipelineTest(
        Effect.gen(function*() {
          yield* send(fresh(history))
          const reply = yield* recall(sessionID, { ids: ["2"] })
          assert.include(reply, lines(60, "FAIL"))
        }),
        config,
        { host: { messages: { [sessionID]: history } } }
      )
    }))

  it.effect("recall by query returns the matching line of a folded call's output, under its id", () =>
    Effect.gen(function*() {
      const history = [...firstTurn(), ...laterTurns()]
      yield* pipelineTest(
        Effect.gen(function*() {
          yield* send(fresh(history))
          const reply = yield* recall(sessionID, { query: "FAIL 37:" })
          assert.deepStrictEqual(reply.split("\n").slice(1), [
            "id 2 (bash npm test):",
            "  FAIL 37: some content for the file"
          ])
        }),
        config,
        { host: { messages: { [sessionID]: history } } }
      )
    }))

  it.effect("recall returns a folded call's output even when no prune of its own took it", () =>
    Effect.gen(function*() {
      const turn = firstTurn()
      turn[2] = assistant([tool({ tool: "bash", callID: "b0", input: { command: "mkdir out" }, output: "" })])
      const history = [...turn, ...laterTurns()]
      yield* pipelineTest(
        Effect.gen(function*() {
          const sent = withoutTail(yield* send(fresh(history)))
          assert.include(digestOf(sent)!, "#3 bash mkdir out")
          const reply = yield* recall(sessionID, { ids: ["3"] })
          assert.include(reply, "Original content of id 3 (bash mkdir out)")
        }),
        config,
        { host: { messages: { [sessionID]: history } } }
      )
    }))

  it.effect("/dcp restore of a folded call unfolds its turn, and the call's content is sent again", () =>
    foldTest(Effect.gen(function*() {
      const history = [...firstTurn(), ...laterTurns()]
      yield* send(fresh(history))
      yield* dcp(sessionID, "restore 2")
      const sent = withoutTail(yield* send(fresh(history)))
      assert.strictEqual(toolPart(sent, "b1").state.output, `[id 2]\n${lines(60, "FAIL")}`)
      assert.deepStrictEqual((yield* stateOf(sessionID)).restored, ["b1"])
    })))

  it.effect("after an undo that makes a folded turn recent again, it is unfolded", () =>
    foldTest(Effect.gen(function*() {
      const history = [...firstTurn(), ...laterTurns()]
      yield* send(fresh(history))
      const undone = [...history.slice(0, 4), user("no, do it differently", { id: "msg_u5" })]
      const sent = withoutTail(yield* send(fresh(undone)))
      assert.isUndefined(digestOf(sent))
      assert.deepStrictEqual(Object.keys((yield* stateOf(sessionID)).folds), [])
    })))

  it.effect("after OpenCode compacts the session, the folds of the turns it summarised are forgotten", () =>
    foldTest(Effect.gen(function*() {
      const history = [...firstTurn(), ...laterTurns()]
      yield* send(fresh(history))
      const compacted = [
        user("What did we do so far?", { id: "msg_c1" }),
        assistant([text("We fixed a test and added another.")], { summary: true, id: "msg_s1" }),
        user("go on", { id: "msg_u6" })
      ]
      yield* send(fresh([...history, ...compacted].slice(history.length)))
      assert.deepStrictEqual(Object.keys((yield* stateOf(sessionID)).folds), [])
    })))

  it.effect("OpenCode's compaction summariser gets the folds too, as digests without the calls' IDs", () =>
    foldTest(Effect.gen(function*() {
      const history = [...firstTurn(), ...laterTurns()]
      yield* send(fresh(history))
      yield* compacting(sessionID, [])
      const summarised = yield* send(fresh(history.slice(0, 4)))
      assert.strictEqual(
        digestOf(summarised),
        `${digestHeader}\nread src/a.ts\nbash npm test -> exit 1\nedit src/a.ts`
      )
      assert.throws(() => toolPart(summarised, "b1"))
    })))

  it.effect("folding off: nothing is folded", () =>
    foldTest(
      Effect.gen(function*() {
        const sent = withoutTail(yield* send(fresh([...firstTurn(), ...laterTurns()])))
        assert.isUndefined(digestOf(sent))
      }),
      { strategies: { fold: { enabled: false } } }
    ))
})
