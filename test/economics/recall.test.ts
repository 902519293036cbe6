import { assert, describe as effectDescribe, it as effectIt } from "@effect/vitest"
import { Effect, Result } from "effect"
import { describe, it } from "vitest"
import { formatRecall, originalContent, storedToolParts } from "../../src/engine/recall.ts"
import { validateRecall } from "../../src/engine/validate.ts"
import { discard, recall } from "../../src/hooks/tools.ts"
import { assistant, fresh, type Msg, sessionID, text, tool, toolPart, user } from "../support/history.ts"
import { toolContext } from "../support/plugin.ts"
import { pluginHooks, send, stateOf, pipelineTest } from "../pipeline/helpers.ts"
import { content, read } from "./support.ts"

const pruned = new Map([["call_a", {}], ["call_b", {}]])
const ids = new Map([[1, "call_a"], [2, "call_b"], [3, "call_c"]])
const validate = (list: ReadonlyArray<unknown>) =>
  validateRecall(list, { callOf: (id) => ids.get(id), pruned, folded: new Map() })
const failure = (list: ReadonlyArray<unknown>) => {
  const result = validate(list)
  if (Result.isSuccess(result)) throw new Error(`expected a failure, got ${JSON.stringify(result.success)}`)
  return result.failure
}

describe("validateRecall", () => {
  it("returns the pruned calls named, in order", () => {
    assert.deepStrictEqual(
      validate(["2", "1"]),
      Result.succeed([{ id: 2, callID: "call_b" }, { id: 1, callID: "call_a" }])
    )
  })

  it("accepts numbers and padded strings", () => {
    assert.deepStrictEqual(
      validate([1, " 2 "]),
      Result.succeed([{ id: 1, callID: "call_a" }, { id: 2, callID: "call_b" }])
    )
  })

  it("returns an id listed twice once", () => {
    assert.deepStrictEqual(validate(["1", "1"]), Result.succeed([{ id: 1, callID: "call_a" }]))
  })

  it("rejects an empty list, saying what to pass", () => {
    assert.strictEqual(
      failure([]),
      'ids is empty. Pass the numbers shown in placeholders, e.g. ["17"] for "[pruned; recall 17]".'
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
      const reply = yield* recall(sessionID, ["1"])
      assert.strictEqual(
        reply,
        `Original content of id 1 (read src/a.ts), as stored:\n${content("src/a.ts")}`
      )
    })))

  effectIt.effect(
    "returns the original written content of a superseded write",
    () =>
      afterOneRequest(Effect.gen(function*() {
        const reply = yield* recall(sessionID, ["2"])
        assert.strictEqual(
          reply,
          `Original content of id 2 (write src/new.ts), as stored:\ncontent:\n${written}`
        )
      }))
  )

  effectIt.effect("returns the original inputs of a purged failed call", () =>
    afterOneRequest(Effect.gen(function*() {
      const reply = yield* recall(sessionID, ["3"])
      assert.include(reply, "Original content of id 3 (bash node scripts/migrate.js")
      assert.include(reply, `as stored:\ncommand:\n${command}`)
    })))

  effectIt.effect(
    "returns several originals at once, in the order asked",
    () =>
      afterOneRequest(Effect.gen(function*() {
        const reply = yield* recall(sessionID, ["3", "1"])
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
        yield* recall(sessionID, ["1"])
        const next = yield* send(fresh(session))
        assert.match(toolPart(next, "c1").state.output, /^\[pruned duplicate; recall 1\]$/)
      }))
  )

  effectIt.effect("says so when the original is gone from the stored session", () =>
    afterOneRequest(
      Effect.gen(function*() {
        const reply = yield* recall(sessionID, ["1"])
        assert.strictEqual(
          reply,
          "id 1 (read src/a.ts): the original is no longer in the stored session (compacted or deleted)."
        )
      }),
      { stored: session.filter((message) => !message.parts.some((part) => part.callID === "c1")) }
    ))

  effectIt.effect("rejects an empty list", () =>
    afterOneRequest(Effect.gen(function*() {
      assert.match(yield* rejection(recall(sessionID, [])), /^ids is empty\./)
    })))

  effectIt.effect("rejects a non-numeric id", () =>
    afterOneRequest(Effect.gen(function*() {
      assert.include(yield* rejection(recall(sessionID, ["src/a.ts"])), '"src/a.ts" is not a numeric id')
    })))

  effectIt.effect("rejects an unknown id", () =>
    afterOneRequest(Effect.gen(function*() {
      assert.include(
        yield* rejection(recall(sessionID, ["42"])),
        "There is no tool call with id 42 in this conversation."
      )
    })))

  effectIt.effect(
    "rejects an id that is not pruned, and returns none of the others",
    () =>
      afterOneRequest(Effect.gen(function*() {
        const message = yield* rejection(recall(sessionID, ["1", "6"]))
        assert.strictEqual(
          message,
          "Nothing was recalled.\nid 6 is not pruned: its content is already in the conversation."
        )
      }))
  )

  effectIt.effect("is refused in a sub-agent session", () =>
    Effect.gen(function*() {
      const message = yield* pipelineTest(rejection(recall(sessionID, ["1"])), {}, {
        host: { sessions: { [sessionID]: { parentID: "ses_parent" } } }
      })
      assert.strictEqual(message, "Nothing is pruned in sub-agent sessions.")
    }))

  effectIt.effect("a recall output can itself be pruned later", () =>
    afterOneRequest(Effect.gen(function*() {
      const reply = yield* recall(sessionID, ["1"])
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
      const { call, hooks } = yield* pluginHooks({ host: { messages: { [sessionID]: session } } })
      yield* call(() =>
        hooks["experimental.chat.messages.transform"]!({} as never, { messages: fresh(session) as never })
      )
      const reply = yield* call(() => hooks.tool!.recall!.execute({ ids: ["1"] }, toolContext()))
      assert.include(String(reply), content("src/a.ts"))
    }))

  effectIt.effect(
    "a refused recall reaches the model as a failed tool call with the reason",
    () =>
      Effect.gen(function*() {
        const { call, hooks } = yield* pluginHooks({ host: { messages: { [sessionID]: session } } })
        yield* call(() =>
          hooks["experimental.chat.messages.transform"]!({} as never, { messages: fresh(session) as never })
        )
        const error = yield* call(() =>
          hooks.tool!.recall!.execute({ ids: ["6"] }, toolContext()).then(
            () => undefined,
            (error: unknown) => error
          )
        )
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
