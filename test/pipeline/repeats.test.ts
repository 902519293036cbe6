import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { discard, recall } from "../../src/hooks/tools.ts"
import type { HostFixture } from "../../src/services/Host.ts"
import { figuresOf } from "../../src/engine/figures.ts"
import { SessionStore } from "../../src/services/SessionStore.ts"
import { assistant, fresh, type Msg, sessionID, tool, toolPart, user } from "../support/history.ts"
import { tempDir } from "../support/layers.ts"
import { pipelineUnder, send, stateOf, tagged, pipelineTest } from "./helpers.ts"

/** Repeats on (the pipeline tests turn them off), prunes applied at once unless a test sets `cache.mode`. */
const repeatsOn = { strategies: { repeats: { enabled: true } } }

const source = Array.from({ length: 120 }, (_, i) => `export const value${i + 1} = compute(${i + 1}, "an argument")`)

/** What OpenCode's read tool returns for lines `from`..`to` of a file holding `lines`: numbered `N: text`. */
const listing = (file: string, lines: ReadonlyArray<string>, from = 1, to = lines.length) =>
  [
    `<path>${file}</path>`,
    "<type>file</type>",
    "<content>",
    ...lines.slice(from - 1, to).map((line, i) => `${from + i}: ${line}`),
    "",
    to < lines.length
      ? `(Showing lines ${from}-${to} of ${lines.length}. Use offset=${to + 1} to continue.)`
      : `(End of file - total ${lines.length} lines)`,
    "</content>"
  ].join("\n")

const file = "src/a.ts"
const whole = listing(file, source)
const read = (callID: string, output = whole) => tool({ tool: "read", callID, input: { filePath: file }, output })

const testOutput = (failing: number) =>
  Array.from(
    { length: 60 },
    (_, i) => `  ${i < failing ? "✗" : "✓"} suite ${i + 1} › handles case ${i + 1} (${i + 3} ms)`
  )
    .join("\n")
const bash = (callID: string, output: string) =>
  tool({ tool: "bash", callID, input: { command: "npm test", description: "Run the tests" }, output })

/** Line 5 after an edit: as long as before, so the re-read differs from the first read only in its text. */
const fixed = source[4]!.replace("an argument", "an Argument")
const edit = (callID: string) =>
  tool({
    tool: "edit",
    callID,
    input: { filePath: file, oldString: source[4]!, newString: fixed },
    output: "Edit applied successfully."
  })
const edited = source.map((line, i) => (i === 4 ? fixed : line))

const sameAs = (of: number, id: number) => new RegExp(`^\\[same output as id ${of}; recall ${id}\\]$`)

const outputOf = (messages: ReadonlyArray<Msg>, callID: string) => String(toolPart(messages, callID).state.output)

/**
 * Request 1 sends `before`; request 2 sends `after`, which extends it: what `after` adds goes out for the first time.
 * (A first request in a process sends nothing for the first time: OpenCode may have sent it before a restart.)
 * Returns what request 2 sent.
 */
const firstSendOf = (before: Array<Msg>, after: Array<Msg>) => Effect.andThen(send(fresh(before)), send(fresh(after)))

/** The automatic prunes waiting for the cache as of the latest request (kept in memory, not in the state file). */
const waiting = Effect.gen(function*() {
  const store = yield* SessionStore
  return yield* store.use(sessionID, (state) => Effect.succeed(figuresOf(state, undefined).waiting))
})

/** `program` on the plugin under a fresh root, with `config` (by default repeats on) over the pipeline tests' defaults. */
const withRepeats = <A, E, R>(program: Effect.Effect<A, E, R>, config: object = repeatsOn, host?: HostFixture) =>
  pipelineTest(program, config, { host })

describe("repeats: an unchanged re-read", () => {
  const before = [user("read a.ts"), assistant([read("c1")])]
  const after = [...before, assistant([read("c2")])]

  it.effect("is sent at its first send as a placeholder naming the earlier copy, which stays whole", () =>
    withRepeats(Effect.gen(function*() {
      const sent = yield* firstSendOf(before, after)
      const state = yield* stateOf(sessionID)
      assert.match(outputOf(sent, "c2"), sameAs(1, 2))
      assert.deepStrictEqual(state.pruned.c2?.of, { id: 1, kind: "same" })
      assert.strictEqual(state.pruned.c2?.reason, "repeat")
      assert.strictEqual(outputOf(sent, "c1"), tagged(1, whole))
    })))

  it.effect("keeps its placeholder byte-identical on every later request", () =>
    withRepeats(Effect.gen(function*() {
      const first = yield* firstSendOf(before, after)
      const again = yield* send(fresh(after))
      const glob = tool({ tool: "glob", callID: "c3", input: { pattern: "**/*.ts" }, output: "src/a.ts" })
      const longer = yield* send(fresh([...after, assistant([glob])]))
      assert.match(outputOf(first, "c2"), sameAs(1, 2))
      assert.deepStrictEqual([outputOf(again, "c2"), outputOf(longer, "c2")], [
        outputOf(first, "c2"),
        outputOf(first, "c2")
      ])
    })))

  it.effect("keeps its placeholder byte-identical after a restart", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const first = yield* firstSendOf(before, after).pipe(Effect.provide(pipelineUnder(root, repeatsOn)))
      const restarted = yield* send(fresh(after)).pipe(Effect.provide(pipelineUnder(root, repeatsOn)))
      assert.match(outputOf(first, "c2"), sameAs(1, 2))
      assert.strictEqual(outputOf(restarted, "c2"), outputOf(first, "c2"))
    }))

  it.effect("in the first request this process sees is sent whole: it may have been sent before a restart", () =>
    withRepeats(Effect.gen(function*() {
      const sent = yield* send(fresh(after))
      assert.strictEqual(outputOf(sent, "c2"), tagged(2, whole))
    })))
})

describe("repeats: a read-back of what was just written", () => {
  const newFile = "src/new.ts"
  const content = `${source.join("\n")}\n`
  const before = [
    user("create new.ts"),
    assistant([
      tool({ tool: "write", callID: "w1", input: { filePath: newFile, content }, output: "Wrote file successfully." })
    ])
  ]
  const readBack = tool({ tool: "read", callID: "r1", input: { filePath: newFile }, output: listing(newFile, source) })
  const after = [...before, assistant([readBack])]

  it.effect("is a placeholder pointing at the write", () =>
    withRepeats(Effect.gen(function*() {
      const sent = yield* firstSendOf(before, after)
      const state = yield* stateOf(sessionID)
      assert.match(
        outputOf(sent, "r1"),
        /^\[the same content as the earlier write of this file; recall 2\]$/
      )
      assert.deepStrictEqual(state.pruned.r1?.of, { id: 1, kind: "written" })
    })))

  it.effect("leaves the write its content: the read-back does not supersede the copy it points to", () =>
    withRepeats(Effect.gen(function*() {
      const sent = yield* firstSendOf(before, after)
      assert.strictEqual(toolPart(sent, "w1").state.input.content, content)
      assert.notProperty((yield* stateOf(sessionID)).pruned, "w1")
    })))
})

describe("repeats: a read-back of a file a GPT model's apply_patch just added", () => {
  const newFile = "src/new.ts"
  const addPatch = (callID: string, lines: ReadonlyArray<string>) =>
    tool({
      tool: "apply_patch",
      callID,
      input: {
        patchText: ["*** Begin Patch", `*** Add File: ${newFile}`, ...lines.map((line) => `+${line}`), "*** End Patch"]
          .join("\n")
      },
      output: `Success. Updated the following files:\nA ${newFile}`
    })
  const before = [user("create new.ts"), assistant([addPatch("p1", source)])]
  const readBack = tool({ tool: "read", callID: "r1", input: { filePath: newFile }, output: listing(newFile, source) })

  it.effect("is a placeholder pointing at the patch, which keeps its text", () =>
    withRepeats(Effect.gen(function*() {
      const sent = yield* firstSendOf(before, [...before, assistant([readBack])])
      assert.match(outputOf(sent, "r1"), /^\[the same content as the earlier write of this file; recall 2\]$/)
      assert.deepStrictEqual((yield* stateOf(sessionID)).pruned.r1?.of, { id: 1, kind: "written" })
      assert.strictEqual(toolPart(sent, "p1").state.input.patchText, toolPart(before, "p1").state.input.patchText)
    })))

  it.effect("is sent whole when the file differs from what the patch added", () =>
    withRepeats(Effect.gen(function*() {
      const other = [user("create new.ts"), assistant([addPatch("p1", edited)])]
      const sent = yield* firstSendOf(other, [...other, assistant([readBack])])
      assert.strictEqual(outputOf(sent, "r1"), tagged(2, listing(newFile, source)))
    })))
})

describe("repeats: a partial read", () => {
  const partial = (callID: string, lines: ReadonlyArray<string>) =>
    tool({
      tool: "read",
      callID,
      input: { filePath: file, offset: 40, limit: 20 },
      output: listing(file, lines, 40, 59)
    })

  it.effect("of lines the latest whole read showed is a placeholder pointing at that read", () =>
    withRepeats(Effect.gen(function*() {
      const before = [user("read a.ts"), assistant([read("r1")])]
      const sent = yield* firstSendOf(before, [...before, assistant([partial("r2", source)])])
      assert.match(
        outputOf(sent, "r2"),
        /^\[these lines are unchanged in the output of id 1; recall 2\]$/
      )
      assert.deepStrictEqual((yield* stateOf(sessionID)).pruned.r2?.of, { id: 1, kind: "contained" })
      assert.strictEqual(outputOf(sent, "r1"), tagged(1, whole))
    })))

  it.effect("after an edit of the file is sent whole, even of lines the edit left alone", () =>
    withRepeats(Effect.gen(function*() {
      const before = [user("read a.ts, fix it"), assistant([read("r1")]), assistant([edit("e1")])]
      const sent = yield* firstSendOf(before, [...before, assistant([partial("r2", edited)])])
      assert.strictEqual(outputOf(sent, "r2"), tagged(3, listing(file, edited, 40, 59)))
    })))

  it.effect("after an apply_patch of the file is sent whole, even of lines the patch left alone", () =>
    withRepeats(Effect.gen(function*() {
      const patch = tool({
        tool: "apply_patch",
        callID: "p1",
        input: {
          patchText: [
            "*** Begin Patch",
            `*** Update File: ${file}`,
            "@@",
            `-${source[4]}`,
            `+${fixed}`,
            "*** End Patch"
          ].join("\n")
        },
        output: `Success. Updated the following files:\nM ${file}`
      })
      const before = [user("read a.ts, fix it"), assistant([read("r1")]), assistant([patch])]
      const sent = yield* firstSendOf(before, [...before, assistant([partial("r2", edited)])])
      assert.strictEqual(outputOf(sent, "r2"), tagged(3, listing(file, edited, 40, 59)))
    })))
})

describe("repeats: commands and changed files", () => {
  it.effect("the same command with the same output is a repeat", () =>
    withRepeats(Effect.gen(function*() {
      const before = [user("test it"), assistant([bash("b1", testOutput(0))])]
      const sent = yield* firstSendOf(before, [...before, assistant([bash("b2", testOutput(0))])])
      assert.match(outputOf(sent, "b2"), sameAs(1, 2))
      assert.strictEqual(outputOf(sent, "b1"), tagged(1, testOutput(0)))
    })))

  it.effect("the same command with a different output is sent whole", () =>
    withRepeats(Effect.gen(function*() {
      const before = [user("test it"), assistant([bash("b1", testOutput(0))])]
      const sent = yield* firstSendOf(before, [...before, assistant([bash("b2", testOutput(1))])])
      assert.strictEqual(outputOf(sent, "b2"), tagged(2, testOutput(1)))
    })))

  it.effect("a re-read after an edit of the file is sent whole", () =>
    withRepeats(Effect.gen(function*() {
      const before = [user("read a.ts, fix it"), assistant([read("r1")]), assistant([edit("e1")])]
      const reread = listing(file, edited)
      const sent = yield* firstSendOf(before, [...before, assistant([read("r2", reread)])])
      assert.strictEqual(outputOf(sent, "r2"), tagged(3, reread))
    })))
})

describe("repeats: cost", () => {
  const readB = (callID: string, lines: ReadonlyArray<string>) =>
    tool({ tool: "read", callID, input: { filePath: "src/b.ts" }, output: listing("src/b.ts", lines) })
  const before = [user("read a.ts and b.ts"), assistant([read("c1"), readB("b1", source)])]
  /** c2 repeats c1; b.ts changed, so b2 makes b1 a duplicate (a scheduled prune), not a repeat. */
  const after = [...before, assistant([read("c2"), readB("b2", edited)])]
  /** The default cache mode: automatic prunes wait for a trigger. */
  const auto = { ...repeatsOn, cache: { mode: "auto" } }

  it.effect("on a warm cache in auto mode a repeat is pruned at its first send, while a duplicate found with it waits", () =>
    withRepeats(
      Effect.gen(function*() {
        yield* send(fresh(before))
        yield* TestClock.adjust("1 minute")
        const sent = yield* send(fresh(after))
        assert.match(outputOf(sent, "c2"), sameAs(1, 3))
        assert.strictEqual(outputOf(sent, "b1"), tagged(2, listing("src/b.ts", source)))
        assert.strictEqual((yield* waiting)?.calls, 1)
      }),
      auto
    ))

  for (const [cache, gap] of [["a warm", "1 minute"], ["an expired", "6 minutes"]] as const) {
    it.effect(`a delivered repeat counts once in the statistics and, on ${cache} cache, as no application`, () =>
      withRepeats(
        Effect.gen(function*() {
          const only = [...before, assistant([read("c2")])]
          yield* send(fresh(before))
          yield* TestClock.adjust(gap)
          yield* send(fresh(only))
          yield* TestClock.adjust("1 minute")
          yield* send(fresh(only))
          const { stats } = yield* stateOf(sessionID)
          assert.strictEqual(stats.calls, 1)
          assert.strictEqual(stats.byReason.repeat?.calls, 1)
          assert.isAbove(stats.tokens, 0)
          assert.deepStrictEqual(stats.applications, { count: 0, cold: 0, rebuiltTokens: 0 })
        }),
        auto
      ))
  }
})

describe("repeats: the earlier copy pruned later", () => {
  const before = [user("read a.ts"), assistant([read("c1")])]
  const after = [...before, assistant([read("c2")])]

  /** Request 2 prunes c2 as a repeat of c1; the model then discards c1, and request 3 carries that. */
  const discarded = Effect.gen(function*() {
    const first = yield* firstSendOf(before, after)
    const reply = yield* discard(sessionID, ["noise", "1"])
    const history = [
      ...after,
      assistant([tool({ tool: "discard", callID: "d1", input: { ids: ["noise", "1"] }, output: reply })])
    ]
    const next = yield* send(fresh(history))
    return { first, next, history }
  })
  const stored = { messages: { [sessionID]: after } }

  it.effect("drops the repeat's pointer in the request that carries the discard: it is recalled by its own ID", () =>
    withRepeats(Effect.gen(function*() {
      const { first, next } = yield* discarded
      assert.match(outputOf(first, "c2"), sameAs(1, 2))
      assert.strictEqual(outputOf(next, "c1"), "[pruned: src/a.ts lines 1-120; recall 1]")
      assert.strictEqual(outputOf(next, "c2"), "[pruned: src/a.ts lines 1-120; recall 2]")
    })))

  it.effect("keeps the repeat's new placeholder byte-identical on later requests", () =>
    withRepeats(Effect.gen(function*() {
      const { history, next } = yield* discarded
      const glob = tool({ tool: "glob", callID: "c5", input: { pattern: "**/*.ts" }, output: "src/a.ts" })
      const later = yield* send(fresh([...history, assistant([glob])]))
      assert.strictEqual(outputOf(later, "c2"), outputOf(next, "c2"))
    })))

  it.effect("drops the pointer when a newer run of the same command makes the earlier copy a duplicate", () =>
    withRepeats(Effect.gen(function*() {
      const twice = [user("run the tests"), assistant([bash("b1", testOutput(2))])]
      const first = yield* firstSendOf(twice, [...twice, assistant([bash("b2", testOutput(2))])])
      const next = yield* send(fresh([
        ...twice,
        assistant([bash("b2", testOutput(2))]),
        assistant([bash("b3", testOutput(0))])
      ]))
      assert.match(outputOf(first, "b2"), sameAs(1, 2))
      assert.match(outputOf(next, "b1"), /^\[pruned duplicate; recall 1\]$/)
      assert.match(outputOf(next, "b2"), /^\[pruned; recall 2\]$/)
      assert.strictEqual(outputOf(next, "b3"), tagged(3, testOutput(0)))
    })))

  it.effect("a new identical re-read is then sent whole: no copy is left in full to point to", () =>
    withRepeats(Effect.gen(function*() {
      const { history } = yield* discarded
      const sent = yield* send(fresh([...history, assistant([read("c4")])]))
      assert.strictEqual(outputOf(sent, "c4"), tagged(4, whole))
    })))

  it.effect("recall of the repeat's ID returns its original output from the stored session", () =>
    withRepeats(
      Effect.gen(function*() {
        yield* discarded
        const reply = yield* recall(sessionID, { ids: ["2"] })
        assert.strictEqual(reply, `Original content of id 2 (read src/a.ts), as stored:\n${whole}`)
      }),
      repeatsOn,
      stored
    ))

  it.effect("recall of the earlier copy's ID returns its original output", () =>
    withRepeats(
      Effect.gen(function*() {
        yield* discarded
        const reply = yield* recall(sessionID, { ids: ["1"] })
        assert.strictEqual(reply, `Original content of id 1 (read src/a.ts), as stored:\n${whole}`)
      }),
      repeatsOn,
      stored
    ))
})

describe("repeats: disabled", () => {
  it.effect("with strategies.repeats.enabled false an unchanged re-read is sent whole, tagged", () =>
    withRepeats(
      Effect.gen(function*() {
        const before = [user("read a.ts"), assistant([read("c1")])]
        const sent = yield* firstSendOf(before, [...before, assistant([read("c2")])])
        assert.strictEqual(outputOf(sent, "c2"), tagged(2, whole))
        assert.notProperty((yield* stateOf(sessionID)).pruned, "c2")
      }),
      { strategies: { repeats: { enabled: false } } }
    ))
})

describe("repeats: a todo list read back", () => {
  const todos = [
    { content: "Read the config loader and list every key it accepts", status: "completed", priority: "high" },
    { content: "Write the failing test for a missing key", status: "in_progress", priority: "medium" },
    { content: "Make a missing key fall back to its default", status: "pending", priority: "low" }
  ]
  /** As OpenCode's todowrite answers: the list it was given, decoded (keys in its schema's order), pretty-printed. */
  const todowrite = (callID: string, input: ReadonlyArray<Record<string, string>>, output = todos) =>
    tool({ tool: "todowrite", callID, input: { todos: input }, output: JSON.stringify(output, null, 2) })
  const before = [user("plan it"), assistant([read("c1")])]

  it.effect("is a placeholder pointing at the call's own input, which stays whole", () =>
    withRepeats(Effect.gen(function*() {
      const sent = yield* firstSendOf(before, [...before, assistant([todowrite("t1", todos)])])
      assert.match(outputOf(sent, "t1"), /^\[the same list as this call's input; recall 2\]$/)
      assert.deepStrictEqual(toolPart(sent, "t1").state.input, { todos })
      assert.deepStrictEqual((yield* stateOf(sessionID)).pruned.t1?.of, { id: 2, kind: "input" })
    })))

  it.effect("is a placeholder when the model gave each item's keys in another order", () =>
    withRepeats(Effect.gen(function*() {
      const reordered = todos.map(({ content, priority, status }) => ({ status, priority, content }))
      const sent = yield* firstSendOf(before, [...before, assistant([todowrite("t1", reordered)])])
      assert.match(outputOf(sent, "t1"), /^\[the same list as this call's input; recall 2\]$/)
    })))

  it.effect("is sent whole when the output holds something else than the input", () =>
    withRepeats(Effect.gen(function*() {
      const extra = todos.map((todo, i) => ({ ...todo, note: `step ${i}` }))
      const sent = yield* firstSendOf(before, [...before, assistant([todowrite("t1", extra)])])
      assert.strictEqual(outputOf(sent, "t1"), JSON.stringify(todos, null, 2))
    })))
})
