import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { discard, extract } from "../../src/hooks/tools.ts"
import { assistant, fresh, type Msg, sessionID, tool, user } from "../support/history.ts"
import { pluginHooks, idle, notes, type PluginServices } from "./helpers.ts"

const big = (label: string) => Array.from({ length: 150 }, (_, i) => `${label} ${i}: some content here`).join("\n")
const read = (callID: string, file: string) =>
  tool({ tool: "read", callID, input: { filePath: file }, output: big(file) })

/** One agent run: three requests, each adding a step; two of them make a read a duplicate. */
const run: ReadonlyArray<Array<Msg>> = (() => {
  const steps = [
    user("look at the files"),
    assistant([read("c1", "src/a.ts"), read("c2", "src/b.ts")]),
    assistant([read("c3", "src/a.ts")]),
    assistant([read("c4", "src/b.ts")])
  ]
  return [steps.slice(0, 2), steps.slice(0, 3), steps.slice(0, 4)]
})()

const origin = { agent: "plan", model: { providerID: "anthropic", modelID: "claude" }, variant: "high" }

/**
 * The notes the host received after a user turn with `origin`, the given requests and then an idle event. `between`
 * runs after the requests (a discard or extract the model made) and is followed by the next request, which carries
 * its prunes.
 */
const notesAfter = (
  requests: ReadonlyArray<Array<Msg>>,
  options: { readonly config?: object; readonly between?: Effect.Effect<unknown, unknown, PluginServices> } = {}
) =>
  Effect.gen(function*() {
    const { call, hooks, run } = yield* pluginHooks({ config: options.config ?? {} })
    yield* call(() => hooks["chat.message"]!({ sessionID, messageID: "msg_1", ...origin } as never, {} as never))
    const transform = (request: Array<Msg>) =>
      call(() => hooks["experimental.chat.messages.transform"]!({} as never, { messages: fresh(request) as never }))
    for (const request of requests) yield* transform(request)
    if (options.between !== undefined) {
      yield* run(options.between)
      yield* transform(requests[requests.length - 1]!)
    }
    const before = yield* run(notes)
    yield* call(() => hooks.event!(idle(sessionID)))
    return { before, after: yield* run(notes) }
  })

describe("notes", () => {
  it.effect("automatic prunes of one run are batched into one note, sent when the session goes idle", () =>
    Effect.gen(function*() {
      const { after, before } = yield* notesAfter(run)
      assert.deepStrictEqual(before, [])
      assert.strictEqual(after.length, 1)
      assert.match(after[0]!.text, /^DCP · Context pruned: ~[\d.]+k? tokens from 2 calls \(2 duplicate\)/)
    }))

  it.effect("the note carries the origin of the user's turn, so it does not switch the agent", () =>
    Effect.gen(function*() {
      const { after } = yield* notesAfter(run)
      assert.deepStrictEqual(
        { sessionID: after[0]!.sessionID, agent: after[0]!.agent, model: after[0]!.model, variant: after[0]!.variant },
        { sessionID, ...origin }
      )
    }))

  it.effect("pruneNotification off sends no note", () =>
    Effect.gen(function*() {
      const { after } = yield* notesAfter(run, {
        config: { pruneNotification: "off" },
        between: discard(sessionID, ["noise", "3"])
      })
      assert.deepStrictEqual(after, [])
    }))

  it.effect("minimal wording is one line with the tokens saved now and in the session, and the reason", () =>
    Effect.gen(function*() {
      const { after } = yield* notesAfter(run, { config: { pruneNotification: "minimal" } })
      // One line as written; the note wraps it at a word to fit the terminal (a continuation of prose is not indented).
      assert.match(
        after[0]!.text.replaceAll("\n", " "),
        /^DCP · Context pruned: ~[\d.]+k? tokens from 2 calls \(2 duplicate\); ~[\d.]+k? saved in this session\.$/
      )
    }))

  it.effect("detailed wording adds one line per pruned call with its ID, tool, path and reason", () =>
    Effect.gen(function*() {
      const { after } = yield* notesAfter(run, { config: { pruneNotification: "detailed" } })
      const lines = after[0]!.text.split("\n").filter((line) => line.startsWith("  "))
      assert.strictEqual(lines.length, 2)
      assert.match(lines[0]!, /^ {2}1 {2}read src\/a\.ts {2}duplicate, ~[\d.]+k?$/)
      assert.match(lines[1]!, /^ {2}2 {2}read src\/b\.ts {2}duplicate, ~[\d.]+k?$/)
    }))

  it.effect("automatic prunes and a discard in the same run share one note", () =>
    Effect.gen(function*() {
      const { after } = yield* notesAfter(run, { between: discard(sessionID, ["completion", "3"]) })
      assert.strictEqual(after.length, 1)
      // Wrapping a long line only changes where its spaces are.
      assert.match(after[0]!.text.replace(/\s+/g, " "), /from 3 calls \(2 duplicate, 1 discarded\)/)
    }))

  it.effect("extract.showDistillation adds the distilled text under its call", () =>
    Effect.gen(function*() {
      const { after } = yield* notesAfter(run, {
        config: { tools: { extract: { showDistillation: true } } },
        between: extract(sessionID, ["3"], ["a.ts exports compute()"])
      })
      assert.include(after[0]!.text, "  3  read src/a.ts  extracted, ")
      assert.include(after[0]!.text, "\n      ↳ a.ts exports compute()")
    }))

  it.effect("without showDistillation the distilled text is not in the note", () =>
    Effect.gen(function*() {
      const { after } = yield* notesAfter(run, { between: extract(sessionID, ["3"], ["a.ts exports compute()"]) })
      assert.notInclude(after[0]!.text, "a.ts exports compute()")
    }))

  it.effect("a run that pruned nothing sends no note", () =>
    Effect.gen(function*() {
      const { after } = yield* notesAfter([run[0]!])
      assert.deepStrictEqual(after, [])
    }))

  it.effect("a session.status event with an idle status sends the note too", () =>
    Effect.gen(function*() {
      const { call, hooks, run: inPlugin } = yield* pluginHooks()
      for (const request of run) {
        yield* call(() =>
          hooks["experimental.chat.messages.transform"]!({} as never, { messages: fresh(request) as never })
        )
      }
      yield* call(() =>
        hooks.event!({
          event: { type: "session.status", properties: { sessionID, status: { type: "busy" } } } as never
        })
      )
      assert.deepStrictEqual(yield* inPlugin(notes), [])
      yield* call(() =>
        hooks.event!({
          event: { type: "session.status", properties: { sessionID, status: { type: "idle" } } } as never
        })
      )
      assert.strictEqual((yield* inPlugin(notes)).length, 1)
    }))
})
