import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { system } from "../../src/hooks/system.ts"
import { assistant, fresh, type Msg, sessionID, user } from "../support/history.ts"
import { tempDir } from "../support/layers.ts"
import { pipelineUnder, send, stateOf } from "../pipeline/helpers.ts"
import { read } from "./support.ts"

/**
 * The pricing a session's costs follow after OpenCode starts again (issue 56). OpenCode describes the request's model
 * in `experimental.chat.system.transform`, which it calls after the request path: a restarted process has no
 * description for the session's first request. That request is priced under the model the session's file keeps, or
 * the one its user's newest message names; never under a guess.
 */

/** A file read twice: the older read is a duplicate, pruned (under `immediate`) in every request that carries both. */
const history: Array<Msg> = [
  user("read a.ts, then again"),
  assistant([read("c1", "src/a.ts")]),
  assistant([read("c2", "src/a.ts")])
]

/** OpenCode's description of a model served through the Anthropic SDK package under a provider of another name. */
const anthropicServed = { providerID: "fake", id: "fake-model", api: { npm: "@ai-sdk/anthropic" } }

/** Runs `body` in one OpenCode process (the plugin's layer) under `root`, its state written when the process ends. */
const process = <A, E, R>(root: string, body: Effect.Effect<A, E, R>) =>
  body.pipe(Effect.provide(pipelineUnder(root, {}, { host: { messages: { [sessionID]: history } } })))

describe("pricing after a restart", () => {
  it.effect("the first request is priced under the model the session's file keeps", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* process(
        root,
        Effect.gen(function*() {
          yield* system(sessionID, ["You are a coding agent."], anthropicServed)
          yield* send(fresh(history))
        })
      )
      const restarted = yield* process(
        root,
        Effect.gen(function*() {
          yield* send(fresh(history))
          return yield* stateOf(sessionID)
        })
      )
      assert.deepStrictEqual(restarted.model, {
        providerID: "fake",
        modelID: "fake-model",
        npm: "@ai-sdk/anthropic",
        contextLimit: undefined,
        outputLimit: undefined
      })
      assert.strictEqual(restarted.stats.cost.profile, "anthropic")
      assert.strictEqual(restarted.stats.cost.requests, 2)
    }))

  it.effect("a session with no model kept is priced under its user's model from its first request on", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const state = yield* process(
        root,
        Effect.gen(function*() {
          yield* send(fresh(history))
          return yield* stateOf(sessionID)
        })
      )
      // The scripted provider `fake` bills as most providers do: a prefix cache. Anthropic's rules were the guess.
      assert.strictEqual(state.stats.cost.profile, "openai")
      assert.strictEqual(state.stats.cost.requests, 1)
    }))

  it.effect("with no model known at all, the request's costs are not priced", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const anonymous = fresh(history).map((message) => ({ ...message, info: { ...message.info, model: undefined } }))
      const state = yield* process(
        root,
        Effect.gen(function*() {
          yield* send(anonymous)
          return yield* stateOf(sessionID)
        })
      )
      assert.strictEqual(state.stats.calls, 1)
      assert.strictEqual(state.stats.cost.requests, 0)
      assert.strictEqual(state.stats.cost.saved, 0)
    }))
})
