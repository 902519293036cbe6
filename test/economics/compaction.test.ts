import { assert, describe as effectDescribe, it as effectIt } from "@effect/vitest"
import { Effect } from "effect"
import { describe, it } from "vitest"
import { findingsForSummary } from "../../src/engine/prompts.ts"
import { SessionId } from "../../src/host/sessionId.ts"
import { compacting, event } from "../../src/hooks/session.ts"
import { extract } from "../../src/hooks/tools.ts"
import { Persistence } from "../../src/services/Persistence.ts"
import { emptySessionFile } from "../../src/state/schema.ts"
import { assistant, fresh, type Msg, sessionID, user } from "../support/history.ts"
import { tempDir } from "../support/layers.ts"
import { toolContext } from "../support/plugin.ts"
import { pluginHooks, pipelineUnder, send, stateOf, pipelineTest } from "../pipeline/helpers.ts"
import { read } from "./support.ts"

describe("findingsForSummary", () => {
  it("is undefined when there are no findings", () => {
    assert.isUndefined(findingsForSummary([]))
  })

  it("asks the summariser to keep each finding, naming its tool and id", () => {
    assert.strictEqual(
      findingsForSummary([{ id: 3, tool: "read", text: "a.ts exports parse()" }, {
        id: 5,
        tool: "grep",
        text: "no TODOs"
      }]),
      [
        "Findings the assistant distilled from tool outputs it pruned earlier. Keep them in the summary:",
        "- (read 3) a.ts exports parse()",
        "- (grep 5) no TODOs"
      ].join("\n")
    )
  })
})

/** IDs: 1 a read of a.ts, 2 a read of b.ts. */
const history: Array<Msg> = [user("read both"), assistant([read("c1", "src/a.ts"), read("c2", "src/b.ts")])]

const findings = ["a.ts exports parse() at line 12", "b.ts is unused"]

/** The history sent once, then both reads extracted. */
const extracted = Effect.gen(function*() {
  yield* send(fresh(history))
  yield* extract(sessionID, ["1", "2"], findings)
})

const compact = (id: SessionId = sessionID) =>
  Effect.gen(function*() {
    const context: Array<string> = []
    yield* compacting(id, context)
    return context
  })

/** OpenCode's report that the compaction finished: the summary is stored. */
const compacted = (id: SessionId = sessionID) => event({ type: "session.compacted", properties: { sessionID: id } })

/** A compaction that OpenCode completes: the compacting hook, then `session.compacted`. */
const compactFully = (id: SessionId = sessionID) => Effect.tap(compact(id), () => compacted(id))

effectDescribe("compaction hands extracted findings to the summariser", () => {
  effectIt.effect("pushes the findings into the compacting hook's context", () =>
    Effect.gen(function*() {
      const context = yield* pipelineTest(extracted.pipe(Effect.andThen(compact())))
      assert.deepStrictEqual(context, [
        findingsForSummary([
          { id: 1, tool: "read", text: findings[0]! },
          { id: 2, tool: "read", text: findings[1]! }
        ])!
      ])
    }))

  effectIt.effect(
    "pushes them once: after a completed compaction the next one gets nothing",
    () =>
      Effect.gen(function*() {
        const [first, second] = yield* pipelineTest(extracted.pipe(
          Effect.andThen(Effect.all([compactFully(), compact()]))
        ))
        assert.strictEqual(first.length, 1)
        assert.deepStrictEqual(second, [])
      })
  )

  effectIt.effect(
    "a compaction that never completed hands the same findings to the next one",
    () =>
      Effect.gen(function*() {
        const [first, second] = yield* pipelineTest(extracted.pipe(
          Effect.andThen(Effect.all([compact(), compact()]))
        ))
        assert.strictEqual(first.length, 1)
        assert.deepStrictEqual(second, first)
      })
  )

  effectIt.effect(
    "session.compacted clears the session's findings; the compacting hook alone keeps them",
    () =>
      pipelineTest(Effect.gen(function*() {
        yield* extracted
        yield* compact()
        assert.strictEqual((yield* stateOf(sessionID)).findings.length, 2)
        yield* compacted()
        assert.deepStrictEqual((yield* stateOf(sessionID)).findings, [])
      }))
  )

  effectIt.effect("session.compacted of another session leaves this one's findings", () =>
    Effect.gen(function*() {
      const state = yield* pipelineTest(extracted.pipe(
        Effect.andThen(compacted(SessionId.make("ses_other000000000000000001"))),
        Effect.andThen(stateOf(sessionID))
      ))
      assert.strictEqual(state.findings.length, 2)
    }))

  effectIt.effect("keeps what the context already held and appends after it", () =>
    Effect.gen(function*() {
      const context = yield* pipelineTest(extracted.pipe(
        Effect.andThen(Effect.gen(function*() {
          const context = ["OpenCode's own note"]
          yield* compacting(sessionID, context)
          return context
        }))
      ))
      assert.strictEqual(context.length, 2)
      assert.strictEqual(context[0], "OpenCode's own note")
      assert.include(context[1], findings[0])
    }))

  effectIt.effect("pushes nothing when nothing was extracted", () =>
    Effect.gen(function*() {
      const context = yield* pipelineTest(send(fresh(history)).pipe(Effect.andThen(compact())))
      assert.deepStrictEqual(context, [])
    }))

  effectIt.effect("findings extracted before a restart are handed over after it", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* extracted.pipe(Effect.provide(pipelineUnder(root)))
      const context = yield* compact().pipe(Effect.provide(pipelineUnder(root)))
      assert.strictEqual(context.length, 1)
      assert.include(context[0], findings[1])
    }))

  effectIt.effect("findings handed over are not handed over again after a restart", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* extracted.pipe(Effect.andThen(compactFully()), Effect.provide(pipelineUnder(root)))
      const context = yield* compact().pipe(Effect.provide(pipelineUnder(root)))
      assert.deepStrictEqual(context, [])
    }))

  effectIt.effect(
    "a sub-agent session pushes nothing, even with findings in its state file",
    () =>
      Effect.gen(function*() {
        const sub = SessionId.make("ses_subagent0000000000000001")
        const context = yield* pipelineTest(
          Effect.gen(function*() {
            const persistence = yield* Persistence
            yield* persistence.save({
              ...emptySessionFile(sub, 0),
              findings: [{ id: 1, tool: "read", text: "kept by mistake" }]
            })
            return yield* compact(sub)
          }),
          {},
          { host: { sessions: { [sub]: { parentID: sessionID } } } }
        )
        assert.deepStrictEqual(context, [])
      })
  )
})

effectDescribe("compaction through the plugin's hooks", () => {
  effectIt.effect(
    "experimental.session.compacting receives the findings in output.context",
    () =>
      Effect.gen(function*() {
        const { call, hooks } = yield* pluginHooks()
        yield* call(() =>
          hooks["experimental.chat.messages.transform"]!({} as never, { messages: fresh(history) as never })
        )
        yield* call(() => hooks.tool!.extract!.execute({ ids: ["2"], distillation: ["b.ts is unused"] }, toolContext()))
        const output = { context: [] as Array<string>, prompt: undefined }
        yield* call(() => hooks["experimental.session.compacting"]!({ sessionID }, output))
        assert.deepStrictEqual(output.context, [
          "Findings the assistant distilled from tool outputs it pruned earlier. Keep them in the summary:\n- (read 2) b.ts is unused"
        ])
      })
  )
})
