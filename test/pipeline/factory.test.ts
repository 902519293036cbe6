import type { Hooks } from "@opencode-ai/plugin"
import { mkdir, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { Effect } from "effect"
import { assert, beforeEach, describe, it } from "vitest"
import { assistant, fresh, type Msg, sessionID, tool, toolPart, user } from "../support/history.ts"
import { type FakeClient, fakeClient } from "../support/fakeClient.ts"
import { storedSession } from "../persistence/support.ts"
import { loadPlugin, toolContext, useIsolatedHome } from "../support/plugin.ts"

/** The pruning tools as OpenCode calls them: through the object the real plugin factory returns. */

const rootOf = useIsolatedHome("dcp-factory-")
let root: string

beforeEach(async () => {
  root = rootOf()
  await mkdir(join(root, "project", ".opencode"), { recursive: true })
  await writeFile(
    join(root, "project", ".opencode", "dcp.jsonc"),
    `{ "protectedFilePatterns": ["**/secret/**"], "cache": { "mode": "immediate" } }`
  )
})

const big = (label: string) => Array.from({ length: 150 }, (_, i) => `${label} ${i}: some content here`).join("\n")

const history = (): Array<Msg> => [
  user("explore"),
  assistant([
    tool({ tool: "read", callID: "c1", input: { filePath: join(root, "project", "src", "a.ts") }, output: big("a") }),
    tool({ tool: "grep", callID: "c2", input: { pattern: "TODO" }, output: big("grep") }),
    tool({ tool: "read", callID: "c3", input: { filePath: join(root, "project", "secret", "k.ts") }, output: big("k") })
  ])
]

const load = async (client: FakeClient) => {
  const hooks = await loadPlugin(root, client)
  return hooks as Required<
    Pick<Hooks, "tool" | "event" | "dispose" | "experimental.chat.messages.transform" | "chat.message">
  >
}

const context = () => toolContext(join(root, "project"))

/** The next request: the history, then the assistant message that holds the tool call (the context's message). */
const afterCall = (name: string, input: Record<string, unknown>, reply: unknown): Array<Msg> =>
  fresh([
    ...history(),
    assistant([tool({ tool: name, callID: "t1", input, output: String(reply) })], { id: context().messageID })
  ])

const transform = async (hooks: Awaited<ReturnType<typeof load>>, messages: Array<Msg>) => {
  await hooks["experimental.chat.messages.transform"]({} as never, { messages: messages as never })
  return messages
}

/** The Error `promise` rejects with; fails the test if it resolves or rejects with something else. */
const rejectionOf = (promise: Promise<unknown>): Promise<Error> =>
  promise.then(
    () => assert.fail("expected a rejection"),
    (error: unknown) => {
      assert.instanceOf(error, Error)
      return error
    }
  )

const notesSent = (client: FakeClient) => client.calls.filter((call) => call.method === "session.prompt")

describe("pruning tools through the plugin factory", () => {
  it("discard.execute prunes, and the next request shows the placeholder", async () => {
    const client = fakeClient()
    const hooks = await load(client)
    await transform(hooks, fresh(history()))
    const reply = await hooks.tool.discard!.execute({ ids: ["noise", "1"] }, context())
    assert.match(reply as string, /^Discarded 1 output, ~[\d.]+k? tokens: 1 read src\/a\.ts \(noise\)\./)
    const next = await transform(hooks, afterCall("discard", { ids: ["noise", "1"] }, reply))
    assert.match(toolPart(next, "c1").state.output, /^\[pruned; (?:id|recall) 1\]$/)
    await hooks.dispose()
  })

  it("discard.execute sends its note through the client only when the session goes idle, with the user's agent", async () => {
    const client = fakeClient()
    const hooks = await load(client)
    await hooks["chat.message"](
      { sessionID, agent: "plan", model: { providerID: "p", modelID: "m" } } as never,
      {} as never
    )
    await transform(hooks, fresh(history()))
    const reply = await hooks.tool.discard!.execute({ ids: ["completion", "1", "2"] }, context())
    await transform(hooks, afterCall("discard", { ids: ["completion", "1", "2"] }, reply))
    assert.deepStrictEqual(notesSent(client), [])
    await hooks.event({ event: { type: "session.idle", properties: { sessionID } } as never })
    assert.lengthOf(notesSent(client), 1)
    const { path, body } = notesSent(client)[0]!.body as Record<string, any>
    assert.deepInclude(path, { id: sessionID })
    assert.deepInclude(body, { noReply: true, agent: "plan", model: { providerID: "p", modelID: "m" } })
    assert.lengthOf(body.parts, 1)
    assert.deepInclude(body.parts[0], { type: "text", ignored: true })
    await hooks.dispose()
  })

  it("discard.execute persists the prune: the state file has it, counted once sent, after dispose", async () => {
    const hooks = await load(fakeClient())
    await transform(hooks, fresh(history()))
    const reply = await hooks.tool.discard!.execute({ ids: ["noise", "2"] }, context())
    await transform(hooks, afterCall("discard", { ids: ["noise", "2"] }, reply))
    await hooks.dispose()
    const state = await Effect.runPromise(storedSession(root, sessionID))
    assert.deepStrictEqual(Object.keys(state.pruned), ["c2"])
    assert.strictEqual(state.stats.byReason.discard?.calls, 1)
  })

  it("a refused discard rejects with an Error carrying the specific message, and prunes nothing", async () => {
    const hooks = await load(fakeClient())
    await transform(hooks, fresh(history()))
    assert.strictEqual(
      (await rejectionOf(hooks.tool.discard!.execute({ ids: ["noise", "3"] }, context()))).message,
      "Nothing was pruned.\nid 3 (read secret/k.ts) touches a file matching a protected file pattern; it is never pruned."
    )
    await rejectionOf(hooks.tool.discard!.execute({ ids: ["tidy", "1"] }, context()))
    const next = await transform(hooks, fresh(history()))
    assert.notInclude(JSON.stringify(next), "[pruned")
    await hooks.dispose()
  })

  it("extract.execute prunes and the distillation stays in the extract call", async () => {
    const hooks = await load(fakeClient())
    await transform(hooks, fresh(history()))
    const distillation = ["a.ts defines compute()"]
    const reply = await hooks.tool.extract!.execute({ ids: ["1"], distillation }, context())
    const next = await transform(hooks, afterCall("extract", { ids: ["1"], distillation }, reply))
    assert.match(toolPart(next, "c1").state.output, /^\[pruned after extract; (?:id|recall) 1\]$/)
    assert.deepStrictEqual(toolPart(next, "t1").state.input.distillation, distillation)
    await hooks.dispose()
  })

  it("a refused extract rejects with the specific message", async () => {
    const hooks = await load(fakeClient())
    await transform(hooks, fresh(history()))
    assert.include(
      (await rejectionOf(hooks.tool.extract!.execute({ ids: ["1", "2"], distillation: ["one"] }, context()))).message,
      "Got 2 ids but 1 distillation entry: give exactly one finding per id, in the same order."
    )
    await hooks.dispose()
  })

  it("when the host fails, execute rejects saying OpenCode did not answer, and nothing is pruned", async () => {
    const hooks = await load(fakeClient({ mode: "rejects" }))
    await transform(hooks, fresh(history()))
    assert.strictEqual(
      (await rejectionOf(hooks.tool.discard!.execute({ ids: ["noise", "1"] }, context()))).message,
      "Nothing was pruned.\nOpenCode did not answer the context pruning plugin (session.get)."
    )
    await hooks.dispose()
  })

  const unusable = "../ses_1"
  const refusal =
    `The context pruning plugin cannot work in this session. Invalid session ID "${unusable}": it contains a ` +
    `character other than an ASCII letter, digit, "_" or "-". A session ID is 1 to 128 ASCII letters, digits, "_" or ` +
    `"-", not starting with "-".`
  type Loaded = Awaited<ReturnType<typeof load>>
  const inUnusable = () => ({ ...context(), sessionID: unusable })
  const calls: ReadonlyArray<readonly [string, (hooks: Loaded) => Promise<unknown>, string]> = [
    ["discard", (hooks) => hooks.tool.discard!.execute({ ids: ["noise", "1"] }, inUnusable()), "Nothing was pruned."],
    [
      "extract",
      (hooks) => hooks.tool.extract!.execute({ ids: ["1"], distillation: ["x"] }, inUnusable()),
      "Nothing was pruned."
    ],
    ["recall", (hooks) => hooks.tool.recall!.execute({ ids: ["1"] }, inUnusable()), "Nothing was recalled."]
  ]

  for (const [name, call, nothingDone] of calls) {
    it(`${name} in a session whose ID the plugin cannot use says what is wrong with the ID`, async () => {
      const client = fakeClient()
      const hooks = await load(client)
      assert.strictEqual((await rejectionOf(call(hooks))).message, `${nothingDone}\n${refusal}`)
      assert.deepStrictEqual(client.calls, [])
      await hooks.dispose()
    })
  }
})
