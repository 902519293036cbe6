import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { decodeExport } from "../../src/analysis/session.ts"

const user = (id: string, parts: Array<unknown>) => ({
  info: { id, sessionID: "ses_1", role: "user", time: { created: 1_000 }, agent: "build" },
  parts
})
const assistant = (id: string, parts: Array<unknown>) => ({
  info: { id, sessionID: "ses_1", role: "assistant", time: { created: 2_000 }, providerID: "p", modelID: "m" },
  parts
})
const exportOf = (messages: Array<unknown>) => JSON.stringify({ info: { id: "ses_1", directory: "/p" }, messages })

const failure = (text: string) =>
  Effect.gen(function*() {
    const error = yield* Effect.flip(decodeExport(text, "in.json"))
    assert.strictEqual(error._tag, "BadExport")
    assert.notInclude(error.message, "\n")
    return error.message
  })

describe("decodeExport", () => {
  it.effect("keeps every message and the known parts as they came", () =>
    Effect.gen(function*() {
      const tool = {
        type: "tool",
        callID: "c1",
        tool: "read",
        state: { status: "completed", input: { filePath: "/p/a.ts" }, output: "x", metadata: { kept: true } }
      }
      const session = yield* decodeExport(
        exportOf([user("m1", [{ type: "text", text: "hi" }]), assistant("m2", [tool])]),
        "in.json"
      )
      assert.strictEqual(session.messages.length, 2)
      assert.deepStrictEqual(session.messages[1]!.parts[0], tool)
      assert.deepStrictEqual(session.skipped, {})
      assert.strictEqual(session.infos[1]!.providerID, "p")
    }))

  it.effect("skips and counts parts of unknown types", () =>
    Effect.gen(function*() {
      const session = yield* decodeExport(
        exportOf([
          user("m1", [{ type: "text", text: "hi" }, { type: "hologram", beam: 1 }]),
          assistant("m2", [{ type: "step-start" }, { type: "hologram" }, { type: "vibe-check" }, {
            type: "text",
            text: "ok"
          }])
        ]),
        "in.json"
      )
      assert.deepStrictEqual(session.skipped, { hologram: 2, "vibe-check": 1 })
      assert.deepStrictEqual(session.messages[1]!.parts.map((part) => part.type), ["step-start", "text"])
    }))

  it.effect("an empty input says so", () =>
    Effect.map(failure("  \n"), (message) => assert.match(message, /^in\.json is empty/)))

  it.effect("text that is not JSON is named as such", () =>
    Effect.map(failure("hello\nworld"), (message) => assert.match(message, /^in\.json is not JSON \(/)))

  it.effect("JSON that stops in the middle points at piping from opencode export", () =>
    Effect.map(failure(exportOf([user("m1", [])]).slice(0, 40)), (message) => {
      assert.match(message, /^in\.json is not complete JSON: it stops after 40 bytes/)
      assert.include(message, "opencode export <sessionID> > session.json")
    }))

  it.effect("JSON that is not an export names the first field that is wrong and what is there", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        yield* failure("[1, 2]"),
        "in.json is not an OpenCode export: the top level: expected object, found an array"
      )
      assert.strictEqual(yield* failure(`{"hello": 1}`), "in.json is not an OpenCode export: info is missing")
      const badRole = exportOf([{ ...user("m1", []), info: { ...user("m1", []).info, role: "system" } }])
      assert.strictEqual(
        yield* failure(badRole),
        `in.json is not an OpenCode export: messages[0].info.role: expected "user" | "assistant", found "system"`
      )
      const badTool = exportOf([
        user("m1", []),
        assistant("m2", [{ type: "tool", callID: "c", tool: "read", state: { status: "done" } }])
      ])
      assert.match(
        yield* failure(badTool),
        /^in\.json is not an OpenCode export: messages\[1\]\.parts\[0\]\.state\.status: expected/
      )
    }))

  it.effect("an export with no messages has nothing to analyse", () =>
    Effect.map(
      failure(exportOf([])),
      (message) =>
        assert.strictEqual(message, "in.json is an export of session ses_1 with no messages: nothing to analyse")
    ))

  it.effect("an export without a model request has nothing to replay", () =>
    Effect.map(
      failure(exportOf([user("m1", [{ type: "text", text: "hi" }])])),
      (message) => assert.match(message, /has no assistant messages/)
    ))
})
