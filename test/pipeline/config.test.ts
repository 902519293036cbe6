import { assert, describe, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { HostRecorder } from "../../src/services/Host.ts"
import { assistant, fresh, type Msg, sessionID, tool, user } from "../support/history.ts"
import { pluginHooks, stateOf } from "./helpers.ts"

/** OpenCode's config after the real `config` hook ran, with the plugin config `config`. */
const opencodeConfigAfter = (opencode: Record<string, any>, config: object = {}) =>
  Effect.gen(function*() {
    const { call, hooks } = yield* pluginHooks({ config })
    yield* call(() => hooks.config!(opencode as never))
    return opencode
  })

const primaryTools = (config: Record<string, any>): Array<string> => config.experimental?.primary_tools ?? []
const tools = (discard: boolean, extract: boolean) => ({
  tools: { discard: { enabled: discard }, extract: { enabled: extract } }
})

describe("config hook", () => {
  it.effect("registers discard and extract as primary tools", () =>
    Effect.gen(function*() {
      const tools = primaryTools(yield* opencodeConfigAfter({}))
      assert.includeMembers(tools, ["discard", "extract"])
    }))

  it.effect("keeps the primary tools and other experimental settings already there", () =>
    Effect.gen(function*() {
      const config = yield* opencodeConfigAfter({
        experimental: { primary_tools: ["websearch", "todowrite"], batch_tool: true }
      })
      assert.deepStrictEqual(primaryTools(config).slice(0, 2), ["websearch", "todowrite"])
      assert.includeMembers(primaryTools(config), ["discard", "extract"])
      assert.strictEqual(config.experimental.batch_tool, true)
    }))

  it.effect("does not list a tool twice", () =>
    Effect.gen(function*() {
      const tools = primaryTools(yield* opencodeConfigAfter({ experimental: { primary_tools: ["extract"] } }))
      assert.strictEqual(tools.filter((name) => name === "extract").length, 1)
      assert.strictEqual(tools.filter((name) => name === "discard").length, 1)
    }))

  it.effect("registers only discard when extract is off", () =>
    Effect.gen(function*() {
      const tools_ = primaryTools(yield* opencodeConfigAfter({}, tools(true, false)))
      assert.include(tools_, "discard")
      assert.notInclude(tools_, "extract")
    }))

  it.effect("registers only extract when discard is off", () =>
    Effect.gen(function*() {
      const tools_ = primaryTools(yield* opencodeConfigAfter({}, tools(false, true)))
      assert.include(tools_, "extract")
      assert.notInclude(tools_, "discard")
    }))

  it.effect("registers neither when both are off, and keeps what was there", () =>
    Effect.gen(function*() {
      const tools_ = primaryTools(
        yield* opencodeConfigAfter({ experimental: { primary_tools: ["websearch"] } }, tools(false, false))
      )
      assert.strictEqual(tools_[0], "websearch")
      assert.notInclude(tools_, "discard")
      assert.notInclude(tools_, "extract")
    }))

  it.effect("offers the model only the enabled pruning tools", () =>
    Effect.gen(function*() {
      const { hooks } = yield* pluginHooks({ config: tools(false, true) })
      assert.include(Object.keys(hooks.tool ?? {}), "extract")
      assert.notInclude(Object.keys(hooks.tool ?? {}), "discard")
    }))
})

describe("a config file edited while OpenCode runs", () => {
  const big = (label: string) => Array.from({ length: 150 }, (_, i) => `${label} ${i}: some content here`).join("\n")
  const read = (callID: string) => tool({ tool: "read", callID, input: { filePath: "src/a.ts" }, output: big("a") })
  const history: Array<Msg> = [user("read it twice"), assistant([read("c1")]), assistant([read("c2")])]

  it.effect("applies from the user's next message on, with a toast that says so", () =>
    Effect.gen(function*() {
      const { call, editConfig, hooks, run } = yield* pluginHooks({
        config: { strategies: { deduplication: { enabled: false } } }
      })
      const request = () =>
        call(() => hooks["experimental.chat.messages.transform"]!({} as never, { messages: fresh(history) as never }))
      yield* request()
      assert.strictEqual((yield* run(stateOf(sessionID))).pruned.c1, undefined)

      yield* editConfig({ strategies: { deduplication: { enabled: true } } })
      yield* call(() => hooks["chat.message"]!({ sessionID, agent: "build" } as never, {} as never))
      yield* request()

      assert.strictEqual((yield* run(stateOf(sessionID))).pruned.c1?.reason, "deduplication")
      const toasts = yield* run(HostRecorder.use((recorder) => Ref.get(recorder.toasts)))
      assert.deepStrictEqual(toasts.map((toast) => toast.title), ["DCP: config reloaded"])
      assert.match(toasts[0]!.message, /dcp\.jsonc\nIts settings apply from the next request on\.$/)
    }))

  it.effect("a model request within the turn keeps the config it had: the files are not checked on the request path", () =>
    Effect.gen(function*() {
      const { call, editConfig, hooks, run } = yield* pluginHooks({
        config: { strategies: { deduplication: { enabled: false } } }
      })
      yield* editConfig({ strategies: { deduplication: { enabled: true } } })
      yield* call(() =>
        hooks["experimental.chat.messages.transform"]!({} as never, { messages: fresh(history) as never })
      )
      assert.strictEqual((yield* run(stateOf(sessionID))).pruned.c1, undefined)
    }))

  it.effect("a tool switched off in the file stays offered until OpenCode restarts, and the toast says so", () =>
    Effect.gen(function*() {
      const { call, editConfig, hooks, run } = yield* pluginHooks()
      yield* editConfig({ tools: { discard: { enabled: false } } })
      yield* call(() => hooks["chat.message"]!({ sessionID, agent: "build" } as never, {} as never))
      const toasts = yield* run(HostRecorder.use((recorder) => Ref.get(recorder.toasts)))
      assert.include(toasts[0]!.message, "Restart OpenCode for tools.discard.enabled to change")
      assert.include(Object.keys(hooks.tool ?? {}), "discard")
    }))
})
