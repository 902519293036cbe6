import { mkdir, readdir, readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { assert, beforeEach, describe, it } from "vitest"
import { assistant, fresh, sessionID, tool, user } from "../support/history.ts"
import { fakeClient } from "../support/fakeClient.ts"
import { loadPlugin, useIsolatedHome } from "../support/plugin.ts"

const rootOf = useIsolatedHome("dcp-plugin-")
let root: string
beforeEach(() => {
  root = rootOf()
})

const load = (client = fakeClient()) => loadPlugin(root, client)

const history = () => [
  user("read the file twice"),
  assistant([
    tool({ tool: "read", callID: "c1", input: { filePath: "/p/a.ts" }, output: "content ".repeat(200) }),
    tool({ tool: "read", callID: "c2", input: { filePath: "/p/a.ts" }, output: "content ".repeat(200) })
  ])
]

describe("plugin factory", () => {
  it("registers the hooks OpenCode calls", async () => {
    const hooks = await load()
    assert.deepStrictEqual(Object.keys(hooks).sort(), [
      "chat.message",
      "command.execute.before",
      "config",
      "dispose",
      "event",
      "experimental.chat.messages.transform",
      "experimental.chat.system.transform",
      "experimental.session.compacting",
      "tool",
      "tool.definition"
    ])
    assert.deepStrictEqual(Object.keys(hooks.tool ?? {}).sort(), ["discard", "extract", "recall"])
    await hooks.dispose?.()
  })

  it("writes a commented default global config on first run", async () => {
    const hooks = await load()
    const text = await readFile(join(root, "config", "opencode", "dcp.jsonc"), "utf8")
    assert.include(text, "// ")
    assert.include(text, '"pruneNotification": "detailed"')
    await hooks.dispose?.()
  })

  it("registers nothing when the config switches the plugin off", async () => {
    await mkdir(join(root, "config", "opencode"), { recursive: true })
    await writeFile(join(root, "config", "opencode", "dcp.jsonc"), `{ "enabled": false }`)
    assert.deepStrictEqual(await load(), {})
  })

  it("persists session state through the real hooks, and dispose writes what is pending", async () => {
    const hooks = await load()
    await hooks["experimental.chat.messages.transform"]!({}, { messages: fresh(history()) as never })
    await hooks.dispose?.()
    const stateDir = join(root, "data", "opencode", "storage", "plugin", "dcp")
    const state = JSON.parse(await readFile(join(stateDir, `${sessionID}.json`), "utf8"))
    assert.deepStrictEqual(state.ids, { c1: 1, c2: 2 })
  })

  for (const mode of ["throws", "rejects"] as const) {
    it(`every hook returns normally when the host ${mode}, and messages go out unmodified`, async () => {
      const hooks = await load(fakeClient({ mode }))
      const messages = fresh(history())
      const before = structuredClone(messages)
      assert.isUndefined(await hooks["experimental.chat.messages.transform"]!({}, { messages: messages as never }))
      assert.isUndefined(await hooks["chat.message"]!({ sessionID }, { message: {} as never, parts: [] }))
      assert.isUndefined(await hooks["experimental.session.compacting"]!({ sessionID }, { context: [] }))
      assert.isUndefined(
        await hooks.event!({ event: { type: "session.deleted", properties: { info: { id: sessionID } } } as never })
      )
      assert.deepStrictEqual(messages, before)
      await hooks.dispose?.()
    })
  }

  it("registers /dcp through the config hook, and the pruning tools as primary-agent tools", async () => {
    const hooks = await load()
    const opencode: Record<string, any> = {
      command: { mine: { template: "x" } },
      experimental: { primary_tools: ["other"] }
    }
    await hooks.config!(opencode as never)
    assert.deepStrictEqual(Object.keys(opencode.command).sort(), ["dcp", "mine"])
    assert.include(opencode.command.dcp.description, "stats")
    assert.deepStrictEqual(opencode.experimental.primary_tools, ["other", "discard", "recall", "extract"])
    await hooks.dispose?.()
  })

  it("sends its tools' arguments schema without the JSON Schema dialect's URL, and leaves other tools' alone", async () => {
    const hooks = await load()
    const ids = { type: "array", items: { type: "string" } }
    const sent = async (toolID: string) => {
      const output: { description: string; parameters: unknown; jsonSchema?: unknown } = {
        description: "d",
        parameters: {}
      }
      await hooks["tool.definition"]!({ toolID }, output)
      return output.jsonSchema
    }
    assert.deepStrictEqual(await sent("discard"), { type: "object", properties: { ids }, required: ["ids"] })
    assert.deepStrictEqual(await sent("recall"), { type: "object", properties: { ids, query: { type: "string" } } })
    assert.deepStrictEqual(await sent("extract"), {
      type: "object",
      properties: { ids, distillation: ids },
      required: ["ids", "distillation"]
    })
    assert.isUndefined(await sent("read"))
    await hooks.dispose?.()
  })

  it("/dcp is answered by a thrown HTTP 200 response (no model turn) after storing its output as a note", async () => {
    const client = fakeClient()
    const hooks = await load(client)
    const thrown = await hooks["command.execute.before"]!({ command: "dcp", sessionID, arguments: "" }, { parts: [] })
      .then(
        () => undefined,
        (value: unknown) => value
      )
    assert.deepInclude(thrown, { "~effect/http/HttpServerResponse": "~effect/http/HttpServerResponse", status: 200 })
    const note = client.calls.find((call) => call.method === "session.prompt")
    assert.isDefined(note)
    const { body } = note.body as Record<string, any>
    assert.strictEqual(body.noReply, true)
    assert.lengthOf(body.parts, 1)
    assert.strictEqual(body.parts[0].ignored, true)
    assert.include(body.parts[0].text, "/dcp sweep [n]")
    assert.include(client.calls.map((call) => call.method), "session.abort")
    await hooks.dispose?.()
  })

  it("/dcp with an unknown subcommand is refused by a thrown HTTP 400 with the message, after storing its note", async () => {
    const client = fakeClient()
    const hooks = await load(client)
    const thrown = await hooks["command.execute.before"]!({ command: "dcp", sessionID, arguments: "nonsense" }, {
      parts: []
    }).then(
      () => undefined,
      (value: unknown) => value
    ) as Record<string, any>
    assert.deepInclude(thrown, { "~effect/http/HttpServerResponse": "~effect/http/HttpServerResponse", status: 400 })
    const message = `Unknown subcommand "nonsense": /dcp takes context, stats, sweep [n], restore <id|all> or help.`
    assert.strictEqual(JSON.parse(new TextDecoder().decode(thrown.body.body)), message)
    const note = client.calls.find((call) => call.method === "session.prompt")!
    assert.include((note.body as Record<string, any>).body.parts[0].text.replace(/\s+/g, " "), message)
    await hooks.dispose?.()
  })

  it("other commands pass through untouched", async () => {
    const client = fakeClient()
    const hooks = await load(client)
    const parts: Array<never> = []
    assert.isUndefined(
      await hooks["command.execute.before"]!({ command: "review", sessionID, arguments: "" }, { parts })
    )
    assert.deepStrictEqual(client.calls.filter((call) => call.method === "session.prompt"), [])
    await hooks.dispose?.()
  })

  it("with commands.enabled false there is no /dcp", async () => {
    await mkdir(join(root, "config", "opencode"), { recursive: true })
    await writeFile(join(root, "config", "opencode", "dcp.jsonc"), `{ "commands": { "enabled": false } }`)
    const hooks = await load()
    const opencode: Record<string, any> = {}
    await hooks.config!(opencode as never)
    assert.isUndefined(opencode.command)
    assert.isUndefined(hooks["command.execute.before"])
    await hooks.dispose?.()
  })

  it("/dcp still stops the model turn when the host is broken", async () => {
    const hooks = await load(fakeClient({ mode: "rejects" }))
    const thrown = await hooks["command.execute.before"]!({ command: "dcp", sessionID, arguments: "stats" }, {
      parts: []
    })
      .then(
        () => assert.fail("expected the hook to throw the response"),
        (value: unknown) => value
      )
    assert.deepInclude(thrown, { status: 200 })
    await hooks.dispose?.()
  })

  it("a transform given garbage returns normally and changes nothing", async () => {
    const hooks = await load()
    const inputs: Array<Array<unknown>> = [[], [null], [42, "x"], [{ info: null, parts: null }], [{
      parts: [{ type: "tool" }]
    }]]
    for (const messages of inputs) {
      const before = structuredClone(messages)
      await hooks["experimental.chat.messages.transform"]!({}, { messages: messages as never })
      assert.deepStrictEqual(messages, before)
    }
    await hooks.dispose?.()
    assert.notInclude(await readdir(root), "data")
  })
})
