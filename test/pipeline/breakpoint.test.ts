import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { assistant, fresh, type Msg, sessionID, text, tool, user } from "../support/history.ts"
import { pluginHooks } from "./helpers.ts"

/**
 * The plugin's own prompt-cache breakpoint (src/engine/anchor.ts) through the real hooks: the system transform learns
 * the model, as on every request, and the messages transform places the breakpoint in what is sent.
 */

const claude = {
  providerID: "anthropic",
  id: "claude-sonnet-4-5",
  api: { id: "claude-sonnet-4-5", npm: "@ai-sdk/anthropic" },
  limit: { context: 200_000, output: 32_000 }
}
const openRouter = {
  ...claude,
  providerID: "openrouter",
  api: { id: "claude-sonnet-4-5", npm: "@openrouter/ai-sdk-provider" }
}

/** Stale outputs masked beyond the 2 most recent calls, from the first request on. */
const masking = { strategies: { staleOutputs: { trigger: 100, keepRecent: 2, clearAtLeast: 10 } } }

const output = (label: string) =>
  Array.from({ length: 80 }, (_, i) => `${label} ${i}: export const value${i} = compute(${i})`).join("\n")

/** Five steps, each saying what it reads then reading it, by the model `model` names. */
const history = (model: typeof claude): Array<Msg> => [
  user("read the five files"),
  ...[1, 2, 3, 4, 5].map((n) => {
    const message = assistant([
      text(`Reading file ${n}.`),
      tool({ tool: "read", callID: `c${n}`, input: { filePath: `/project/f${n}.ts` }, output: output(`f${n}`) })
    ])
    return { ...message, info: { ...message.info, providerID: model.providerID, modelID: model.id } }
  })
]

/** The texts of the parts that carry a cache breakpoint in what is sent. */
const marked = (messages: ReadonlyArray<Msg>): Array<string> =>
  messages.flatMap((message) =>
    message.parts.flatMap((part: Record<string, any>) =>
      part.metadata?.anthropic?.cacheControl === undefined ? [] : [`${message.info.role} ${part.type} ${part.text}`]
    )
  )

/** Requests of one session: the system transform (which notes the model), then the messages transform. */
const requests = (model: typeof claude, config: object, sends: number) =>
  Effect.gen(function*() {
    const { call, hooks } = yield* pluginHooks({ config })
    const stored = history(model)
    const sent: Array<Array<Msg>> = []
    for (let i = 0; i < sends; i++) {
      yield* call(() =>
        hooks["experimental.chat.system.transform"]!({ sessionID, model } as never, { system: ["You are OpenCode."] })
      )
      const messages = fresh(stored)
      yield* call(() => hooks["experimental.chat.messages.transform"]!({} as never, { messages } as never))
      sent.push(messages)
    }
    return sent
  })

describe("the plugin's cache breakpoint", () => {
  it.effect("when prunes apply, goes on the last assistant text before the outputs still to be masked", () =>
    Effect.gen(function*() {
      const [sent] = yield* requests(claude, masking, 1)
      // Calls 1 to 3 are masked; call 4 is the oldest output masking may still take.
      assert.deepStrictEqual(marked(sent!), ["assistant text Reading file 4."])
    }))

  it.effect("stays on the same part while nothing changes", () =>
    Effect.gen(function*() {
      const sent = yield* requests(claude, masking, 2)
      assert.deepStrictEqual(marked(sent[1]!), marked(sent[0]!))
    }))

  it.effect("is not placed when cache.breakpoint is off", () =>
    Effect.gen(function*() {
      const [sent] = yield* requests(claude, { ...masking, cache: { breakpoint: false } }, 1)
      assert.deepStrictEqual(marked(sent!), [])
    }))

  it.effect("is not placed when the session is priced by other rules than Anthropic's (cache.pricing)", () =>
    Effect.gen(function*() {
      const [sent] = yield* requests(claude, { ...masking, cache: { pricing: "openai" } }, 1)
      assert.deepStrictEqual(marked(sent!), [])
    }))

  it.effect("is not placed for a package that may send a breakpoint beyond Anthropic's limit on to the provider", () =>
    Effect.gen(function*() {
      const [sent] = yield* requests(openRouter, masking, 1)
      assert.deepStrictEqual(marked(sent!), [])
    }))
})
