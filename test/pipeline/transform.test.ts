import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { compacting } from "../../src/hooks/session.ts"
import type { SessionFile } from "../../src/state/schema.ts"
import { assistant, fresh, type Msg, sessionID, syntheticId, text, tool, toolPart, user } from "../support/history.ts"
import { tempDir } from "../support/layers.ts"
import { pipelineUnder, send, stateOf, tagged, tailOf, withoutTail, withTags, pipelineTest } from "./helpers.ts"

const big = (label: string, lines = 200) =>
  Array.from({ length: lines }, (_, i) => `${label} ${i + 1}: export const value${i} = compute(${i})`).join("\n")

const occurrences = (haystack: string, needle: string) => haystack.split(needle).length - 1

/** What the statistics count of prunes. `cost` is a ledger of requests: it grows with every request sent. */
const prunesIn = ({ cost: _cost, ...counts }: SessionFile["stats"]) => counts

/** `n` assistant turns with nothing in them but a short text: makes earlier calls older. */
const turns = (n: number) => Array.from({ length: n }, (_, i) => assistant([text(`step ${i}`)]))

describe("transform: deduplication", () => {
  it.effect("the first of two identical reads reaches the model as a placeholder, the second in full", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const file = `${root}/project/src/a.ts`
      const content = big("a")
      const history = [
        user("read a.ts twice"),
        assistant([
          tool({ tool: "read", callID: "c1", input: { filePath: file }, output: content }),
          tool({ tool: "read", callID: "c2", input: { filePath: file }, output: content })
        ])
      ]
      const sent = yield* send(fresh(history)).pipe(Effect.provide(pipelineUnder(root)))
      const first = toolPart(sent, "c1").state.output as string
      assert.match(first, /^\[pruned duplicate; (?:id|recall) 1\]$/)
      assert.strictEqual(toolPart(sent, "c2").state.output, tagged(2, content))
      assert.strictEqual(occurrences(JSON.stringify(sent), "a 17: export"), 1)
    }))

  it.effect("reads of the same file with a different range are not duplicates", () =>
    Effect.gen(function*() {
      const history = [
        user("read parts"),
        assistant([
          tool({ tool: "read", callID: "c1", input: { filePath: "src/a.ts", offset: 1 }, output: big("a") }),
          tool({ tool: "read", callID: "c2", input: { filePath: "src/a.ts", offset: 200 }, output: big("a") })
        ])
      ]
      const sent = yield* pipelineTest(send(fresh(history)))
      assert.deepStrictEqual(withoutTail(sent), withTags(history, { c1: 1, c2: 2 }))
    }))
})

describe("transform: question calls", () => {
  it.effect("a pruned question call loses its questions and keeps the user's answers", () =>
    Effect.gen(function*() {
      const questions = [{ question: big("Which option do you prefer?", 20), options: ["a", "b"] }]
      const ask = (callID: string) =>
        tool({ tool: "question", callID, input: { questions }, output: "User answered: a" })
      const history = [user("ask me"), assistant([ask("q1")]), assistant([ask("q2")])]
      const sent = yield* pipelineTest(send(fresh(history)))
      const first = toolPart(sent, "q1").state
      assert.match(first.input.questions, /^\[pruned questions; (?:id|recall) 1\]$/)
      assert.strictEqual(first.output, tagged(1, "User answered: a"))
      assert.deepStrictEqual(toolPart(sent, "q2").state.input.questions, questions)
    }))
})

describe("transform: supersede writes", () => {
  it.effect("after write-then-read the written content is sent once, in the read", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const file = `${root}/project/src/new.ts`
      const content = big("written")
      const history = [
        user("write then check"),
        assistant([
          tool({ tool: "write", callID: "w1", input: { filePath: file, content }, output: "Wrote file successfully." })
        ]),
        assistant([tool({ tool: "read", callID: "r1", input: { filePath: file }, output: content })])
      ]
      const sent = yield* send(fresh(history)).pipe(Effect.provide(pipelineUnder(root)))
      assert.strictEqual(occurrences(JSON.stringify(sent), "written 17: export"), 1)
      const write = toolPart(sent, "w1").state
      assert.match(
        write.input.content,
        /^\[pruned content; the file was read again later; (?:id|recall) 1\]$/
      )
      assert.strictEqual(write.input.filePath, file)
      assert.strictEqual(write.output, "Wrote file successfully.")
      assert.strictEqual(toolPart(sent, "r1").state.output, tagged(2, content))
    }))

  it.effect("an edit whose file is read later loses its old and new strings, not its path or result", () =>
    Effect.gen(function*() {
      const history = [
        user("edit then check"),
        assistant([
          tool({
            tool: "edit",
            callID: "e1",
            input: { filePath: "src/a.ts", oldString: big("old", 20), newString: big("new", 20) },
            output: "Edit applied successfully."
          })
        ]),
        assistant([tool({ tool: "read", callID: "r1", input: { filePath: "src/a.ts" }, output: big("now") })])
      ]
      const sent = yield* pipelineTest(send(fresh(history)))
      const edit = toolPart(sent, "e1").state
      assert.match(edit.input.oldString, /^\[pruned oldString; the file was read again later; (?:id|recall) 1\]$/)
      assert.match(edit.input.newString, /^\[pruned newString; the file was read again later; (?:id|recall) 1\]$/)
      assert.strictEqual(edit.input.filePath, "src/a.ts")
      assert.strictEqual(edit.output, "Edit applied successfully.")
    }))

  it.effect("a write read back only from an offset keeps its content", () =>
    Effect.gen(function*() {
      const history = [
        user("write then peek"),
        assistant([
          tool({ tool: "write", callID: "w1", input: { filePath: "src/a.ts", content: big("w") }, output: "ok" })
        ]),
        assistant([tool({ tool: "read", callID: "r1", input: { filePath: "src/a.ts", offset: 100 }, output: "tail" })])
      ]
      const sent = yield* pipelineTest(send(fresh(history)))
      assert.deepStrictEqual(withoutTail(sent), history)
    }))
})

describe("transform: purge errors", () => {
  const failed = (command: string) =>
    tool({
      tool: "bash",
      callID: "b1",
      input: { command, description: "Build" },
      error: "exit code 2: syntax error near fi"
    })

  it.effect("an old failed call's large input is replaced and its error text kept", () =>
    Effect.gen(function*() {
      const script = big("script", 40)
      const history = [user("build it"), assistant([failed(script)]), ...turns(4)]
      const sent = yield* pipelineTest(send(fresh(history)))
      const state = toolPart(sent, "b1").state
      assert.match(state.input.command, /^\[pruned command of a failed call; (?:id|recall) 1\]$/)
      assert.strictEqual(state.input.description, "Build")
      assert.strictEqual(state.error, tagged(1, "exit code 2: syntax error near fi"))
      assert.strictEqual(state.status, "error")
    }))

  it.effect("a failed call younger than purgeErrors.turns keeps its input", () =>
    Effect.gen(function*() {
      const history = [user("build it"), assistant([failed(big("script", 40))]), ...turns(2)]
      const sent = yield* pipelineTest(send(fresh(history)))
      assert.deepStrictEqual(withoutTail(sent), withTags(history, { b1: 1 }))
    }))
})

describe("transform: a switch of model", () => {
  /** c2 makes c1 a duplicate, a prune that waits on a warm cache in the default mode. */
  const history = (root: string) => {
    const read = (callID: string) =>
      tool({ tool: "read", callID, input: { filePath: `${root}/project/src/a.ts` }, output: big("a") })
    return [user("read a.ts"), assistant([read("c1")]), assistant([read("c2")])]
  }
  const asking = (modelID: string) => {
    const message = user("go on")
    message.info.model = { providerID: "fake", modelID }
    return message
  }

  for (
    const [to, sent] of [["another model", /^\[pruned duplicate; recall 1\]$/], [
      "the same model",
      /^\[id 1\]\n/
    ]] as const
  ) {
    it.effect(`a duplicate waiting on a warm cache, in the request a second later to ${to}: ${String(sent)}`, () =>
      pipelineTest((root) =>
        Effect.gen(function*() {
          yield* send(fresh(history(root).slice(0, 2)))
          yield* TestClock.adjust("1 minute")
          const warm = yield* send(fresh(history(root)))
          assert.match(toolPart(warm, "c1").state.output as string, /^\[id 1\]\n/)
          yield* TestClock.adjust("1 second")
          const next = yield* send(
            fresh([...history(root), asking(to === "another model" ? "fake-opus" : "fake-model")])
          )
          assert.match(toolPart(next, "c1").state.output as string, sent)
        }), { cache: { mode: "auto" } }))
  }
})

describe("transform: compaction", () => {
  const file = (name: string) => `src/${name}.ts`
  const read = (callID: string, name: string) =>
    tool({ tool: "read", callID, input: { filePath: file(name) }, output: big(name) })

  const before = [
    user("look around"),
    assistant([read("c1", "a"), read("c2", "a")]),
    assistant([read("c3", "b"), read("c4", "b")])
  ]
  const compacted = [
    user("continue", { id: "msg_after_compaction" }),
    assistant([text("Summary: we read a.ts and b.ts.")], { summary: true, id: "msg_summary" }),
    before[2]!,
    assistant([read("c5", "c")])
  ]

  it.effect("drops the state of vanished calls, keeps stable IDs of calls still visible and never reuses numbers", () =>
    pipelineTest(Effect.gen(function*() {
      yield* send(fresh(before))
      const first = yield* stateOf(sessionID)
      assert.deepStrictEqual(first.ids, { c1: 1, c2: 2, c3: 3, c4: 4 })
      assert.deepStrictEqual(Object.keys(first.pruned).sort(), ["c1", "c3"])

      const sent = yield* send(fresh(compacted))
      const after = yield* stateOf(sessionID)
      assert.deepStrictEqual(after.ids, { c3: 3, c4: 4, c5: 5 })
      assert.deepStrictEqual(Object.keys(after.pruned), ["c3"])
      assert.strictEqual(after.summaryId, "msg_summary")
      assert.strictEqual(after.nextId, 6)
      assert.match(toolPart(sent, "c3").state.output, /; (?:id|recall) 3\]$/)
      assert.strictEqual(toolPart(sent, "c4").state.output, tagged(4, big("b")))
    })))

  it.effect("statistics of prunes made before a compaction are kept", () =>
    pipelineTest(Effect.gen(function*() {
      yield* send(fresh(before))
      const first = yield* stateOf(sessionID)
      yield* send(fresh(compacted))
      const after = yield* stateOf(sessionID)
      assert.strictEqual(first.stats.calls, 2)
      assert.deepStrictEqual(prunesIn(after.stats), prunesIn(first.stats))
    })))

  it.effect("OpenCode's compaction summariser gets a pruned output as OpenCode's own cleared result", () =>
    pipelineTest(Effect.gen(function*() {
      yield* send(fresh(before))
      yield* compacting(sessionID, [])
      const summariser = yield* send(fresh(before))
      assert.strictEqual(toolPart(summariser, "c1").state.output, "[Old tool result content cleared]")
      assert.strictEqual(toolPart(summariser, "c3").state.output, "[Old tool result content cleared]")
    })))

  it.effect("OpenCode's compaction summariser gets what is not pruned as stored: no ID tags, no note", () =>
    pipelineTest(Effect.gen(function*() {
      yield* send(fresh(before))
      yield* compacting(sessionID, [])
      const summariser = yield* send(fresh(before))
      assert.strictEqual(summariser.length, before.length)
      assert.strictEqual(toolPart(summariser, "c2").state.output, big("a"))
      assert.strictEqual(toolPart(summariser, "c4").state.output, big("b"))
    })))

  it.effect("OpenCode's compaction summariser gets a pruned input as its placeholder, without a recall handle", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const written = `${root}/project/src/new.ts`
      const history = [
        user("write then check"),
        assistant([
          tool({
            tool: "write",
            callID: "w1",
            input: { filePath: written, content: big("written") },
            output: "Wrote file successfully."
          })
        ]),
        assistant([tool({ tool: "read", callID: "r1", input: { filePath: written }, output: big("written") })])
      ]
      const summariser = yield* Effect.gen(function*() {
        yield* send(fresh(history))
        yield* compacting(sessionID, [])
        return yield* send(fresh(history))
      }).pipe(Effect.provide(pipelineUnder(root)))
      assert.match(
        toolPart(summariser, "w1").state.input.content,
        /^\[pruned content; the file was read again later\]$/
      )
    }))

  it.effect("the request after the summariser's goes through the request path again", () =>
    pipelineTest(Effect.gen(function*() {
      yield* send(fresh(before))
      yield* compacting(sessionID, [])
      yield* send(fresh(before))
      const next = yield* send(fresh(before))
      assert.match(toolPart(next, "c1").state.output, /^\[pruned duplicate/)
      assert.strictEqual(toolPart(next, "c2").state.output, tagged(2, big("a")))
    })))

  it.effect("a process whose first request for the session is the summariser's gives it the prunes of the state file", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* send(fresh(before)).pipe(Effect.provide(pipelineUnder(root)))
      const summariser = yield* Effect.andThen(compacting(sessionID, []), send(fresh(before))).pipe(
        Effect.provide(pipelineUnder(root))
      )
      assert.strictEqual(toolPart(summariser, "c1").state.output, "[Old tool result content cleared]")
    }))
})

describe("transform: restart", () => {
  const history = [
    user("read twice"),
    assistant([
      tool({ tool: "read", callID: "c1", input: { filePath: "src/a.ts" }, output: big("a") }),
      tool({ tool: "grep", callID: "c2", input: { pattern: "TODO" }, output: big("grep") }),
      tool({ tool: "read", callID: "c3", input: { filePath: "src/a.ts" }, output: big("a") })
    ])
  ]

  it.effect("a new layer over the same root sends the same bytes: pruned state and IDs survive", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const before = yield* send(fresh(history)).pipe(Effect.provide(pipelineUnder(root)))
      const [after, state] = yield* Effect.all([send(fresh(history)), stateOf(sessionID)]).pipe(
        Effect.provide(pipelineUnder(root))
      )
      assert.strictEqual(JSON.stringify(after), JSON.stringify(before))
      assert.deepStrictEqual(state.ids, { c1: 1, c2: 2, c3: 3 })
      assert.deepStrictEqual(Object.keys(state.pruned), ["c1"])
    }))

  it.effect("a prune reloaded after a restart is not counted again", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const first = yield* send(fresh(history)).pipe(
        Effect.andThen(stateOf(sessionID)),
        Effect.provide(pipelineUnder(root))
      )
      const second = yield* send(fresh(history)).pipe(
        Effect.andThen(stateOf(sessionID)),
        Effect.provide(pipelineUnder(root))
      )
      assert.strictEqual(first.stats.calls, 1)
      assert.deepStrictEqual(prunesIn(second.stats), prunesIn(first.stats))
    }))

  it.effect("new calls after a restart continue the numbering", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* send(fresh(history)).pipe(Effect.provide(pipelineUnder(root)))
      const longer = [
        ...history,
        assistant([tool({ tool: "glob", callID: "c4", input: { pattern: "**/*.ts" }, output: "a.ts" })])
      ]
      const state = yield* send(fresh(longer)).pipe(
        Effect.andThen(stateOf(sessionID)),
        Effect.provide(pipelineUnder(root))
      )
      assert.deepStrictEqual(state.ids, { c1: 1, c2: 2, c3: 3, c4: 4 })
    }))
})

describe("transform: ID tags", () => {
  const grep = (callID: string, output: string) => tool({ tool: "grep", callID, input: { pattern: "TODO" }, output })

  it.effect("a prunable output carries its ID at its head from the first request that sends it", () =>
    Effect.gen(function*() {
      const history = [user("look"), assistant([grep("c1", big("grep"))])]
      const sent = yield* pipelineTest(send(fresh(history)))
      assert.strictEqual(toolPart(sent, "c1").state.output, tagged(1, big("grep")))
    }))

  it.effect("small outputs, protected tools, protected files and unfinished calls carry no tag", () =>
    Effect.gen(function*() {
      const history = [
        user("look"),
        assistant([
          grep("c1", "src/a.ts:3: TODO"),
          tool({ tool: "task", callID: "c2", input: { description: "Explore", prompt: "look" }, output: big("task") }),
          tool({ tool: "read", callID: "c3", input: { filePath: "secret/keys.ts" }, output: big("secret") }),
          tool({ tool: "bash", callID: "c4", input: { command: "npm run dev" }, status: "running" }),
          grep("c5", big("grep"))
        ])
      ]
      const sent = yield* pipelineTest(send(fresh(history)), { protectedFilePatterns: ["**/secret/**"] })
      assert.deepStrictEqual(withoutTail(sent), withTags(history, { c5: 5 }))
    }))

  it.effect("with discard and extract both off, outputs carry no tag", () =>
    Effect.gen(function*() {
      const history = [user("look"), assistant([grep("c1", big("grep"))])]
      const config = { tools: { discard: { enabled: false }, extract: { enabled: false } } }
      const sent = yield* pipelineTest(send(fresh(history)), config)
      assert.deepStrictEqual(withoutTail(sent), history)
    }))
})

describe("transform: trailing note", () => {
  const nudgeConfig = { tools: { settings: { nudgeFrequency: 1, nudgeMinTokens: 100 } } }
  const history: Array<Msg> = [
    user("look"),
    assistant([tool({ tool: "grep", callID: "c1", input: { pattern: "TODO" }, output: big("grep") })])
  ]

  it.effect("a request with no nudge due gets no message added", () =>
    Effect.gen(function*() {
      const sent = yield* pipelineTest(send(fresh(history)))
      assert.strictEqual(sent.length, history.length)
      assert.strictEqual(sent[sent.length - 1]!.info.id, history[history.length - 1]!.info.id)
    }))

  it.effect("a due nudge goes in one synthetic user text after the last message, and nowhere else", () =>
    Effect.gen(function*() {
      const sent = yield* pipelineTest(send(fresh(history)), nudgeConfig)
      assert.strictEqual(sent.length, history.length + 1)
      const last = sent[sent.length - 1]!
      assert.strictEqual(last.info.id, syntheticId)
      assert.strictEqual(last.info.role, "user")
      assert.deepStrictEqual(last.parts.map((part) => [part.type, part.synthetic]), [["text", true]])
      assert.match(tailOf(sent)!, /could be discarded or extracted/)
      assert.deepStrictEqual(sent.slice(0, -1), withTags(history, { c1: 1 }))
    }))

  it.effect("a request transformed twice is sent as transformed once: one note, one tag per output", () =>
    Effect.gen(function*() {
      const [once, twice] = yield* pipelineTest(
        Effect.gen(function*() {
          const once = yield* send(fresh(history))
          return [fresh(once), yield* send(once)] as const
        }),
        nudgeConfig
      )
      assert.isDefined(tailOf(once))
      assert.strictEqual(JSON.stringify(twice), JSON.stringify(once))
    }))
})

describe("transform: nudges", () => {
  const nudgeConfig = { tools: { settings: { nudgeFrequency: 3, nudgeMinTokens: 100 } } }
  const steps = [
    user("explore"),
    ...Array.from(
      { length: 6 },
      (_, i) =>
        assistant([
          tool({ tool: "read", callID: `c${i + 1}`, input: { filePath: `src/f${i + 1}.ts` }, output: big(`f${i + 1}`) })
        ])
    )
  ]
  /** The request after `n` steps of the agent loop. */
  const request = (n: number) => fresh(steps.slice(0, n + 1))
  const nudged = (messages: ReadonlyArray<unknown>) => /could be discarded or extracted/.test(tailOf(messages) ?? "")

  const withNudges = <A, E, R>(program: Effect.Effect<A, E, R>) => pipelineTest(program, nudgeConfig)

  it.effect("the nudge comes on the request whose new results complete nudgeFrequency, once per interval", () =>
    withNudges(Effect.gen(function*() {
      const flags: Array<boolean> = []
      for (let n = 1; n <= 6; n++) flags.push(nudged(yield* send(request(n))))
      assert.deepStrictEqual(flags, [false, false, true, false, false, true])
    })))

  it.effect("a request sent again unchanged gets the same nudge, byte for byte", () =>
    withNudges(Effect.gen(function*() {
      yield* send(request(1))
      yield* send(request(2))
      const first = yield* send(request(3))
      const again = yield* send(request(3))
      assert.isTrue(nudged(first))
      assert.strictEqual(JSON.stringify(again), JSON.stringify(first))
    })))

  it.effect("a user message after the nudge brings no new nudge", () =>
    withNudges(Effect.gen(function*() {
      yield* send(request(3))
      const next = yield* send([...request(3), user("what now?")])
      assert.isFalse(nudged(next))
    })))
})
