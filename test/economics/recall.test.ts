import { assert, describe as effectDescribe, it as effectIt } from "@effect/vitest"
import { Effect, Result } from "effect"
import { describe, it } from "vitest"
import { formatRecall, originalContent, searchPruned, storedToolParts } from "../../src/engine/recall.ts"
import { validateRecall } from "../../src/engine/validate.ts"
import { discard, recall } from "../../src/hooks/tools.ts"
import { assistant, fresh, type Msg, sessionID, text, tool, toolPart, user } from "../support/history.ts"
import { toolContext } from "../support/plugin.ts"
import { pluginHooks, send, stateOf, pipelineTest } from "../pipeline/helpers.ts"
import { content, read } from "./support.ts"

const pruned = new Map([["call_a", {}], ["call_b", {}]])
/** What every refusal of a recall that asks for neither, or both, says is valid. */
const usage =
  'Give ids, the numbers of placeholders\' "recall N" or of folded calls\' "#N" (e.g. {"ids": ["17"]}: whole outputs), or query, words to find in pruned and folded outputs (e.g. {"query": "parseConfig"}: the lines that hold them).'
const ids = new Map([[1, "call_a"], [2, "call_b"], [3, "call_c"]])
const validate = (list: ReadonlyArray<unknown>) => validateArgs({ ids: list })
const validateArgs = (args: { ids?: ReadonlyArray<unknown> | null; query?: unknown }) =>
  validateRecall(args, { callOf: (id) => ids.get(id), pruned, folded: new Map() })
const failure = (list: ReadonlyArray<unknown>) => failureOf({ ids: list })
const failureOf = (args: { ids?: ReadonlyArray<unknown> | null; query?: unknown }) => {
  const result = validateArgs(args)
  if (Result.isSuccess(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.success)}`)
  return result.failure
}

describe("validateRecall", () => {
  it("returns the pruned calls named, in order", () => {
    assert.deepStrictEqual(
      validate(["2", "1"]),
      Result.succeed({ kind: "ids", calls: [{ id: 2, callID: "call_b" }, { id: 1, callID: "call_a" }] })
    )
  })

  it("accepts numbers and padded strings", () => {
    assert.deepStrictEqual(
      validate([1, " 2 "]),
      Result.succeed({ kind: "ids", calls: [{ id: 1, callID: "call_a" }, { id: 2, callID: "call_b" }] })
    )
  })

  it("returns an id listed twice once", () => {
    assert.deepStrictEqual(validate(["1", "1"]), Result.succeed({ kind: "ids", calls: [{ id: 1, callID: "call_a" }] }))
  })

  it("rejects an empty list, saying what to pass", () => {
    assert.strictEqual(
      failure([]),
      `Nothing was recalled.\nids is empty. ${usage}`
    )
  })

  it("rejects a non-numeric id", () => {
    assert.strictEqual(
      failure(["abc"]),
      'Nothing was recalled.\n"abc" is not a numeric id; use the number after "recall" in a placeholder.'
    )
  })

  it("rejects a negative or fractional id as non-numeric", () => {
    assert.include(failure(["-1"]), '"-1" is not a numeric id')
    assert.include(failure(["1.5"]), '"1.5" is not a numeric id')
  })

  it("rejects an unknown id", () => {
    assert.strictEqual(failure(["9"]), "Nothing was recalled.\nThere is no tool call with id 9 in this conversation.")
  })

  it("rejects an id that is not pruned", () => {
    assert.strictEqual(
      failure(["3"]),
      "Nothing was recalled.\nid 3 is not pruned: its content is already in the conversation."
    )
  })

  it("returns nothing when one id of several is wrong, and names every problem", () => {
    const message = failure(["1", "x", "3", "9"])
    assert.deepStrictEqual(message.split("\n"), [
      "Nothing was recalled.",
      '"x" is not a numeric id; use the number after "recall" in a placeholder.',
      "id 3 is not pruned: its content is already in the conversation.",
      "There is no tool call with id 9 in this conversation."
    ])
  })
})

describe("validateRecall with a query", () => {
  it("returns the query, trimmed", () => {
    assert.deepStrictEqual(
      validateArgs({ query: "  parseConfig  " }),
      Result.succeed({ kind: "query", query: "parseConfig" })
    )
  })

  it("takes a query beside an empty list of ids, or ids beside a blank query", () => {
    assert.deepStrictEqual(validateArgs({ ids: [], query: "x" }), Result.succeed({ kind: "query", query: "x" }))
    assert.deepStrictEqual(
      validateArgs({ ids: ["1"], query: " " }),
      Result.succeed({ kind: "ids", calls: [{ id: 1, callID: "call_a" }] })
    )
  })

  it("rejects a blank query, saying what to pass", () => {
    assert.strictEqual(failureOf({ query: "   " }), `Nothing was recalled.\nquery is empty. ${usage}`)
  })

  it("rejects a call with neither ids nor query", () => {
    assert.strictEqual(failureOf({}), `Nothing was recalled.\nNeither ids nor query was given. ${usage}`)
    assert.strictEqual(
      failureOf({ ids: null, query: null }),
      `Nothing was recalled.\nNeither ids nor query was given. ${usage}`
    )
  })

  it("rejects a call with both", () => {
    assert.strictEqual(
      failureOf({ ids: ["1"], query: "parseConfig" }),
      `Nothing was recalled.\nGive ids or query, not both: ids returns whole outputs, query the lines of all of them that hold its words. ${usage}`
    )
  })

  it("rejects a query that is not text, naming what it was", () => {
    assert.strictEqual(
      failureOf({ query: ["parseConfig"] }),
      `Nothing was recalled.\nquery must be text, the words to find; found ["parseConfig"]. ${usage}`
    )
    assert.include(failureOf({ query: 17 }), "query must be text, the words to find; found 17.")
  })

  it("rejects a query of several lines or of more than 200 characters", () => {
    assert.match(failureOf({ query: "a\nb" }), /^Nothing was recalled\.\nquery must be one line: /)
    assert.strictEqual(
      failureOf({ query: "x".repeat(201) }),
      "Nothing was recalled.\nquery is 201 characters long; give at most 200: a few words that the line you are looking for holds."
    )
  })
})

describe("searchPruned", () => {
  const server = [
    "<path>/srv/app/src/server.ts</path>",
    "1: import { parseConfig } from './config'",
    "2: export const createServer = (port: number) => {",
    "3:   const config = parseConfig(process.env)",
    "4: }"
  ].join("\n")
  const grep = ["src/app.ts:4: const server = createServer(8080)", "src/cli.ts:9: createServer(port)"].join("\n")

  it("returns the lines holding every word, case-insensitively, under the id that recalls the whole output", () => {
    assert.strictEqual(
      searchPruned("PARSECONFIG process", [{ id: 4, label: "read src/server.ts", content: server }]),
      [
        '1 line of the 1 pruned or folded output match "PARSECONFIG process". recall({ ids }) returns an output whole.',
        "id 4 (read src/server.ts):",
        "  3:   const config = parseConfig(process.env)"
      ].join("\n")
    )
  })

  it("ranks lines holding the query as written first, then newer outputs before older ones, each in line order", () => {
    const reply = searchPruned("createServer(port", [
      { id: 4, label: "read src/server.ts", content: server },
      { id: 9, label: "grep createServer", content: grep }
    ])
    assert.deepStrictEqual(reply.split("\n").slice(1), [
      "id 9 (grep createServer):",
      "  src/cli.ts:9: createServer(port)"
    ])
    const words = searchPruned("createServer port", [
      { id: 4, label: "read src/server.ts", content: server },
      { id: 9, label: "grep createServer", content: grep }
    ])
    assert.deepStrictEqual(words.split("\n").slice(1), [
      "id 9 (grep createServer):",
      "  src/cli.ts:9: createServer(port)",
      "id 4 (read src/server.ts):",
      "  2: export const createServer = (port: number) => {"
    ])
  })

  it("shows a line several outputs hold once, under the newest", () => {
    const reply = searchPruned("parseConfig(process", [
      { id: 4, label: "read src/server.ts", content: server },
      { id: 7, label: "read src/server.ts", content: server }
    ])
    assert.deepStrictEqual(reply.split("\n").slice(1), [
      "id 7 (read src/server.ts):",
      "  3:   const config = parseConfig(process.env)"
    ])
  })

  it("shows at most 20 lines and says how many more matched, in how many outputs", () => {
    const many = (label: string) =>
      Array.from({ length: 15 }, (_, i) => `${label} line ${i} holds the needle`).join("\n")
    const reply = searchPruned("needle", [
      { id: 1, label: "bash a", content: many("a") },
      { id: 2, label: "bash b", content: many("b") }
    ])
    const lines = reply.split("\n")
    assert.strictEqual(
      lines[0],
      '30 lines of the 2 pruned or folded outputs match "needle"; the first 20 shown. recall({ ids }) returns an output whole.'
    )
    assert.strictEqual(lines.filter((line) => line.startsWith("  ")).length, 20)
    assert.strictEqual(
      lines.at(-1),
      "…and 10 more matching lines in 1 output not shown: add words to the query to narrow it."
    )
  })

  it("cuts a long line", () => {
    const reply = searchPruned("needle", [{ id: 1, label: "bash a", content: `needle ${"x".repeat(400)}` }])
    assert.strictEqual(reply.split("\n")[2], `  needle ${"x".repeat(192)}…`)
  })

  it("says when nothing matched, and which words are in no output", () => {
    assert.strictEqual(
      searchPruned("parseConfig nowhere", [{ id: 4, label: "read src/server.ts", content: server }]),
      'No line of the 1 pruned or folded output matches "parseConfig nowhere": "nowhere" is in none of them. What the conversation shows in full is not searched.'
    )
    assert.strictEqual(
      searchPruned("import createServer", [{ id: 4, label: "read src/server.ts", content: server }]),
      'No line of the 1 pruned or folded output matches "import createServer": each word is in one of them, but no line holds them all: try fewer words. What the conversation shows in full is not searched.'
    )
  })
})

describe("storedToolParts", () => {
  it("indexes the tool parts of a stored session by callID", () => {
    const messages = [user("go"), assistant([read("c1", "src/a.ts"), text("done"), read("c2", "src/b.ts")])]
    const parts = storedToolParts(messages)
    assert.deepStrictEqual([...parts.keys()], ["c1", "c2"])
    assert.strictEqual(parts.get("c2")?.tool, "read")
  })

  it("skips malformed messages and parts", () => {
    const parts = storedToolParts([null, { info: {} }, {
      parts: [null, { type: "tool" }, { type: "tool", callID: "ok", tool: "x" }]
    }])
    assert.deepStrictEqual([...parts.keys()], ["ok"])
  })
})

describe("originalContent", () => {
  const part = (tool: string, state: Record<string, unknown>) => ({ type: "tool", callID: "c", tool, state })

  it("is the output of a completed call", () => {
    assert.strictEqual(
      originalContent(
        part("read", { status: "completed", input: { filePath: "a.ts" }, output: "the file" }),
        "deduplication"
      ),
      "the file"
    )
  })

  it("is the written content of a superseded write", () => {
    assert.strictEqual(
      originalContent(
        part("write", { status: "completed", input: { filePath: "a.ts", content: "new body" }, output: "Wrote" }),
        "supersedeWrites"
      ),
      "content:\nnew body"
    )
  })

  it("is both strings of a superseded edit", () => {
    const state = {
      status: "completed",
      input: { filePath: "a.ts", oldString: "old", newString: "new" },
      output: "Edited"
    }
    assert.strictEqual(originalContent(part("edit", state), "supersedeWrites"), "oldString:\nold\n\nnewString:\nnew")
  })

  it("is the content of an old file change masked with the stale outputs, the output of any other call", () => {
    const edit = {
      status: "completed",
      input: { filePath: "a.ts", oldString: "old", newString: "new" },
      output: "Edited"
    }
    assert.strictEqual(originalContent(part("edit", edit), "staleOutputs"), "oldString:\nold\n\nnewString:\nnew")
    const read = { status: "completed", input: { filePath: "a.ts" }, output: "the file" }
    assert.strictEqual(originalContent(part("read", read), "staleOutputs"), "the file")
  })

  it("is the string inputs of a failed call", () => {
    const state = { status: "error", input: { command: "make all", timeout: 5 }, error: "exit 2" }
    assert.strictEqual(originalContent(part("bash", state), "purgeErrors"), "command:\nmake all")
  })

  it("is the questions of a question call", () => {
    const state = { status: "completed", input: { questions: [{ question: "Which?" }] }, output: "a" }
    assert.strictEqual(
      originalContent(part("question", state), "discard"),
      `questions:\n${JSON.stringify([{ question: "Which?" }], null, 2)}`
    )
  })

  it("is a non-text output as JSON", () => {
    assert.strictEqual(
      originalContent(part("bash", { status: "completed", input: {}, output: { files: ["a"] } }), "discard"),
      '{"files":["a"]}'
    )
  })
})

describe("formatRecall", () => {
  it("shows each original under its id and label", () => {
    assert.strictEqual(
      formatRecall([{ id: 4, label: "read src/a.ts", content: "body" }]),
      "Original content of id 4 (read src/a.ts), as stored:\nbody"
    )
  })

  it("says when an original is gone from the stored session", () => {
    assert.strictEqual(
      formatRecall([{ id: 4, label: "read src/a.ts", content: undefined }]),
      "id 4 (read src/a.ts): the original is no longer in the stored session (compacted or deleted)."
    )
  })

  it("separates several entries with a blank line", () => {
    assert.lengthOf(
      formatRecall([{ id: 1, label: "a", content: "x" }, { id: 2, label: "b", content: "y" }]).split("\n\n"),
      2
    )
  })
})

/**
 * IDs by position: 1 a read of a.ts (a duplicate of 5), 2 a write of new.ts (read again by 4), 3 a failed bash
 * (older than purgeErrors.turns by the end), 4 the read of new.ts, 5 the newest read of a.ts, 6 a grep nobody
 * prunes.
 */
const written = content("written", 120)
const command = `node scripts/migrate.js ${"--table users ".repeat(20)}`
const session: Array<Msg> = [
  user("migrate"),
  assistant([read("c1", "src/a.ts")]),
  assistant([
    tool({
      tool: "write",
      callID: "w1",
      input: { filePath: "src/new.ts", content: written },
      output: "Wrote file successfully."
    })
  ]),
  assistant([tool({ tool: "bash", callID: "e1", input: { command }, error: "Error: table users is locked" })]),
  assistant([read("r1", "src/new.ts", written)]),
  assistant([read("c5", "src/a.ts")]),
  assistant([text("thinking")]),
  assistant([text("still thinking")]),
  assistant([tool({ tool: "grep", callID: "g1", input: { pattern: "TODO" }, output: content("grep") })])
]

/** The plugin whose host stores `stored` for the session, after `session` was sent once (prunes applied at once). */
const afterOneRequest = <A, E, R>(
  program: Effect.Effect<A, E, R>,
  options: { stored?: ReadonlyArray<unknown>; config?: object } = {}
) =>
  pipelineTest(Effect.andThen(send(fresh(session)), program), options.config ?? {}, {
    host: { messages: { [sessionID]: options.stored ?? session } }
  })

const rejection = <A, E extends { message: string }, R>(program: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(program), (error) => error.message)

effectDescribe("recall", () => {
  effectIt.effect(
    "the session as sent has ids 1, 2 and 3 pruned, each for its own reason",
    () =>
      afterOneRequest(Effect.gen(function*() {
        const state = yield* stateOf(sessionID)
        assert.deepStrictEqual(
          Object.fromEntries(
            Object.entries(state.pruned).map(([callID, record]) => [state.ids[callID], record.reason])
          ),
          { 1: "deduplication", 2: "supersedeWrites", 3: "purgeErrors" }
        )
      }))
  )

  effectIt.effect("returns the original output of a pruned call", () =>
    afterOneRequest(Effect.gen(function*() {
      const reply = yield* recall(sessionID, { ids: ["1"] })
      assert.strictEqual(
        reply,
        `Original content of id 1 (read src/a.ts), as stored:\n${content("src/a.ts")}`
      )
    })))

  effectIt.effect(
    "returns the original written content of a superseded write",
    () =>
      afterOneRequest(Effect.gen(function*() {
        const reply = yield* recall(sessionID, { ids: ["2"] })
        assert.strictEqual(
          reply,
          `Original content of id 2 (write src/new.ts), as stored:\ncontent:\n${written}`
        )
      }))
  )

  effectIt.effect("returns the original inputs of a purged failed call", () =>
    afterOneRequest(Effect.gen(function*() {
      const reply = yield* recall(sessionID, { ids: ["3"] })
      assert.include(reply, "Original content of id 3 (bash node scripts/migrate.js")
      assert.include(reply, `as stored:\ncommand:\n${command}`)
    })))

  effectIt.effect(
    "returns several originals at once, in the order asked",
    () =>
      afterOneRequest(Effect.gen(function*() {
        const reply = yield* recall(sessionID, { ids: ["3", "1"] })
        const entries = reply.split("\n\nOriginal content of ")
        assert.strictEqual(entries.length, 2)
        assert.match(entries[0]!, /^Original content of id 3 \(bash /)
        assert.match(entries[1]!, /^id 1 \(read src\/a\.ts\)/)
        assert.include(reply, content("src/a.ts"))
        assert.include(reply, command)
      }))
  )

  effectIt.effect(
    "does not un-prune: the next request still carries the placeholder",
    () =>
      afterOneRequest(Effect.gen(function*() {
        yield* recall(sessionID, { ids: ["1"] })
        const next = yield* send(fresh(session))
        assert.match(toolPart(next, "c1").state.output, /^\[pruned duplicate; recall 1\]$/)
      }))
  )

  effectIt.effect("says so when the original is gone from the stored session", () =>
    afterOneRequest(
      Effect.gen(function*() {
        const reply = yield* recall(sessionID, { ids: ["1"] })
        assert.strictEqual(
          reply,
          "id 1 (read src/a.ts): the original is no longer in the stored session (compacted or deleted)."
        )
      }),
      { stored: session.filter((message) => !message.parts.some((part) => part.callID === "c1")) }
    ))

  effectIt.effect("rejects an empty list", () =>
    afterOneRequest(Effect.gen(function*() {
      assert.match(yield* rejection(recall(sessionID, { ids: [] })), /^Nothing was recalled\.\nids is empty\. /)
    })))

  effectIt.effect("rejects a non-numeric id", () =>
    afterOneRequest(Effect.gen(function*() {
      assert.include(yield* rejection(recall(sessionID, { ids: ["src/a.ts"] })), '"src/a.ts" is not a numeric id')
    })))

  effectIt.effect("rejects an unknown id", () =>
    afterOneRequest(Effect.gen(function*() {
      assert.include(
        yield* rejection(recall(sessionID, { ids: ["42"] })),
        "There is no tool call with id 42 in this conversation."
      )
    })))

  effectIt.effect(
    "rejects an id that is not pruned, and returns none of the others",
    () =>
      afterOneRequest(Effect.gen(function*() {
        const message = yield* rejection(recall(sessionID, { ids: ["1", "6"] }))
        assert.strictEqual(
          message,
          "Nothing was recalled.\nid 6 is not pruned: its content is already in the conversation."
        )
      }))
  )

  effectIt.effect("is refused in a sub-agent session", () =>
    Effect.gen(function*() {
      const message = yield* pipelineTest(rejection(recall(sessionID, { ids: ["1"] })), {}, {
        host: { sessions: { [sessionID]: { parentID: "ses_parent" } } }
      })
      assert.strictEqual(message, "Nothing is pruned in sub-agent sessions.")
    }))

  effectIt.effect("a recall output can itself be pruned later", () =>
    afterOneRequest(Effect.gen(function*() {
      const reply = yield* recall(sessionID, { ids: ["1"] })
      const withRecall = [
        ...session,
        assistant([tool({ tool: "recall", callID: "rc1", input: { ids: ["1"] }, output: reply })])
      ]
      yield* send(fresh(withRecall))
      const state = yield* stateOf(sessionID)
      const recallId = state.ids.rc1!
      yield* discard(sessionID, ["completion", String(recallId)])
      const next = yield* send(fresh(withRecall))
      assert.match(
        toolPart(next, "rc1").state.output,
        new RegExp(`^\\[pruned; recall ${recallId}\\]$`)
      )
    })))
})

effectDescribe("recall by query", () => {
  const x = (label: string) => "x".repeat(40 - label.length)

  effectIt.effect(
    "returns the matching lines of pruned outputs and inputs, each under its id, not those still sent",
    () =>
      afterOneRequest(Effect.gen(function*() {
        const reply = yield* recall(sessionID, { query: "0042" })
        assert.strictEqual(
          reply,
          [
            '2 lines of the 3 pruned or folded outputs match "0042". recall({ ids }) returns an output whole.',
            "id 2 (write src/new.ts):",
            `  written 0042: ${x("written")}`,
            "id 1 (read src/a.ts):",
            `  src/a.ts 0042: ${x("src/a.ts")}`
          ].join("\n")
        )
      }))
  )

  effectIt.effect("finds a failed call's pruned input", () =>
    afterOneRequest(Effect.gen(function*() {
      const reply = yield* recall(sessionID, { query: "migrate.js" })
      const [, heading, line] = reply.split("\n")
      assert.match(heading!, /^id 3 \(bash node scripts\/migrate\.js --table users .*\):$/)
      assert.strictEqual(line, `  ${command.slice(0, 199)}…`)
    })))

  effectIt.effect(
    "shows 20 lines at most and says how many more matched",
    () =>
      afterOneRequest(Effect.gen(function*() {
        const lines = (yield* recall(sessionID, { query: "src/a.ts" })).split("\n")
        assert.strictEqual(
          lines[0],
          '200 lines of the 3 pruned or folded outputs match "src/a.ts"; the first 20 shown. recall({ ids }) returns an output whole.'
        )
        assert.deepStrictEqual(lines.slice(1, 3), ["id 1 (read src/a.ts):", `  src/a.ts 0001: ${x("src/a.ts")}`])
        assert.strictEqual(
          lines.at(-1),
          "…and 180 more matching lines in 1 output not shown: add words to the query to narrow it."
        )
      }))
  )

  effectIt.effect("says so when no line matches", () =>
    afterOneRequest(Effect.gen(function*() {
      assert.strictEqual(
        yield* recall(sessionID, { query: "TODO" }),
        'No line of the 3 pruned or folded outputs matches "TODO": "todo" is in none of them. What the conversation shows in full is not searched.'
      )
    })))

  effectIt.effect("rejects a blank query, and one that is not text", () =>
    afterOneRequest(Effect.gen(function*() {
      assert.match(yield* rejection(recall(sessionID, { query: " " })), /^Nothing was recalled\.\nquery is empty\. /)
      assert.match(
        yield* rejection(recall(sessionID, { query: { text: "a" } })),
        /^Nothing was recalled\.\nquery must be text, the words to find; found \{"text":"a"\}\. /
      )
    })))

  effectIt.effect("says there is nothing to search when nothing is pruned", () =>
    pipelineTest(Effect.gen(function*() {
      yield* send(fresh(session.slice(0, 2)))
      assert.strictEqual(
        yield* rejection(recall(sessionID, { query: "0042" })),
        "Nothing was recalled.\nNo output is pruned or folded in this conversation: there is nothing to search."
      )
    })))
})

effectDescribe("placeholders name the way back", () => {
  effectIt.effect("say `recall N` when the recall tool is enabled", () =>
    Effect.gen(function*() {
      const sent = yield* pipelineTest(send(fresh(session)))
      assert.match(toolPart(sent, "c1").state.output, /; recall 1\]$/)
      assert.match(toolPart(sent, "w1").state.input.content, /; recall 2\]$/)
      assert.match(toolPart(sent, "e1").state.input.command, /; recall 3\]$/)
    }))

  effectIt.effect("say `id N` when the recall tool is disabled", () =>
    Effect.gen(function*() {
      const sent = yield* pipelineTest(send(fresh(session)), { tools: { recall: { enabled: false } } })
      assert.match(toolPart(sent, "c1").state.output, /; id 1\]$/)
      assert.match(toolPart(sent, "w1").state.input.content, /; id 2\]$/)
      assert.match(toolPart(sent, "e1").state.input.command, /; id 3\]$/)
    }))
})

/**
 * The recall tool's `execute` as OpenCode calls it, after one request of `session` through the plugin's hooks: its
 * answer, or the error a refusal throws.
 */
const executeRecall = (args: Record<string, unknown>) =>
  Effect.gen(function*() {
    const { call, hooks } = yield* pluginHooks({ host: { messages: { [sessionID]: session } } })
    yield* call(() =>
      hooks["experimental.chat.messages.transform"]!({} as never, { messages: fresh(session) as never })
    )
    return yield* call(() =>
      hooks.tool!.recall!.execute(args as never, toolContext()).then(String, (error: unknown) => error)
    )
  })

effectDescribe("the recall tool in the plugin's hooks", () => {
  effectIt.effect("is registered when tools.recall.enabled (the default)", () =>
    Effect.gen(function*() {
      const { hooks } = yield* pluginHooks()
      assert.deepStrictEqual(Object.keys(hooks.tool ?? {}).sort(), ["discard", "extract", "recall"])
    }))

  effectIt.effect("is not registered when tools.recall.enabled is false", () =>
    Effect.gen(function*() {
      const { hooks } = yield* pluginHooks({ config: { tools: { recall: { enabled: false } } } })
      assert.deepStrictEqual(Object.keys(hooks.tool ?? {}).sort(), ["discard", "extract"])
    }))

  effectIt.effect("is added to OpenCode's primary tools only when registered", () =>
    Effect.gen(function*() {
      const { call, hooks } = yield* pluginHooks({ config: { tools: { recall: { enabled: false } } } })
      const opencode: { experimental?: { primary_tools?: Array<string> } } = {}
      yield* call(() => hooks.config!(opencode as never))
      assert.deepStrictEqual(opencode.experimental?.primary_tools, ["discard", "extract"])
    }))

  effectIt.effect("returns the original to the model through execute", () =>
    Effect.gen(function*() {
      assert.include(yield* executeRecall({ ids: ["1"] }), content("src/a.ts"))
    }))

  effectIt.effect("searches with a query through execute", () =>
    Effect.gen(function*() {
      assert.include(yield* executeRecall({ query: "written 0007" }), "id 2 (write src/new.ts):\n  written 0007: ")
    }))

  effectIt.effect(
    "a recall with both ids and a query is refused through execute, naming what is valid",
    () =>
      Effect.gen(function*() {
        const error = yield* executeRecall({ ids: ["1"], query: "x" })
        assert.instanceOf(error, Error)
        assert.match((error as Error).message, /Give ids or query, not both/)
      })
  )

  effectIt.effect(
    "a refused recall reaches the model as a failed tool call with the reason",
    () =>
      Effect.gen(function*() {
        const error = yield* executeRecall({ ids: ["6"] })
        assert.instanceOf(error, Error)
        assert.include((error as Error).message, "id 6 is not pruned")
      })
  )
})

effectDescribe("the recall tool when the plugin fails inside", () => {
  effectIt.effect(
    "tells the model that nothing was recalled, not that nothing was pruned",
    () =>
      Effect.gen(function*() {
        const { call, hooks } = yield* pluginHooks({ host: { failing: true } })
        const error = yield* call(() =>
          hooks.tool!.recall!.execute({ ids: ["1"] }, toolContext()).then(
            () => undefined,
            (error: unknown) => error
          )
        )
        assert.instanceOf(error, Error)
        assert.strictEqual(
          (error as Error).message,
          "Nothing was recalled.\nOpenCode did not answer the context pruning plugin (session.get)."
        )
      })
  )
})
