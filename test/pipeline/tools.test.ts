import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { event } from "../../src/hooks/session.ts"
import { SessionId } from "../../src/host/sessionId.ts"
import { discard, extract } from "../../src/hooks/tools.ts"
import { Persistence } from "../../src/services/Persistence.ts"
import { SessionStore } from "../../src/services/SessionStore.ts"
import { assistant, fresh, type Msg, sessionID, tool, toolPart, user } from "../support/history.ts"
import { platform, tempDir } from "../support/layers.ts"
import { notes, pipelineUnder, send, stateOf, tagged, tailOf, pipelineTest } from "./helpers.ts"
import { storedSession } from "../persistence/support.ts"

const big = (label: string) => Array.from({ length: 150 }, (_, i) => `${label} ${i}: some content here`).join("\n")

/**
 * IDs by position: 1 read, 2 grep, 3 task (always protected), 4 read of a protected file, 5 bash, 6 a running bash,
 * 7 a bash whose output is not text.
 */
const history: Array<Msg> = [
  user("explore"),
  assistant([
    tool({ tool: "read", callID: "c1", input: { filePath: "src/a.ts" }, output: big("a") }),
    tool({ tool: "grep", callID: "c2", input: { pattern: "TODO" }, output: big("grep") }),
    tool({ tool: "task", callID: "c3", input: { description: "Explore", prompt: "look" }, output: big("task") })
  ]),
  assistant([
    tool({ tool: "read", callID: "c4", input: { filePath: "secret/keys.ts" }, output: big("secret") }),
    tool({ tool: "bash", callID: "c5", input: { command: "npm test" }, output: big("test") }),
    tool({ tool: "bash", callID: "c6", input: { command: "npm run dev" }, status: "running" }),
    tool({ tool: "bash", callID: "c7", input: { command: "ls" }, output: { files: ["a"] } })
  ])
]

/** The model's own call of a pruning tool, as it appears in the next request. */
const pruningCall = (name: "discard" | "extract", callID: string, input: Record<string, unknown>, output: string) =>
  assistant([tool({ tool: name, callID, input, output })])

const config = { protectedFilePatterns: ["**/secret/**"] }

/** A plugin under a fresh root with `config`, the history sent once (so the model has seen the IDs). */
const withPlugin = <A, E, R>(program: Effect.Effect<A, E, R>, options: { config?: unknown; host?: object } = {}) =>
  pipelineTest(Effect.andThen(send(fresh(history)), program), options.config ?? config, { host: options.host ?? {} })

const rejection = <A, E extends { message: string }, R>(program: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.flip(program), (error) => error.message)

describe("discard", () => {
  it.effect("a successful discard prunes: the next request shows placeholders", () =>
    withPlugin(Effect.gen(function*() {
      const reply = yield* discard(sessionID, ["noise", "1", "2"])
      const next = yield* send(fresh([...history, pruningCall("discard", "d1", { ids: ["noise", "1", "2"] }, reply)]))
      assert.match(toolPart(next, "c1").state.output, /^\[pruned; (?:id|recall) 1\]$/)
      assert.match(toolPart(next, "c2").state.output, /^\[pruned; (?:id|recall) 2\]$/)
      assert.strictEqual(toolPart(next, "c5").state.output, tagged(5, big("test")))
    })))

  it.effect("the reply tells the model what was pruned", () =>
    withPlugin(Effect.gen(function*() {
      const reply = yield* discard(sessionID, ["completion", "1", "5"])
      assert.match(reply, /^Discarded 2 outputs, ~[\d.]+k? tokens: 1 read src\/a\.ts, 5 bash npm test \(completion\)\./)
    })))

  it.effect("a successful discard counts in the session's stats once the next request carries it", () =>
    withPlugin(Effect.gen(function*() {
      const reply = yield* discard(sessionID, ["noise", "1", "2"])
      assert.strictEqual((yield* stateOf(sessionID)).stats.calls, 0)
      yield* send(fresh([...history, pruningCall("discard", "d1", { ids: ["noise", "1", "2"] }, reply)]))
      const state = yield* stateOf(sessionID)
      assert.strictEqual(state.stats.calls, 2)
      assert.strictEqual(state.stats.byReason.discard?.calls, 2)
      assert.deepStrictEqual(Object.keys(state.stats.byTool).sort(), ["grep", "read"])
      assert.strictEqual(state.stats.lastPrune?.reason, "discard")
      assert.isAbove(state.stats.tokens, 0)
    })))

  it.effect("a successful discard is persisted: flushed to the session's state file", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* Effect.gen(function*() {
        yield* send(fresh(history))
        yield* discard(sessionID, ["noise", "1"])
        yield* (yield* SessionStore).flush
        const stored = yield* (yield* Persistence).load(sessionID)
        assert.deepStrictEqual(Option.map(stored, (file) => Object.keys(file.pruned)), Option.some(["c1"]))
      }).pipe(Effect.provide(pipelineUnder(root, config)))
      const file = yield* storedSession(root, sessionID)
      assert.strictEqual(file.pruned.c1?.reason, "discard")
      assert.strictEqual(file.ids.c1, 1)
    }).pipe(Effect.provide(platform)))

  it.effect("the note is queued when the next request carries the prune and sent only when the session goes idle", () =>
    withPlugin(Effect.gen(function*() {
      const reply = yield* discard(sessionID, ["noise", "1", "2"])
      yield* send(fresh([...history, pruningCall("discard", "d1", { ids: ["noise", "1", "2"] }, reply)]))
      assert.deepStrictEqual(yield* notes, [])
      yield* event({ type: "session.idle", properties: { sessionID } })
      const sent = yield* notes
      assert.strictEqual(sent.length, 1)
      assert.strictEqual(sent[0]!.sessionID, sessionID)
      assert.match(sent[0]!.text, /^DCP · Context pruned: ~[\d.]+k? tokens from 2 calls \(2 discarded\)/)
      yield* event({ type: "session.idle", properties: { sessionID } })
      assert.strictEqual((yield* notes).length, 1)
    })))

  it.effect("the reply, not a note in the next request, asks the model to carry on", () =>
    withPlugin(Effect.gen(function*() {
      const reply = yield* discard(sessionID, ["noise", "1"])
      const next = yield* send(fresh([...history, pruningCall("discard", "d1", { ids: ["noise", "1"] }, reply)]))
      assert.match(reply, /Carry on with your task\.$/)
      assert.isUndefined(tailOf(next))
    })))

  it.effect("after a discard the next nudge waits for nudgeFrequency new results", () =>
    withPlugin(
      Effect.gen(function*() {
        const reply = yield* discard(sessionID, ["noise", "1"])
        let messages = [...history, pruningCall("discard", "d1", { ids: ["noise", "1"] }, reply)]
        const nudged: Array<boolean> = []
        for (const n of [9, 10, 11, 12]) {
          const sent = yield* send(fresh(messages))
          nudged.push(/could be discarded or extracted/.test(tailOf(sent) ?? ""))
          messages = [
            ...messages,
            assistant([tool({ tool: "glob", callID: `c${n}`, input: { pattern: `*.${n}` }, output: big(`glob${n}`) })])
          ]
        }
        // Counted from before the discard, the 8th result (the request after c9) would have been due.
        assert.deepStrictEqual(nudged, [false, false, false, true])
      }),
      // Billed per request, a nudge is always worth its rebuild: only the count decides.
      {
        config: {
          ...config,
          cache: { pricing: "per-request" },
          tools: { settings: { nudgeFrequency: 4, nudgeMinTokens: 100 } }
        }
      }
    ))
})

describe("extract", () => {
  const distillation = ["a.ts exports compute() at line 12", "TODOs only in src/legacy"]

  it.effect("the distillation is kept as a finding", () =>
    withPlugin(Effect.gen(function*() {
      yield* extract(sessionID, ["1", "2"], distillation)
      const state = yield* stateOf(sessionID)
      assert.deepStrictEqual(state.findings, [
        { id: 1, tool: "read", text: distillation[0]! },
        { id: 2, tool: "grep", text: distillation[1]! }
      ])
    })))

  it.effect("the outputs are pruned and the extract call still carries the distillation in the next request", () =>
    withPlugin(Effect.gen(function*() {
      const reply = yield* extract(sessionID, ["1", "2"], distillation)
      const next = yield* send(
        fresh([...history, pruningCall("extract", "x1", { ids: ["1", "2"], distillation }, reply)])
      )
      assert.match(toolPart(next, "c1").state.output, /^\[pruned after extract; (?:id|recall) 1\]$/)
      assert.match(toolPart(next, "c2").state.output, /^\[pruned after extract; (?:id|recall) 2\]$/)
      assert.deepStrictEqual(toolPart(next, "x1").state.input, { ids: ["1", "2"], distillation })
      assert.strictEqual(toolPart(next, "x1").state.output, reply)
    })))

  it.effect("the extract reply names what was pruned", () =>
    withPlugin(Effect.gen(function*() {
      const reply = yield* extract(sessionID, ["5"], ["tests pass"])
      assert.match(reply, /^Extracted 1 output, ~[\d.]+k? tokens: 5 bash npm test\./)
    })))
})

describe("validation failures are rejections that prune nothing", () => {
  const failures: ReadonlyArray<readonly [string, () => Effect.Effect<string, { message: string }, any>, string]> = [
    ["an empty discard", () => discard(sessionID, []), "ids is empty. Pass the reason first"],
    [
      "a discard without a reason",
      () => discard(sessionID, ["1", "2"]),
      'The reason is missing: the first entry of ids must be "completion" or "noise"'
    ],
    ["an unknown reason", () => discard(sessionID, ["cleanup", "1"]), 'Unknown reason "cleanup". Use "completion"'],
    ["a reason without ids", () => discard(sessionID, ["noise"]), 'No ids after the reason "noise"'],
    ["a non-numeric id", () => discard(sessionID, ["noise", "abc"]), '"abc" is not a numeric id'],
    [
      "an id out of range",
      () => discard(sessionID, ["noise", "99"]),
      "There is no tool call with id 99 in this conversation"
    ],
    ["an id listed twice", () => discard(sessionID, ["noise", "1", "1"]), "id 1 is listed twice."],
    [
      "an id of a protected tool",
      () => discard(sessionID, ["noise", "3"]),
      "id 3 (task Explore) is a task call, which is never pruned."
    ],
    [
      "an id of a protected file",
      () => discard(sessionID, ["noise", "4"]),
      "id 4 (read secret/keys.ts) touches a file matching a protected file pattern"
    ],
    [
      "an id of an unfinished call",
      () => discard(sessionID, ["noise", "6"]),
      "id 6 (bash npm run dev) has not finished yet."
    ],
    [
      "an id with no text output",
      () => discard(sessionID, ["noise", "7"]),
      "id 7 (bash ls) has no output worth pruning"
    ],
    [
      "valid and invalid ids together",
      () => discard(sessionID, ["noise", "1", "99"]),
      "There is no tool call with id 99"
    ],
    [
      "an empty extract",
      () => extract(sessionID, [], []),
      "ids is empty. Pass the numbers of the outputs' [id N] tags"
    ],
    ["fewer findings than ids", () => extract(sessionID, ["1", "2"], ["one"]), "Got 2 ids but 1 distillation entry"],
    ["a blank finding", () => extract(sessionID, ["1", "2"], ["one", "  "]), "The distillation for id 2 is empty"],
    ["an extract of a protected tool", () => extract(sessionID, ["3"], ["x"]), "is a task call, which is never pruned."]
  ]

  for (const [name, call, message] of failures) {
    it.effect(`${name} is rejected with a specific message and prunes nothing`, () =>
      withPlugin(Effect.gen(function*() {
        assert.include(yield* rejection(call()), message)
        const state = yield* stateOf(sessionID)
        assert.deepStrictEqual(state.pruned, {})
        assert.strictEqual(state.stats.calls, 0)
        yield* event({ type: "session.idle", properties: { sessionID } })
        assert.deepStrictEqual(yield* notes, [])
      })))
  }

  it.effect("an already pruned id is rejected and nothing more is pruned", () =>
    withPlugin(Effect.gen(function*() {
      yield* discard(sessionID, ["noise", "1"])
      assert.include(
        yield* rejection(discard(sessionID, ["noise", "2", "1"])),
        "id 1 (read src/a.ts) is already pruned."
      )
      assert.deepStrictEqual(Object.keys((yield* stateOf(sessionID)).pruned), ["c1"])
    })))

  it.effect("a turn-protected id is rejected", () =>
    withPlugin(
      Effect.gen(function*() {
        assert.include(
          yield* rejection(discard(sessionID, ["noise", "5"])),
          "id 5 (bash npm test) is from the last 2 turns, which are protected"
        )
        assert.deepStrictEqual((yield* stateOf(sessionID)).pruned, {})
      }),
      { config: { turnProtection: { enabled: true, turns: 2 } } }
    ))

  it.effect("pruning in a sub-agent session is rejected", () =>
    withPlugin(
      Effect.gen(function*() {
        assert.strictEqual(
          yield* rejection(discard(sessionID, ["noise", "1"])),
          "Pruning is not available in sub-agent sessions."
        )
      }),
      { host: { sessions: { [sessionID]: { parentID: "ses_parent" } } } }
    ))

  it.effect("pruning before any request of the session is rejected", () =>
    Effect.gen(function*() {
      const message = yield* pipelineTest(rejection(discard(SessionId.make("ses_unseen"), ["noise", "1"])))
      assert.strictEqual(message, "No tool calls are known in this conversation yet: there is nothing to prune.")
    }))
})
