import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SessionStore } from "../../src/services/SessionStore.ts"
import { Tokenizer } from "../../src/services/Tokenizer.ts"
import { assistant, fresh, type Msg, sessionID, tool, toolPart, user } from "../support/history.ts"
import { pluginHooks, tagged, withoutTail } from "./helpers.ts"

/**
 * Host input the plugin cannot understand goes out exactly as it came, and does not stop the rest of the request
 * from being processed. Everything here goes through the real hook function (`makeHooks`).
 */

const output = Array.from({ length: 100 }, (_, i) => `line ${i}: some file content`).join("\n")

/** A request with a duplicate read (which must still be pruned) and room for one malformed thing. */
const requestWith = (options: { readonly part?: unknown; readonly message?: unknown }): Array<unknown> => {
  const calls = assistant([
    tool({ tool: "read", callID: "c1", input: { filePath: "src/a.ts" }, output }),
    tool({ tool: "read", callID: "c2", input: { filePath: "src/a.ts" }, output })
  ])
  if (options.part !== undefined) calls.parts.splice(1, 0, options.part as Record<string, unknown>)
  return [
    user("go"),
    ...(options.message === undefined ? [] : [options.message]),
    calls
  ]
}

const transformThroughHook = (messages: Array<unknown>, options: Parameters<typeof pluginHooks>[0] = {}) =>
  Effect.gen(function*() {
    const { call, hooks, run } = yield* pluginHooks(options)
    const result = yield* call(() =>
      hooks["experimental.chat.messages.transform"]!({} as never, { messages: messages as never })
    )
    return { result, messages, run }
  })

/** The first of the duplicate reads, wherever the malformed input put it. */
const firstReadPruned = (messages: Array<unknown>) => {
  const parts = messages.flatMap((message: any) => (Array.isArray(message?.parts) ? message.parts : []))
  return parts.find((part: any) => part?.callID === "c1").state as { output: string }
}

const toolPartOf = (state: unknown, extra: Record<string, unknown> = {}) => ({
  id: "prt_bad",
  sessionID,
  messageID: "msg_bad",
  type: "tool",
  callID: "c_bad",
  tool: "read",
  ...(state === undefined ? {} : { state }),
  ...extra
})

const malformedParts: ReadonlyArray<readonly [string, unknown]> = [
  ["a tool part without state", toolPartOf(undefined)],
  ["a tool part whose state has an unknown status", toolPartOf({ status: "exploded", input: {} })],
  ["a tool part whose input is a string", toolPartOf({ status: "completed", input: "src/a.ts", output })],
  ["a tool part whose input is an array", toolPartOf({ status: "completed", input: ["src/a.ts"], output })],
  ["a tool part whose input is null", toolPartOf({ status: "completed", input: null, output })],
  ["a tool part without a callID", {
    ...toolPartOf({ status: "completed", input: { filePath: "x" }, output }),
    callID: undefined
  }],
  ["a tool part whose state is a string", toolPartOf("completed")],
  ["a part of an unknown type", { id: "prt_new", type: "hologram", payload: { x: 1 } }],
  ["a part that is null", null],
  ["a part that is a number", 42],
  ["a part that is a string", "text"],
  ["a part that is an array", [1, 2]]
]

const malformedMessages: ReadonlyArray<readonly [string, unknown]> = [
  ["a message without info", { parts: [{ type: "text", text: "hi" }] }],
  ["a message whose info is null", { info: null, parts: [] }],
  ["a message with an unknown role", { info: { id: "m", sessionID, role: "system" }, parts: [] }],
  ["a message whose parts are not an array", { info: { id: "m", sessionID, role: "assistant" }, parts: "nope" }],
  ["a message that is null", null],
  ["a message that is a string", "hello"]
]

describe("malformed host input through the messages hook", () => {
  for (const [name, part] of malformedParts) {
    it.effect(`${name} goes out unmodified and the rest of the request is still pruned`, () =>
      Effect.gen(function*() {
        const messages = requestWith({ part })
        const before = structuredClone(messages)
        const { result } = yield* transformThroughHook(messages)
        assert.isUndefined(result)
        assert.deepStrictEqual((messages[1] as Msg).parts[1], (before[1] as Msg).parts[1])
        assert.match(firstReadPruned(messages).output, /^\[pruned duplicate; /)
      }))
  }

  for (const [name, message] of malformedMessages) {
    it.effect(`${name} goes out unmodified and the rest of the request is still pruned`, () =>
      Effect.gen(function*() {
        const messages = requestWith({ message })
        const before = structuredClone(messages)
        const { result } = yield* transformThroughHook(messages)
        assert.isUndefined(result)
        assert.deepStrictEqual(messages[1], before[1])
        assert.match(firstReadPruned(messages).output, /^\[pruned duplicate; /)
      }))
  }

  it.effect("outputs that are not strings go out unmodified and are never treated as duplicates", () =>
    Effect.gen(function*() {
      const history = [
        user("go"),
        assistant([
          tool({ tool: "read", callID: "c1", input: { filePath: "a" }, output: { lines: [output] } }),
          tool({ tool: "read", callID: "c2", input: { filePath: "a" }, output: { lines: [output] } }),
          tool({ tool: "bash", callID: "c3", input: { command: "ls" }, output: 42 }),
          tool({ tool: "bash", callID: "c4", input: { command: "ls" }, output: 42 }),
          tool({ tool: "grep", callID: "c5", input: { pattern: "x" }, output: null })
        ])
      ]
      const { messages, result } = yield* transformThroughHook(fresh(history))
      assert.isUndefined(result)
      assert.deepStrictEqual(withoutTail(messages), history)
    }))

  it.effect("a 10 MB output is counted and pruned without failing the request", () =>
    Effect.gen(function*() {
      const huge = "0123456789abcdef ".repeat(Math.ceil((10 * 1024 * 1024) / 17))
      const history = [
        user("go"),
        assistant([
          tool({ tool: "bash", callID: "c1", input: { command: "cat big.log" }, output: huge }),
          tool({ tool: "bash", callID: "c2", input: { command: "cat big.log" }, output: huge })
        ])
      ]
      const { messages, result, run } = yield* transformThroughHook(fresh(history), { tokenizer: Tokenizer.layer })
      assert.isUndefined(result)
      assert.match(toolPart(messages as Array<Msg>, "c1").state.output, /^\[pruned duplicate; (?:id|recall) 1\]$/)
      assert.strictEqual(toolPart(messages as Array<Msg>, "c2").state.output, tagged(2, huge))
      const saved = yield* run(
        SessionStore.use((store) => store.use(sessionID, (state) => Effect.succeed(state.pruned.get("c1")?.tokens)))
      )
      assert.isAbove(saved ?? 0, 1_000_000)
    }))

  it.effect("an empty history stays empty", () =>
    Effect.gen(function*() {
      const { messages, result } = yield* transformThroughHook([])
      assert.isUndefined(result)
      assert.deepStrictEqual(messages, [])
    }))

  const cyclic = () => {
    const input: Record<string, unknown> = { filePath: "src/b.ts" }
    input.self = input
    return input
  }
  let deep: unknown = "leaf"
  for (let i = 0; i < 20_000; i++) deep = { a: deep }
  const unserialisableInputs: ReadonlyArray<readonly [string, () => Record<string, unknown>]> = [
    ["a cycle", cyclic],
    ["a BigInt", () => ({ filePath: "src/b.ts", size: 10n })],
    ["nesting 20,000 deep", () => ({ filePath: "src/b.ts", deep })]
  ]
  for (const [what, input] of unserialisableInputs) {
    it.effect(`tool inputs holding ${what} are left as they are, and the rest of the request is still pruned`, () =>
      Effect.gen(function*() {
        const outputOf = (name: string) => `${name} output\n`.repeat(300)
        const odd = [
          tool({ tool: "read", callID: "odd0", input: input(), output: outputOf("read") }),
          tool({ tool: "question", callID: "odd1", input: { questions: [input()] }, output: outputOf("question") }),
          tool({ tool: "bash", callID: "odd2", input: input(), output: outputOf("bash") }),
          tool({ tool: "edit", callID: "odd3", input: { ...input(), oldString: "x" }, error: "no match" }),
          tool({ tool: "multiedit", callID: "odd4", input: { filePath: "src/c.ts", edits: [input()] }, output: "ok" }),
          tool({ tool: "read", callID: "odd5", input: { filePath: "src/c.ts" }, output: outputOf("c") }),
          tool({ tool: "bash", callID: "odd7", input: { command: "make" }, error: "failed" })
        ]
        const message = assistant(odd)
        // An error that is an object holding what JSON cannot write.
        toolPart([message], "odd7").state.error = { exitCode: 2n, detail: input() }
        const messages = requestWith({ message })
        const { result } = yield* transformThroughHook(messages)
        assert.isUndefined(result)
        assert.match(firstReadPruned(messages).output, /^\[pruned duplicate; /)
        for (const name of ["odd0", "odd2"]) {
          assert.match(toolPart(messages as Array<Msg>, name).state.output, /^\[id \d+\]\n/)
        }
      }))
  }

  it.effect("a history without any session ID goes out unmodified", () =>
    Effect.gen(function*() {
      const history = requestWith({}).map((message) => {
        const { sessionID: _id, ...info } = (message as Msg).info
        return { ...(message as Msg), info }
      })
      const { messages, result } = yield* transformThroughHook(structuredClone(history))
      assert.isUndefined(result)
      assert.deepStrictEqual(messages, history)
    }))

  it.effect("a history with an invalid session ID goes out unmodified", () =>
    Effect.gen(function*() {
      const history = [
        user("go", { session: "../../etc" }),
        assistant([
          tool({ tool: "read", callID: "c1", input: { filePath: "a" }, output }),
          tool({ tool: "read", callID: "c2", input: { filePath: "a" }, output })
        ], { session: "../../etc" })
      ]
      const { messages, result } = yield* transformThroughHook(fresh(history))
      assert.isUndefined(result)
      assert.deepStrictEqual(messages, history)
    }))

  it.effect("when the host cannot say whether the session is a sub-agent, the request goes out unmodified", () =>
    Effect.gen(function*() {
      const history = requestWith({})
      const { messages, result } = yield* transformThroughHook(structuredClone(history), { host: { failing: true } })
      assert.isUndefined(result)
      assert.deepStrictEqual(messages, history)
    }))
})
