import { assert, describe, it } from "@effect/vitest"
import { Effect, FileSystem } from "effect"
import { dcp } from "../../src/hooks/command.ts"
import { event } from "../../src/hooks/session.ts"
import { system } from "../../src/hooks/system.ts"
import { transformOf } from "../support/request.ts"
import { Status } from "../../src/services/Status.ts"
import { loadStatus } from "../../src/tui/board.ts"
import { assistant, fresh, lines, type Msg, sessionID, tool, user } from "../support/history.ts"
import { pluginUnder, platform, tempDir } from "../support/layers.ts"

const statusDir = (root: string) => `${root}/data/opencode/storage/plugin/dcp/status`

/** The same file read twice: the older read is a duplicate, pruned at once under `cache.mode: "immediate"`. */
const history = (root: string): Array<Msg> => [
  user("read a.ts twice"),
  assistant([
    tool({ tool: "read", callID: "c1", input: { filePath: `${root}/project/a.ts` }, output: lines(80, "a") })
  ]),
  assistant([tool({ tool: "read", callID: "c2", input: { filePath: `${root}/project/a.ts` }, output: lines(80, "a") })])
]

/** The plugin under a fresh root, prunes applied at once, with `messages` as the stored session. */
const scenario = <A, E, R>(
  body: (root: string, messages: Array<Msg>) => Effect.Effect<A, E, R>,
  config = `{ "cache": { "mode": "immediate" } }`
) =>
  Effect.gen(function*() {
    const root = yield* tempDir
    const fs = yield* FileSystem.FileSystem
    yield* fs.makeDirectory(`${root}/config/opencode`, { recursive: true })
    yield* fs.writeFileString(`${root}/config/opencode/dcp.jsonc`, config)
    const messages = history(root)
    return yield* body(root, messages).pipe(
      Effect.provide(pluginUnder(root, { host: { messages: { [sessionID]: messages } } }))
    )
  }).pipe(Effect.provide(platform))

/** What the terminal UI reads, once every taken status is written. */
const readByTui = (root: string) =>
  Effect.gen(function*() {
    yield* Status.use((status) => status.flush)
    return yield* Effect.promise(() => loadStatus(statusDir(root), sessionID))
  })

/** The status as the terminal UI reads it, which must be there. */
const okStatus = (root: string) =>
  Effect.flatMap(
    readByTui(root),
    (loaded) =>
      loaded._tag === "ok" ? Effect.succeed(loaded.status) : Effect.die(new Error(`no status: ${loaded._tag}`))
  )

describe("the status the terminal UI reads", () => {
  it.effect("after a request: the context as sent, its window, and the prune in effect with its label", () =>
    scenario((root, messages) =>
      Effect.gen(function*() {
        yield* system(sessionID, ["You are a coding agent."], { providerID: "fake", limit: { context: 200_000 } })
        yield* transformOf(fresh(messages))
        const loaded = yield* readByTui(root)
        assert.strictEqual(loaded._tag, "ok")
        if (loaded._tag !== "ok") return
        const status = loaded.status
        assert.deepStrictEqual(status.pruned.calls, 1)
        assert.isAbove(status.pruned.tokens, 100)
        assert.deepStrictEqual(status.recent.map(({ id, tool, target, reason }) => ({ id, tool, target, reason })), [
          { id: 1, tool: "read", target: "a.ts", reason: "deduplication" }
        ])
        const context = status.context!
        assert.strictEqual(context.limit, 200_000)
        assert.strictEqual(context.calls, 2)
        assert.strictEqual(context.pruned, status.pruned.tokens)
        assert.strictEqual(context.tokens, context.system + context.text + context.tools)
        assert.isAbove(context.system, 0)
        assert.isTrue(status.commands)
      })
    ))

  it.effect("a prune that waits for the prompt cache is pending, with why", () =>
    scenario((root, messages) =>
      Effect.gen(function*() {
        yield* transformOf(fresh(messages))
        const loaded = yield* readByTui(root)
        assert.deepStrictEqual(
          loaded._tag === "ok" ? [loaded.status.pruned.calls, loaded.status.pending?.calls] : loaded,
          [0, 1]
        )
        assert.match(loaded._tag === "ok" ? loaded.status.pending?.reason ?? "" : "", /cache/)
      }), `{ "cache": { "mode": "auto" } }`))

  it.effect("a prune that pays back but is gathered into a batch says in how many requests it applies", () =>
    scenario((root, messages) =>
      Effect.gen(function*() {
        yield* transformOf(fresh(messages))
        const loaded = yield* readByTui(root)
        assert.match(
          loaded._tag === "ok" ? loaded.status.pending?.reason ?? "" : "",
          /^gathering a batch, applies in ~\d+ requests$/
        )
      }), `{ "cache": { "mode": "auto", "horizon": 1000, "minPruneTokens": 0 } }`))

  it.effect("a /dcp restore shows at once, before the next request", () =>
    scenario((root, messages) =>
      Effect.gen(function*() {
        yield* transformOf(fresh(messages))
        yield* dcp(sessionID, "restore all")
        const loaded = yield* readByTui(root)
        assert.deepStrictEqual(loaded._tag === "ok" ? [loaded.status.pruned, loaded.status.recent] : loaded, [
          { calls: 0, tokens: 0 },
          []
        ])
      })
    ))

  it.effect("after a /dcp restore, the context's figures show the restored tokens sent again, before the next request", () =>
    scenario((root, messages) =>
      Effect.gen(function*() {
        yield* transformOf(fresh(messages))
        const before = yield* okStatus(root)
        yield* dcp(sessionID, "restore all")
        const after = yield* okStatus(root)
        assert.strictEqual(after.context!.pruned, 0)
        assert.strictEqual(after.context!.tokens, before.context!.tokens + before.context!.pruned)
        assert.isTrue(after.context!.changed)
        assert.isFalse(before.context!.changed)
      })
    ))

  it.effect("a sweep takes its calls out of what waits for the cache, and counts them pruned, at once", () =>
    scenario((root, messages) =>
      Effect.gen(function*() {
        yield* transformOf(fresh(messages))
        assert.strictEqual((yield* okStatus(root)).pending?.calls, 1)
        yield* dcp(sessionID, "sweep")
        const status = yield* okStatus(root)
        assert.strictEqual(status.pending?.calls, 0)
        assert.strictEqual(status.pruned.calls, 2)
        assert.deepStrictEqual(status.queued, { calls: 2, tokens: status.pruned.tokens })
        assert.strictEqual(status.context!.pruned, status.pruned.tokens)
      }), `{ "cache": { "mode": "auto" } }`))

  it.effect("after OpenCode starts again, a command finds the session's calls in the stored session", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const messages = history(root)
      const plugin = () => pluginUnder(root, { host: { messages: { [sessionID]: messages } } })
      yield* transformOf(fresh(messages)).pipe(Effect.provide(plugin()))
      const restarted = yield* Effect.gen(function*() {
        yield* dcp(sessionID, "sweep")
        return yield* readByTui(root)
      }).pipe(Effect.provide(plugin()))
      assert.strictEqual(restarted._tag, "ok")
      if (restarted._tag !== "ok") return
      assert.strictEqual(restarted.status.pruned.calls, 2)
      assert.strictEqual(restarted.status.context?.calls, 2)
    }).pipe(Effect.provide(platform)))

  it.effect("a deleted session takes its status file with it", () =>
    scenario((root, messages) =>
      Effect.gen(function*() {
        yield* transformOf(fresh(messages))
        assert.strictEqual((yield* readByTui(root))._tag, "ok")
        yield* event({ type: "session.deleted", properties: { info: { id: sessionID } } })
        assert.deepStrictEqual(yield* readByTui(root), { _tag: "missing" })
      })
    ))

  it.effect("after OpenCode starts again, the window is the stored model's, and the system prompt is said to be unknown", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const messages = history(root)
      const plugin = () => pluginUnder(root, { host: { messages: { [sessionID]: messages } } })
      yield* Effect.gen(function*() {
        yield* system(sessionID, ["You are a coding agent."], { providerID: "fake", limit: { context: 200_000 } })
        yield* transformOf(fresh(messages))
      }).pipe(Effect.provide(plugin()))
      const restarted = yield* Effect.gen(function*() {
        yield* dcp(sessionID, "sweep")
        return yield* okStatus(root)
      }).pipe(Effect.provide(plugin()))
      assert.strictEqual(restarted.context?.limit, 200_000)
      assert.isTrue(restarted.context?.systemUnknown)
      assert.strictEqual(restarted.context?.system, 0)
    }).pipe(Effect.provide(platform)))

  it.effect("the waiting prunes' reason expires with the prompt cache: the last request plus its life", () =>
    scenario((root, messages) =>
      Effect.gen(function*() {
        yield* transformOf(fresh(messages))
        const status = yield* okStatus(root)
        assert.strictEqual(status.pending?.calls, 1)
        assert.strictEqual(status.pending?.expiresAt, status.context!.at + 120_000)
      }), `{ "cache": { "mode": "auto", "ttlSeconds": 120 } }`))

  it.effect("names the problems of the config files in effect, until they are fixed", () =>
    scenario((root, messages) =>
      Effect.gen(function*() {
        yield* transformOf(fresh(messages))
        assert.deepStrictEqual((yield* okStatus(root)).problems, [
          { file: `${root}/config/opencode/dcp.jsonc`, message: "strategies.nonsense: unknown key" }
        ])
      }), `{ "cache": { "mode": "immediate" }, "strategies": { "nonsense": true } }`))

  it.effect("counts a fold per call: a call only its fold takes out is listed, and the list adds up to what is in effect", () =>
    scenario(
      (root) =>
        Effect.gen(function*() {
          const file = (name: string) => `${root}/project/${name}.ts`
          const turns: Array<Msg> = [
            user("read a and b, then list"),
            assistant([
              tool({ tool: "read", callID: "r1", input: { filePath: file("a") }, output: lines(80, "a") }),
              tool({ tool: "read", callID: "r2", input: { filePath: file("b") }, output: lines(80, "b") })
            ]),
            assistant([tool({ tool: "bash", callID: "b1", input: { command: "mkdir out" }, output: "" })]),
            user("now read c"),
            assistant([tool({ tool: "read", callID: "r3", input: { filePath: file("c") }, output: lines(80, "c") })]),
            user("and what now?")
          ]
          yield* transformOf(fresh(turns))
          const status = yield* okStatus(root)
          assert.deepStrictEqual(status.folded && [status.folded.turns, status.folded.calls], [1, 3])
          assert.deepStrictEqual(status.recent.map(({ folded, id, reason }) => [id, reason, folded]), [
            [3, "fold", true],
            [2, "staleOutputs", true],
            [1, "staleOutputs", true]
          ])
          assert.strictEqual(status.pruned.calls, 3)
          assert.strictEqual(status.recent.reduce((sum, call) => sum + call.tokens, 0), status.pruned.tokens)
        }),
      `{ "cache": { "mode": "immediate" }, "strategies": { "staleOutputs": { "trigger": 0, "keepRecent": 1, "keepFiles": 0, "clearAtLeast": 0 } } }`
    ))
})
