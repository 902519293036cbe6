import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { assistant, fresh, type Msg, sessionID, text, tool, user } from "../support/history.ts"
import { figuresOf } from "../../src/engine/figures.ts"
import { SessionStore } from "../../src/services/SessionStore.ts"
import { claude, pluginHooks } from "./helpers.ts"

/**
 * The plugin's own prompt-cache breakpoint (src/engine/anchor.ts) through the real hooks: the system transform learns
 * the model, as on every request, and the messages transform places the breakpoint in what is sent.
 */

const openRouter = {
  ...claude,
  providerID: "openrouter",
  api: { id: "claude-sonnet-4-5", npm: "@openrouter/ai-sdk-provider" }
}

/** Stale outputs masked beyond the 2 most recent calls, from the first request on; no working file's copy kept. */
const masking = { strategies: { staleOutputs: { trigger: 100, keepRecent: 2, keepFiles: 0, clearAtLeast: 10 } } }

const output = (label: string) =>
  Array.from({ length: 80 }, (_, i) => `${label} ${i}: export const value${i} = compute(${i})`).join("\n")

/** A message of a turn sent to `model`: a user message asks it, an assistant message is its answer. */
const byModel = (model: typeof claude) => (message: Msg): Msg => ({
  ...message,
  info: message.info.role === "user"
    ? { ...message.info, model: { providerID: model.providerID, modelID: model.id } }
    : { ...message.info, providerID: model.providerID, modelID: model.id }
})

/** Five steps, each saying what it reads then reading it, by the model `model` names. */
const history = (model: typeof claude): Array<Msg> =>
  [
    user("read the five files"),
    ...[1, 2, 3, 4, 5].map((n) =>
      assistant([
        text(`Reading file ${n}.`),
        tool({ tool: "read", callID: `c${n}`, input: { filePath: `/project/f${n}.ts` }, output: output(`f${n}`) })
      ])
    )
  ].map(byModel(model))

/** The texts of the parts that carry a cache breakpoint in what is sent. */
const marked = (messages: ReadonlyArray<Msg>): Array<string> =>
  messages.flatMap((message) =>
    message.parts.flatMap((part: Record<string, any>) =>
      part.metadata?.anthropic?.cacheControl === undefined ? [] : [`${message.info.role} ${part.type} ${part.text}`]
    )
  )

/**
 * Requests of one session: the system transform (which notes the model), then the messages transform. `after`: what
 * the system transforms of plugins that run after this one do to the system texts.
 */
const requests = (
  model: typeof claude,
  config: object,
  sends: number,
  after: (system: Array<string>) => void = () => {}
) =>
  Effect.gen(function*() {
    const { call, hooks } = yield* pluginHooks({ config })
    const stored = history(model)
    const sent: Array<Array<Msg>> = []
    for (let i = 0; i < sends; i++) {
      const system = ["You are OpenCode."]
      yield* call(() => hooks["experimental.chat.system.transform"]!({ sessionID, model } as never, { system }))
      after(system)
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

  it.effect("is not placed while another plugin's system text makes OpenCode send two system messages", () =>
    Effect.gen(function*() {
      const [sent] = yield* requests(claude, masking, 1, (system) => system.push("Another plugin's instructions."))
      assert.deepStrictEqual(marked(sent!), [])
    }))
})

/**
 * An edit that failed, then a long pasted text, then five reads; the next request adds three reads and a whole read of
 * the edited file, which supersedes the failed edit (before the breakpoint) while masking takes reads 4 to 7 (after
 * it).
 */
const failedEdit = (model: typeof claude) => {
  const asked = byModel(model)
  const step = (
    n: number,
    item = tool({ tool: "read", callID: `c${n}`, input: { filePath: `/project/f${n}.ts` }, output: output(`f${n}`) })
  ) => asked(assistant([text(`Reading file ${n}.`), item]))
  const first = [
    asked(user("fix the app")),
    asked(assistant([
      text("Editing the app."),
      tool({
        tool: "edit",
        callID: "e1",
        input: { filePath: "/project/app.ts", oldString: oldText, newString: `${oldText}\nexport const port = 8080` },
        error: "oldString not found in content"
      })
    ])),
    asked(user(Array.from({ length: 800 }, (_, i) => `pasted log line ${i}: request served in ${i} ms`).join("\n"))),
    ...[1, 2, 3, 4, 5].map((n) => step(n))
  ]
  const second = [
    ...first,
    ...[6, 7, 8].map((n) => step(n)),
    step(9, tool({ tool: "read", callID: "c9", input: { filePath: "/project/app.ts" }, output: output("app") }))
  ]
  return [first, second]
}

const oldText = output("old").slice(0, 600)

/** The sent input of the call `callID`, and whether its output was masked. */
const sentCall = (messages: ReadonlyArray<Msg>, callID: string) => {
  const part = messages.flatMap((message) => message.parts).find((p: Record<string, any>) => p.callID === callID) as
    | Record<string, any>
    | undefined
  return { input: part?.state.input, masked: String(part?.state.output ?? "").startsWith("[") }
}

describe("prunes on both sides of the plugin's cache breakpoint", () => {
  /** Applies whatever pays back within 100 requests, with no gathering. */
  const paying = { ...masking, cache: { mode: "auto", horizon: 100, patience: 0 } }

  const send = (config: object) =>
    Effect.gen(function*() {
      const { call, hooks, run } = yield* pluginHooks({ config })
      const sent: Array<Array<Msg>> = []
      for (const stored of failedEdit(claude)) {
        yield* call(() =>
          hooks["experimental.chat.system.transform"]!({ sessionID, model: claude } as never, {
            system: ["You are OpenCode."]
          })
        )
        const messages = fresh(stored)
        yield* call(() => hooks["experimental.chat.messages.transform"]!({} as never, { messages } as never))
        sent.push(messages)
      }
      const waiting = yield* run(
        SessionStore.use((store) =>
          store.use(sessionID, (state) => Effect.succeed(figuresOf(state, undefined).waiting))
        )
      )
      return { sent: sent[1]!, waiting }
    })

  it.effect("a warm request masks the outputs after the breakpoint and leaves the old superseded edit as it was", () =>
    Effect.gen(function*() {
      const { sent } = yield* send(paying)
      assert.deepStrictEqual(["c4", "c5", "c6", "c7"].map((id) => sentCall(sent, id).masked), [true, true, true, true])
      assert.strictEqual(sentCall(sent, "e1").input.oldString, oldText)
    }))

  it.effect("the breakpoint moves on past the masked outputs, not held behind the edit that waits", () =>
    Effect.gen(function*() {
      const { sent } = yield* send(paying)
      // Reads 8 and 9 are the 2 most recent calls: the oldest output masking may still take.
      assert.deepStrictEqual(marked(sent), ["assistant text Reading file 8."])
    }))

  it.effect("the user is told the old edit waits for the cache, as one call", () =>
    Effect.gen(function*() {
      const { waiting } = yield* send(paying)
      assert.strictEqual(waiting?.calls, 1)
      assert.strictEqual(waiting?.why.reason, "warm-cache")
      assert.isAbove(waiting?.why.paysBackAfter ?? 0, 100)
    }))

  it.effect("without the breakpoint, the same request prunes the edit with them", () =>
    Effect.gen(function*() {
      const { sent, waiting } = yield* send({ ...paying, cache: { ...paying.cache, breakpoint: false } })
      assert.isUndefined(waiting)
      assert.deepStrictEqual(["c4", "c5", "c6", "c7"].map((id) => sentCall(sent, id).masked), [true, true, true, true])
      assert.match(sentCall(sent, "e1").input.oldString, /^\[pruned oldString/)
    }))
})
