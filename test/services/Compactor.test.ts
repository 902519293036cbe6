import { assert, describe, it } from "@effect/vitest"
import { Effect, Ref } from "effect"
import { dcp } from "../../src/hooks/command.ts"
import { event, hostConfig } from "../../src/hooks/session.ts"
import { system } from "../../src/hooks/system.ts"
import { transformOf } from "../support/request.ts"
import { type HostFixture, HostRecorder } from "../../src/services/Host.ts"
import { assistant, fresh, lines, type Msg, sessionID, tool, user } from "../support/history.ts"
import { pluginTest } from "../support/pluginTest.ts"

/** A turn that read one file of ~`n` lines: about 12 tokens a line once sent. */
const turn = (n: number) => [
  user("look at a.ts"),
  assistant([tool({ tool: "read", callID: "c1", input: { filePath: "src/a.ts" }, output: lines(n) })])
]
const small = turn(20)
const large = turn(600)

const model = { providerID: "anthropic", id: "claude-sonnet-4-5", limit: { context: 200_000 } }

/** A request of `history` for the session, as OpenCode makes it (system prompt, then messages), then the turn's end. */
const requestThenIdle = (history: ReadonlyArray<unknown>) =>
  Effect.gen(function*() {
    yield* system(sessionID, ["You are a coding agent."], model)
    yield* transformOf(fresh([...history]))
    yield* event({ type: "session.idle", properties: { sessionID } })
  })

/** `history` with the provider's usage on its last assistant message: the context OpenCode counts and shows. */
const withUsage = (history: ReadonlyArray<Msg>, tokens: number): Array<Msg> =>
  history.map((message, i) =>
    i === history.length - 1
      ? {
        ...message,
        info: {
          ...message.info,
          tokens: { input: tokens - 200, output: 200, reasoning: 0, cache: { read: 0, write: 0 } }
        }
      }
      : message
  )

const notesText = Effect.gen(function*() {
  const recorder = yield* HostRecorder
  return (yield* Ref.get(recorder.notes)).map((note) => note.text)
})

const asked = Effect.gen(function*() {
  const recorder = yield* HostRecorder
  return yield* Ref.get(recorder.compactions)
})

const compactAt = (atTokens: number, host?: HostFixture) => <A, E, R>(body: Effect.Effect<A, E, R>) =>
  pluginTest(body, { config: { compaction: { enabled: true, atTokens } }, host })

describe("compaction between turns", () => {
  it.effect("a turn that ends with the context at compaction.atTokens asks OpenCode to compact, with its model", () =>
    compactAt(3_000)(Effect.gen(function*() {
      yield* requestThenIdle(large)
      assert.deepStrictEqual(yield* asked, [{
        sessionID,
        model: { providerID: "anthropic", modelID: "claude-sonnet-4-5" }
      }])
    })))

  it.effect("the user is told why, in a toast that names the setting", () =>
    compactAt(3_000)(Effect.gen(function*() {
      yield* requestThenIdle(large)
      const recorder = yield* HostRecorder
      const toasts = yield* Ref.get(recorder.toasts)
      assert.lengthOf(toasts, 1)
      assert.match(
        toasts[0]!.message,
        /^Compacting the session: its context had reached [\d,]+ tokens as OpenCode counts them, over compaction\.atTokens \(3,000\)/
      )
    })))

  it.effect("the threshold is crossed by the context as OpenCode counts it, where the provider reported one", () =>
    compactAt(9_000, { messages: { [sessionID]: withUsage(small, 9_250) } })(Effect.gen(function*() {
      yield* requestThenIdle(small)
      assert.lengthOf(yield* asked, 1)
      const toasts = yield* Ref.get((yield* HostRecorder).toasts)
      assert.include(toasts[0]!.message, "reached 9,250 tokens as OpenCode counts them")
    })))

  it.effect("once OpenCode reports the compaction done, a note says so with OpenCode's figure, and stats count it", () =>
    compactAt(3_000, { messages: { [sessionID]: withUsage(large, 8_120) } })(Effect.gen(function*() {
      yield* requestThenIdle(large)
      assert.deepStrictEqual(yield* notesText, [])
      yield* event({ type: "session.compacted", properties: { sessionID } })
      assert.deepStrictEqual(yield* notesText, [
        "DCP · Compacted the session between turns: its context had reached 8,120\n" +
        "tokens as OpenCode counts them, over compaction.atTokens (3,000) in\n" +
        "dcp.jsonc; compaction.enabled: false turns this off."
      ])
      yield* dcp(sessionID, "stats")
      assert.include((yield* notesText).at(-1), "compactions: 1 asked between turns")
    })))

  it.effect("a compaction the plugin did not ask for is not counted nor noted", () =>
    compactAt(3_000)(Effect.gen(function*() {
      yield* requestThenIdle(small)
      yield* event({ type: "session.compacted", properties: { sessionID } })
      assert.deepStrictEqual(yield* notesText, [])
    })))

  it.effect("a turn that ends below it does not", () =>
    compactAt(3_000)(Effect.gen(function*() {
      yield* requestThenIdle(small)
      assert.deepStrictEqual(yield* asked, [])
    })))

  it.effect("is asked once: the idle after the compaction, with no request of the model between, asks nothing", () =>
    compactAt(3_000)(Effect.gen(function*() {
      yield* requestThenIdle(large)
      yield* event({ type: "session.idle", properties: { sessionID } })
      yield* event({ type: "session.status", properties: { sessionID, status: { type: "idle" } } })
      assert.lengthOf(yield* asked, 1)
    })))

  it.effect("not on a compaction's summary: its count is what the summariser was sent, not what the session sends", () => {
    const compacted: Array<Msg> = [
      ...large,
      user("What did we do so far?"),
      {
        ...withUsage([assistant([])], 9_250)[0]!,
        info: { ...withUsage([assistant([])], 9_250)[0]!.info, summary: true }
      }
    ]
    return compactAt(9_000, { messages: { [sessionID]: compacted } })(Effect.gen(function*() {
      yield* requestThenIdle(large)
      assert.deepStrictEqual(yield* asked, [])
    }))
  })

  it.effect("not when OpenCode's own compaction.auto is false", () =>
    compactAt(3_000)(Effect.gen(function*() {
      yield* hostConfig({}, { auto: false })
      yield* requestThenIdle(large)
      assert.deepStrictEqual(yield* asked, [])
    })))

  it.effect("not when compaction.enabled is false", () =>
    pluginTest(
      Effect.gen(function*() {
        yield* requestThenIdle(large)
        assert.deepStrictEqual(yield* asked, [])
      }),
      { config: { compaction: { enabled: false, atTokens: 3_000 } } }
    ))

  it.effect("not unless the user turned it on: compaction.enabled is false by default", () =>
    pluginTest(
      Effect.gen(function*() {
        yield* requestThenIdle(large)
        assert.deepStrictEqual(yield* asked, [])
      }),
      { config: { compaction: { atTokens: 3_000 } } }
    ))

  it.effect("not where input is not billed per token: per request, a compaction is one more request to pay for", () =>
    pluginTest(
      Effect.gen(function*() {
        yield* requestThenIdle(large)
        assert.deepStrictEqual(yield* asked, [])
      }),
      { config: { cache: { pricing: "per-request" }, compaction: { enabled: true, atTokens: 3_000 } } }
    ))

  it.effect("not for a session `opencode run` made for one prompt: it exits when the session goes idle", () =>
    compactAt(3_000, { sessions: { [sessionID]: { createdByRun: true } } })(Effect.gen(function*() {
      yield* requestThenIdle(large)
      assert.deepStrictEqual(yield* asked, [])
    })))

  it.effect("not while an undo waits for the user's next prompt: a compaction would make it final", () =>
    compactAt(3_000, { sessions: { [sessionID]: { reverting: true } } })(Effect.gen(function*() {
      yield* requestThenIdle(large)
      assert.deepStrictEqual(yield* asked, [])
    })))

  it.effect("not when the session's loop already runs again (a prompt queued behind the turn)", () =>
    compactAt(3_000, { busy: [sessionID] })(Effect.gen(function*() {
      yield* requestThenIdle(large)
      assert.deepStrictEqual(yield* asked, [])
    })))
})
