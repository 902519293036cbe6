import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { pluginHooks } from "./helpers.ts"

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
