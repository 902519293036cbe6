import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import fc from "fast-check"
import type { ToolIndex } from "../../src/engine/calls.ts"
import { Paths } from "../../src/services/Paths.ts"
import { ToolCache } from "../../src/services/ToolCache.ts"
import { build } from "../support/generate.ts"
import { assistant, fresh, type Msg, sessionID, text, tool, user } from "../support/history.ts"
import { requestsOf, scenario } from "../support/hostChanges.ts"
import { platform } from "../support/layers.ts"
import { pathsUnder } from "../support/paths.ts"
import { tokenizerWith } from "../support/layers.ts"

const withEncoder = (encode: (text: string) => number) =>
  ToolCache.layer.pipe(
    Layer.provide(tokenizerWith(encode)),
    Layer.provide(pathsUnder("/root")),
    Layer.provide(platform)
  )

const cache = withEncoder((value) => value.length)
const project = "/root/project"

const history = (): Array<Msg> => [
  user("fix the bug"),
  assistant([
    tool({ tool: "read", callID: "c1", input: { filePath: `${project}/src/app.ts` }, output: "one two three" }),
    tool({ tool: "bash", callID: "c2", input: { command: "npm test" }, error: "exit code 1" })
  ]),
  assistant([text("thinking"), tool({ tool: "grep", callID: "c3", input: { pattern: "TODO" }, output: "a:1" })])
]

describe("ToolCache", () => {
  it.effect("indexes tool calls in the order the model sees them, with turn and key argument", () =>
    Effect.gen(function*() {
      const index = yield* (yield* ToolCache).sync(sessionID, history())
      assert.deepStrictEqual(index.calls.map((call) => [call.callID, call.tool, call.turn, call.position]), [
        ["c1", "read", 1, 0],
        ["c2", "bash", 1, 1],
        ["c3", "grep", 2, 2]
      ])
      assert.strictEqual(index.turns, 2)
      assert.strictEqual(index.byCallId.get("c1")?.keyParameter, "src/app.ts")
      assert.strictEqual(index.byCallId.get("c1")?.filePath, `${project}/src/app.ts`)
      assert.strictEqual(index.byCallId.get("c2")?.error, "exit code 1")
      assert.strictEqual(index.byCallId.get("c1")?.outputTokens, "one two three".length)
    }).pipe(Effect.provide(cache)))

  it.effect("a call already indexed in its final state is not decoded or counted again", () => {
    const encoded: Array<string> = []
    return Effect.gen(function*() {
      const toolCache = yield* ToolCache
      const first = yield* toolCache.sync(sessionID, history())
      const countedFirst = encoded.length
      const second = yield* toolCache.sync(sessionID, history())
      assert.isAbove(countedFirst, 0)
      assert.strictEqual(encoded.length, countedFirst)
      assert.strictEqual(first.changed.length, 3)
      assert.strictEqual(second.changed.length, 0)
      assert.strictEqual(second.byCallId.get("c1"), first.byCallId.get("c1"))
    }).pipe(Effect.provide(withEncoder((value) => {
      encoded.push(value)
      return value.length
    })))
  })

  it.effect("a call whose status changed since the last request is indexed again", () =>
    Effect.gen(function*() {
      const toolCache = yield* ToolCache
      const running = [
        user("go"),
        assistant([tool({ tool: "read", callID: "c1", input: { filePath: "a" }, status: "running" })])
      ]
      const done = [
        user("go"),
        assistant([tool({ tool: "read", callID: "c1", input: { filePath: "a" }, output: "body" })])
      ]
      assert.strictEqual((yield* toolCache.sync(sessionID, running)).byCallId.get("c1")?.status, "running")
      const index = yield* toolCache.sync(sessionID, done)
      assert.strictEqual(index.byCallId.get("c1")?.status, "completed")
      assert.strictEqual(index.byCallId.get("c1")?.outputTokens, 4)
      assert.deepStrictEqual(index.changed.map((call) => call.callID), ["c1"])
    }).pipe(Effect.provide(cache)))

  it.effect("a call ID that comes back with another tool is a new call: indexed afresh, and reported replaced", () =>
    Effect.gen(function*() {
      const toolCache = yield* ToolCache
      const asTest = [user("go"), assistant([tool({ tool: "bash", callID: "c1", input: { command: "npm test" } })])]
      const asEdit = [
        user("go"),
        assistant([tool({ tool: "edit", callID: "c1", input: { filePath: "a.ts", oldString: "a", newString: "b" } })])
      ]
      const before = (yield* toolCache.sync(sessionID, asTest)).byCallId.get("c1")
      const index = yield* toolCache.sync(sessionID, asEdit)
      const after = index.byCallId.get("c1")
      assert.deepStrictEqual([after?.tool, after?.keyParameter], ["edit", "a.ts"])
      assert.notStrictEqual(after, before)
      assert.deepStrictEqual(index.replaced, ["c1"])
      assert.isFalse(index.appendOnly)
    }).pipe(Effect.provide(cache)))

  it.effect("a call ID that comes back with another input is a new call; the same input in another key order is not", () =>
    Effect.gen(function*() {
      const toolCache = yield* ToolCache
      const read = (input: Record<string, unknown>) => [
        user("go"),
        assistant([tool({ tool: "read", callID: "c1", input, output: "body" })])
      ]
      yield* toolCache.sync(sessionID, read({ filePath: "a.ts", offset: 1 }))
      const reordered = yield* toolCache.sync(sessionID, read({ offset: 1, limit: null, filePath: "a.ts" }))
      assert.deepStrictEqual(reordered.replaced, [])
      const other = yield* toolCache.sync(sessionID, read({ filePath: "b.ts", offset: 1 }))
      assert.deepStrictEqual(other.replaced, ["c1"])
      assert.strictEqual(other.byCallId.get("c1")?.keyParameter, "b.ts")
    }).pipe(Effect.provide(cache)))

  it.effect("a second tool part under a call ID the request already holds is left out of the index", () =>
    Effect.gen(function*() {
      const index = yield* (yield* ToolCache).sync(sessionID, [
        user("go"),
        assistant([
          tool({ tool: "read", callID: "c1", input: { filePath: "a.ts" }, output: "a" }),
          tool({ tool: "bash", callID: "c1", input: { command: "ls" }, output: "b" })
        ])
      ])
      assert.deepStrictEqual(index.calls.map((call) => [call.callID, call.tool, call.partIndex]), [["c1", "read", 1]])
    }).pipe(Effect.provide(cache)))

  it.effect("tool parts that do not decode are skipped, not fatal", () =>
    Effect.gen(function*() {
      const messages = history()
      const parts = messages[1]!.parts
      parts.push({ type: "tool", callID: "broken-1", tool: "read" })
      parts.push({ type: "tool", callID: 42, tool: "read", state: { status: "completed" } })
      parts.push({ type: "tool", callID: "broken-3", tool: "read", state: { status: "exploded", input: {} } })
      parts.push({ type: "mystery", payload: 1 })
      const index = yield* (yield* ToolCache).sync(sessionID, messages)
      assert.deepStrictEqual(index.calls.map((call) => call.callID), ["c1", "c2", "c3"])
    }).pipe(Effect.provide(cache)))

  it.effect("a non-string output is indexed but marked as not replaceable", () =>
    Effect.gen(function*() {
      const messages = [user("go"), assistant([tool({ tool: "x", callID: "c1", input: {}, output: { json: true } })])]
      const call = (yield* (yield* ToolCache).sync(sessionID, messages)).byCallId.get("c1")
      assert.strictEqual(call?.hasTextOutput, false)
      assert.strictEqual(call?.outputTokens, 0)
    }).pipe(Effect.provide(cache)))

  it.effect("an output OpenCode already cleared counts for nothing", () =>
    Effect.gen(function*() {
      const messages = [
        user("go"),
        assistant([tool({ tool: "read", callID: "c1", input: {}, output: "x".repeat(50), compacted: true })])
      ]
      const call = (yield* (yield* ToolCache).sync(sessionID, messages)).byCallId.get("c1")
      assert.strictEqual(call?.compacted, true)
      assert.strictEqual(call?.outputTokens, 0)
    }).pipe(Effect.provide(cache)))

  it.effect("calls gone from the view (after a compaction) are dropped and reported, with the summary", () =>
    Effect.gen(function*() {
      const toolCache = yield* ToolCache
      yield* toolCache.sync(sessionID, history())
      const summary = assistant([text("summary of the work")], { summary: true, id: "msg_summary" })
      const after = [
        summary,
        user("continue"),
        assistant([tool({ tool: "read", callID: "c4", input: { filePath: "b" }, output: "b" })])
      ]
      const index = yield* toolCache.sync(sessionID, after)
      assert.deepStrictEqual([...index.vanished].sort(), ["c1", "c2", "c3"])
      assert.deepStrictEqual([...index.byCallId.keys()], ["c4"])
      assert.strictEqual(index.summaryId, "msg_summary")
    }).pipe(Effect.provide(cache)))

  it.effect("a view that lost its newest messages, tool calls among them or not, shrank; one that grew did not", () =>
    Effect.gen(function*() {
      const toolCache = yield* ToolCache
      const base = history()
      yield* toolCache.sync(sessionID, fresh(base))
      assert.isFalse((yield* toolCache.sync(sessionID, fresh([...base, assistant([text("done")])]))).shrank)
      const undone = yield* toolCache.sync(sessionID, fresh([...base, user("again")]))
      assert.isTrue(undone.shrank)
      assert.isFalse(undone.appendOnly)
      assert.deepStrictEqual(undone.vanished, [])
    }).pipe(Effect.provide(cache)))

  it.effect("a request that lost a message in its middle has not shrunk; its calls are reported gone from the view", () =>
    Effect.gen(function*() {
      const toolCache = yield* ToolCache
      const base = history()
      yield* toolCache.sync(sessionID, fresh(base))
      const withoutMiddle = yield* toolCache.sync(sessionID, fresh([base[0]!, base[2]!, user("go on")]))
      assert.isFalse(withoutMiddle.shrank)
      assert.isFalse(withoutMiddle.appendOnly)
      assert.deepStrictEqual(withoutMiddle.vanished, ["c1", "c2"])
    }).pipe(Effect.provide(cache)))

  it.effect("sessions are indexed separately", () =>
    Effect.gen(function*() {
      const toolCache = yield* ToolCache
      yield* toolCache.sync("ses_a", history())
      const other = yield* toolCache.sync("ses_b", [user("hi", { session: "ses_b" })])
      assert.strictEqual(other.calls.length, 0)
      assert.strictEqual((yield* toolCache.sync("ses_a", fresh(history()))).changed.length, 0)
    }).pipe(Effect.provide(cache)))

  it.effect("counts the language server's errors a file change's output reports, and nothing of another output", () =>
    Effect.gen(function*() {
      const errors =
        '\n\nLSP errors detected in this file, please fix:\n<diagnostics file="a">\nERROR [1:1] x\n</diagnostics>'
      const index = yield* (yield* ToolCache).sync(sessionID, [
        user("go"),
        assistant([
          tool({ tool: "edit", callID: "c1", input: { filePath: "a" }, output: `Edit applied successfully.${errors}` }),
          tool({ tool: "bash", callID: "c2", input: { command: "cat log" }, output: `done${errors}` })
        ])
      ])
      assert.strictEqual(index.byCallId.get("c1")?.diagnosticsTokens, errors.length)
      assert.strictEqual(index.byCallId.get("c2")?.diagnosticsTokens, 0)
    }).pipe(Effect.provide(cache)))

  it.effect("a read that listed a directory shows no file's content", () =>
    Effect.gen(function*() {
      const listing = [`<path>${project}/src</path>`, "<type>directory</type>", "<entries>", "app.ts", "</entries>"]
      const index = yield* (yield* ToolCache).sync(sessionID, [
        user("go"),
        assistant([
          tool({ tool: "read", callID: "c1", input: { filePath: `${project}/src` }, output: listing.join("\n") }),
          tool({ tool: "read", callID: "c2", input: { filePath: `${project}/src/app.ts` }, output: "1: a" })
        ])
      ])
      assert.deepStrictEqual(index.byCallId.get("c1")?.contentFiles, [])
      assert.deepStrictEqual(index.byCallId.get("c1")?.files, [`${project}/src`])
      assert.deepStrictEqual(index.byCallId.get("c2")?.contentFiles, [`${project}/src/app.ts`])
    }).pipe(Effect.provide(cache)))

  it.effect("resolves a relative path against the project directory, as OpenCode's tools do, in a subdirectory of the worktree", () =>
    Effect.gen(function*() {
      const patch = ["*** Begin Patch", "*** Add File: src/new.ts", "+export {}", "*** End Patch"].join("\n")
      const index = yield* (yield* ToolCache).sync(sessionID, [
        user("go"),
        assistant([
          tool({ tool: "read", callID: "c1", input: { filePath: "src/a.ts" }, output: "1: a" }),
          tool({ tool: "apply_patch", callID: "c2", input: { patchText: patch }, output: "Success." })
        ])
      ])
      assert.strictEqual(index.byCallId.get("c1")?.absolutePath, "/repo/pkg/src/a.ts")
      assert.deepStrictEqual(index.byCallId.get("c2")?.files, ["/repo/pkg/src/new.ts"])
    }).pipe(Effect.provide(
      ToolCache.layer.pipe(
        Layer.provide(tokenizerWith((value) => value.length)),
        Layer.provide(Paths.layer({ directory: "/repo/pkg", worktree: "/repo" }, { HOME: "/home/user" })),
        Layer.provide(platform)
      )
    )))
})

/**
 * What an index says of its view, without what is relative to the pass before it (what changed, vanished or was
 * replaced since, whether it only grew) or the bookkeeping of passes: what a fresh index of the same request must say.
 */
const viewOf = (index: ToolIndex) => ({
  calls: index.calls.map(({ seen: _seen, finalPass: _finalPass, ...call }) => call),
  byCallId: [...index.byCallId.keys()].sort(),
  turns: index.turns,
  userTurns: index.userTurns,
  reasoningMessages: index.reasoningMessages,
  summaryId: index.summaryId,
  lastUserMessage: index.lastUserMessage,
  textChars: index.textChars,
  callTokens: index.callTokens
})

describe("ToolCache, kept up to date request after request", () => {
  it.effect(
    "says of every request what an index made afresh from it says: through growth, undo, requests out of order, compactions, and calls moved, dropped, swapped, reused or changed",
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(scenario({ maxMessages: 30, userWeight: 2 }), ({ spec, steps }) =>
            Effect.runPromise(
              Effect.gen(function*() {
                const kept = yield* ToolCache
                for (const request of requestsOf(build(spec, sessionID), steps)) {
                  const incremental = viewOf(yield* kept.sync(sessionID, fresh(request)))
                  const afresh = yield* ToolCache.use((cache) => cache.sync(sessionID, fresh(request))).pipe(
                    Effect.provide(Layer.fresh(cache))
                  )
                  const expected = viewOf(afresh)
                  for (const [i, call] of expected.calls.entries()) {
                    for (const [field, value] of Object.entries(call)) {
                      assert.deepStrictEqual(
                        (incremental.calls[i] as Record<string, unknown> | undefined)?.[field],
                        value,
                        `call ${i} (${call.callID}): ${field}`
                      )
                    }
                  }
                  assert.deepStrictEqual(incremental, expected)
                }
              }).pipe(Effect.provide(cache))
            )),
          { numRuns: 200 }
        )
      ),
    { timeout: 300_000 }
  )
})
