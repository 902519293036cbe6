import { mkdir } from "node:fs/promises"
import { join } from "node:path"
import { assert, beforeEach, describe, it } from "vitest"
import { assistant, fresh, sessionID, tool, toolPart, user } from "../support/history.ts"
import { type FakeClient, fakeClient } from "../support/fakeClient.ts"
import { loadPlugin, toolContext, useIsolatedHome } from "../support/plugin.ts"

/**
 * Every hook is fail-open from its first byte: whatever OpenCode (or a broken host, or another plugin) passes, a hook
 * returns normally, leaves what it was given as it came, and logs one line; a tool answers with a sentence that says
 * what was wrong. Everything here goes through the object the real plugin factory returns.
 */

const rootOf = useIsolatedHome("dcp-inputs-")
let root: string
beforeEach(() => {
  root = rootOf()
})

/** The hooks, to be called with what their types forbid. */
type AnyHooks = Record<string, any>
const load = async (client: FakeClient = fakeClient()) => (await loadPlugin(root, client)) as AnyHooks

const history = () => [
  user("read the file twice"),
  assistant([
    tool({ tool: "read", callID: "c1", input: { filePath: "/p/a.ts" }, output: "content ".repeat(200) }),
    tool({ tool: "read", callID: "c2", input: { filePath: "/p/a.ts" }, output: "content ".repeat(200) })
  ])
]

/** Warnings and errors the plugin sent to OpenCode's log, once its batch is out (it goes out on dispose). */
const logged = (client: FakeClient) =>
  client.calls.filter((call) => call.method === "app.log").map((call) =>
    (call.body as { body: { message: string } }).body.message
  )

const rejectionOf = (promise: Promise<unknown>): Promise<Error> =>
  promise.then(() => assert.fail("expected a rejection"), (error: Error) => error)

const garbage: ReadonlyArray<readonly [string, unknown]> = [
  ["null", null],
  ["undefined", undefined],
  ["a number", 42],
  ["a string", "x"],
  ["a list", [1, 2]],
  ["an empty object", {}]
]

const hookNames = [
  "config",
  "command.execute.before",
  "tool.definition",
  "experimental.chat.messages.transform",
  "experimental.chat.system.transform",
  "chat.message",
  "experimental.session.compacting",
  "event"
]

describe("hooks given what OpenCode never sends", () => {
  for (const [what, value] of garbage) {
    it(`every hook given ${what} as input and output returns normally, and the plugin still prunes`, async () => {
      const hooks = await load()
      for (const name of hookNames) {
        assert.isUndefined(await hooks[name](value, value), name)
      }
      const messages = fresh(history())
      await hooks["experimental.chat.messages.transform"]({}, { messages })
      assert.match(toolPart(messages, "c1").state.output, /^\[pruned duplicate; /)
      await hooks.dispose()
    })
  }

  it("an input that does not decode leaves the output as it came and logs one line", async () => {
    const client = fakeClient()
    const hooks = await load(client)
    const output = { system: ["You are OpenCode."] }
    await hooks["experimental.chat.system.transform"](null, output)
    await hooks.dispose()
    assert.deepStrictEqual(output, { system: ["You are OpenCode."] })
    assert.deepStrictEqual(logged(client), [
      "system.transform: left as it came, its input is not what OpenCode sends: the input: expected object, found null"
    ])
  })
})

const badSessionIds: ReadonlyArray<readonly [unknown, string]> = [
  [123, "Invalid session ID 123: it is a number, not a string."],
  [null, "Invalid session ID null: it is null."],
  [["ses_a"], 'Invalid session ID ["ses_a"]: it is a list, not a string.'],
  [{ id: "ses_a" }, 'Invalid session ID {"id":"ses_a"}: it is an object, not a string.'],
  [undefined, "Invalid session ID undefined: there is none."],
  ["", 'Invalid session ID "": it is empty.'],
  ["../ses_a", 'Invalid session ID "../ses_a": it contains a character other than an ASCII letter, digit, "_" or "-".']
]

describe("session IDs that cannot be one", () => {
  for (const [id, problem] of badSessionIds) {
    it(`the tools refuse ${JSON.stringify(id) ?? "undefined"} with a sentence that says why`, async () => {
      const hooks = await load()
      const context = { ...toolContext(), sessionID: id }
      const calls = [
        ["Nothing was pruned.", hooks.tool.discard.execute({ ids: ["noise", "1"] }, context)],
        ["Nothing was recalled.", hooks.tool.recall.execute({ ids: ["1"] }, context)],
        ["Nothing was pruned.", hooks.tool.extract.execute({ ids: ["1"], distillation: ["x"] }, context)]
      ] as const
      for (const [nothingDone, call] of calls) {
        assert.strictEqual(
          (await rejectionOf(call)).message,
          `${nothingDone}\nThe context pruning plugin cannot work in this session. ${problem} A session ID is 1 to ` +
            `128 ASCII letters, digits, "_" or "-", not starting with "-".`
        )
      }
      await hooks.dispose()
    })

    it(`the session hooks leave ${JSON.stringify(id) ?? "undefined"} alone, changing nothing`, async () => {
      const client = fakeClient()
      const hooks = await load(client)
      const system = { system: ["You are OpenCode."] }
      await hooks["experimental.chat.system.transform"]({ sessionID: id, model: {} }, system)
      await hooks["chat.message"]({ sessionID: id, agent: "build" }, {})
      const context = { context: [] }
      await hooks["experimental.session.compacting"]({ sessionID: id }, context)
      await hooks.event({ event: { type: "session.idle", properties: { sessionID: id } } })
      const messages = fresh(history()).map((message) => ({ ...message, info: { ...message.info, sessionID: id } }))
      const before = structuredClone(messages)
      await hooks["experimental.chat.messages.transform"]({}, { messages })
      assert.deepStrictEqual(messages, before)
      assert.deepStrictEqual(system, { system: ["You are OpenCode."] })
      assert.deepStrictEqual(context, { context: [] })
      await hooks.dispose()
      assert.isTrue(logged(client).every((line) => !line.includes("failed")), logged(client).join("\n"))
    })
  }

  it("/dcp in a session that cannot be one still stops the model turn, and runs nothing", async () => {
    const client = fakeClient()
    const hooks = await load(client)
    const thrown = await hooks["command.execute.before"]({ command: "dcp", sessionID: 5, arguments: "stats" }, {
      parts: []
    }).then(() => assert.fail("expected the hook to throw the response"), (value: unknown) => value)
    assert.deepInclude(thrown, { status: 200 })
    assert.isFalse(client.calls.some((call) => call.method === "session.prompt"))
    await hooks.dispose()
  })

  it("other commands pass whatever their session ID", async () => {
    const hooks = await load()
    assert.isUndefined(await hooks["command.execute.before"]({ command: "init", sessionID: 5 }, { parts: [] }))
    await hooks.dispose()
  })
})

describe("tool arguments that are not lists", () => {
  const cases: ReadonlyArray<readonly [string, unknown, string]> = [
    ["null", null, "the arguments: expected object, found null"],
    ["no ids", {}, "ids: expected a value, found nothing"],
    ["ids null", { ids: null }, "ids: expected array, found null"],
    ["ids a string", { ids: "noise 1" }, 'ids: expected array, found "noise 1"']
  ]
  for (const [what, args, problem] of cases) {
    it(`discard with ${what} is refused with what was wrong`, async () => {
      const hooks = await load()
      assert.strictEqual(
        (await rejectionOf(hooks.tool.discard.execute(args, toolContext()))).message,
        `Nothing was pruned.\nThe arguments are not usable: ${problem}.`
      )
      await hooks.dispose()
    })
  }

  it("a tool call without OpenCode's context is refused with what was wrong", async () => {
    const hooks = await load()
    assert.strictEqual(
      (await rejectionOf(hooks.tool.recall.execute({ ids: ["1"] }, null))).message,
      "Nothing was recalled.\nThe call's context is not usable: the call's context: expected object, found null."
    )
    await hooks.dispose()
  })
})

describe("a state file the plugin cannot read", () => {
  /** A directory where the session's state file goes: any process, root included, fails to read it as a file. */
  const unreadableState = () =>
    mkdir(join(root, "data", "opencode", "storage", "plugin", "dcp", `${sessionID}.json`), { recursive: true })
  const stateFile = () => join(root, "data", "opencode", "storage", "plugin", "dcp", `${sessionID}.json`)

  it("requests go out as they came, and a toast names the file once", async () => {
    await unreadableState()
    const client = fakeClient()
    const hooks = await load(client)
    for (let i = 0; i < 2; i++) {
      const messages = fresh(history())
      const before = structuredClone(messages)
      await hooks["experimental.chat.messages.transform"]({}, { messages })
      assert.deepStrictEqual(messages, before)
    }
    await hooks.dispose()
    const toasts = client.calls.filter((call) => call.method === "tui.showToast").map((call) => call.body)
    assert.deepStrictEqual(toasts, [{
      body: {
        title: "DCP: session state unreadable",
        message: `${stateFile()}\na directory\nThis session's requests go out unpruned ` +
          "until the file can be read or is removed.",
        variant: "warning",
        duration: 10_000
      }
    }])
  })

  it("the tools answer naming the file, not with an internal error", async () => {
    await unreadableState()
    const hooks = await load()
    assert.strictEqual(
      (await rejectionOf(hooks.tool.discard.execute({ ids: ["noise", "1"] }, toolContext()))).message,
      `Nothing was pruned.\nThe context pruning plugin cannot read its state for this session (${stateFile()}: ` +
        "a directory)."
    )
    await hooks.dispose()
  })
})
