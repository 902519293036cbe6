import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { Tokenizer } from "../../src/services/Tokenizer.ts"
import { sessionID } from "../support/history.ts"
import { claude, pluginHooks } from "./helpers.ts"

const model = { providerID: "fake", id: "fake-model", limit: { context: 200_000, output: 8_000 } }
const agentPrompt = "You are opencode, an interactive CLI tool that helps users with software engineering tasks."

const tools = (discard: boolean, extract: boolean, fold = false) => ({
  tools: { discard: { enabled: discard }, extract: { enabled: extract } },
  strategies: { fold: { enabled: fold } }
})

/** What Anthropic OAuth plugins put first: Anthropic accepts such a request only with it as the first system block. */
const identity = "You are Claude Code, Anthropic's official CLI for Claude."
const titlePrompt = "You are a title generator. You output ONLY a thread title."

/** The system prompt after the real hook ran once per request in `requests`. */
const systemAfter = (
  requests: ReadonlyArray<{ readonly sessionID?: string | undefined; readonly system: ReadonlyArray<string> }>,
  options: { readonly config?: object; readonly host?: object; readonly model?: object } = {}
) =>
  Effect.gen(function*() {
    const { call, hooks } = yield* pluginHooks({ host: options.host ?? {}, config: options.config ?? {} })
    const results: Array<Array<string>> = []
    for (const request of requests) {
      const output = { system: [...request.system] }
      const input = { sessionID: request.sessionID, model: options.model ?? model }
      yield* call(() => hooks["experimental.chat.system.transform"]!(input as never, output))
      results.push(output.system)
    }
    return results
  })

const main = { sessionID, system: [agentPrompt] }

/** The plugin's section: what follows OpenCode's own system text. */
const sectionOf = (system: ReadonlyArray<string> | undefined): string => {
  assert.strictEqual(system?.length, 1)
  assert.isTrue(system![0]!.startsWith(`${agentPrompt}\n\n`))
  return system![0]!.slice(agentPrompt.length + 2)
}

describe("system transform", () => {
  // One system message: OpenCode marks each of the first two as a cache breakpoint, and the plugin keeps one of
  // Anthropic's four for itself (src/engine/anchor.ts).
  it.effect("adds the pruning section to the end of OpenCode's system text, not as a system message of its own", () =>
    Effect.gen(function*() {
      const [system] = yield* systemAfter([main])
      assert.match(sectionOf(system), /^## Context pruning\n/)
    }))

  // Plugins rely on their system texts being blocks of their own: Anthropic rejects an OAuth request whose first
  // system block is not exactly Claude Code's identity line, which auth plugins put before OpenCode's text. So the
  // plugin joins no texts, even where one system message would leave room for its cache breakpoint.
  it.effect("leaves a system text another plugin put before OpenCode's a block of its own, for a Claude model too", () =>
    Effect.gen(function*() {
      const [system] = yield* systemAfter(
        [{ sessionID, system: [identity, `${identity}\n\n${agentPrompt}`] }],
        { model: claude }
      )
      assert.strictEqual(system!.length, 2)
      assert.strictEqual(system![0], identity)
      assert.match(system![1]!, /\n\n## Context pruning\n/)
    }))

  it.effect("adds nothing for a sub-agent session", () =>
    Effect.gen(function*() {
      const [system] = yield* systemAfter([main], { host: { sessions: { [sessionID]: { parentID: "ses_parent" } } } })
      assert.deepStrictEqual(system, [agentPrompt])
    }))

  for (
    const internal of [
      titlePrompt,
      "You are a context summarization agent. Summarize the conversation.",
      "Summarize what was done in this conversation, in two lines."
    ]
  ) {
    it.effect(`adds nothing for OpenCode's internal agent "${internal.slice(0, 40)}…"`, () =>
      Effect.gen(function*() {
        const [system] = yield* systemAfter([{ sessionID, system: [internal] }])
        assert.deepStrictEqual(system, [internal])
      }))
  }

  it.effect("adds nothing for an internal agent whose prompt another plugin put a system text of its own before", () =>
    Effect.gen(function*() {
      const [system] = yield* systemAfter([{ sessionID, system: ["Style: answer tersely.", titlePrompt] }])
      assert.deepStrictEqual(system, ["Style: answer tersely.", titlePrompt])
    }))

  it.effect("adds nothing for an internal agent whose prompt another plugin put a paragraph in front of", () =>
    Effect.gen(function*() {
      const sent = [identity, `${identity}\n\n${titlePrompt}`]
      const [system] = yield* systemAfter([{ sessionID, system: sent }])
      assert.deepStrictEqual(system, sent)
    }))

  it.effect("adds nothing to a request without a session ID", () =>
    Effect.gen(function*() {
      const [system] = yield* systemAfter([{ sessionID: undefined, system: [agentPrompt] }])
      assert.deepStrictEqual(system, [agentPrompt])
    }))

  it.effect("with only discard enabled the section describes discard and not extract", () =>
    Effect.gen(function*() {
      const [system] = yield* systemAfter([main], { config: tools(true, false) })
      assert.include(sectionOf(system), "`discard`")
      assert.notInclude(sectionOf(system), "`extract`")
    }))

  it.effect("with only extract enabled the section describes extract and not discard", () =>
    Effect.gen(function*() {
      const [system] = yield* systemAfter([main], { config: tools(false, true) })
      assert.include(sectionOf(system), "`extract`")
      assert.notInclude(sectionOf(system), "`discard`")
    }))

  it.effect("with both enabled the section describes both", () =>
    Effect.gen(function*() {
      const [system] = yield* systemAfter([main], { config: tools(true, true) })
      assert.include(sectionOf(system), "`discard`")
      assert.include(sectionOf(system), "`extract`")
    }))

  it.effect("with neither tool nor folding enabled there is no section", () =>
    Effect.gen(function*() {
      const [system] = yield* systemAfter([main], { config: tools(false, false) })
      assert.deepStrictEqual(system, [agentPrompt])
    }))

  it.effect("with folding alone the section says how folded calls read, and names neither tool", () =>
    Effect.gen(function*() {
      const [system] = yield* systemAfter([main], { config: tools(false, false, true) })
      assert.include(sectionOf(system), "folded into lines like `#17 read src/app.ts`")
      assert.notInclude(sectionOf(system), "`discard`")
      assert.notInclude(sectionOf(system), "`extract`")
    }))

  it.effect("the section is byte-identical across requests and sessions", () =>
    Effect.gen(function*() {
      const results = yield* systemAfter([main, main, { sessionID: "ses_other", system: [agentPrompt] }])
      assert.strictEqual(sectionOf(results[1]), sectionOf(results[0]))
      assert.strictEqual(sectionOf(results[2]), sectionOf(results[0]))
    }))

  it.effect("every variant of the section is under 250 tokens, counted with the real tokenizer", () =>
    Effect.gen(function*() {
      const tokenizer = yield* Tokenizer
      for (const [discard, extract] of [[true, false], [false, true], [true, true]] as const) {
        const [system] = yield* systemAfter([main], { config: tools(discard, extract) })
        const tokens = yield* tokenizer.count(sectionOf(system))
        assert.isBelow(tokens, 250, `discard=${discard} extract=${extract}: ${tokens} tokens`)
      }
    }).pipe(Effect.provide(Tokenizer.layer)))
})
