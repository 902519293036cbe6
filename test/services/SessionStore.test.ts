import { assert, describe, it } from "@effect/vitest"
import { NodeFileSystem } from "@effect/platform-node"
import { Effect, Exit, FileSystem, Layer, Option, Ref, Scope } from "effect"
import { systemError } from "effect/PlatformError"
import fc from "fast-check"
import { changed, type SessionState, setFold, stableId, toFile } from "../../src/engine/session.ts"
import { HostRecorder } from "../../src/services/Host.ts"
import { Persistence } from "../../src/services/Persistence.ts"
import { SessionStore } from "../../src/services/SessionStore.ts"
import { emptySessionFile, type SessionFile } from "../../src/state/schema.ts"
import { listTree, persistenceUnder } from "../persistence/support.ts"
import { pluginUnder, platform, tempDir } from "../support/layers.ts"
import { pluginTest } from "../support/pluginTest.ts"

const assignIds = (sessionID: string, ...callIDs: Array<string>) =>
  Effect.gen(function*() {
    const store = yield* SessionStore
    return yield* store.use(sessionID, (state) => Effect.sync(() => callIDs.map((callID) => stableId(state, callID))))
  })

describe("SessionStore", () => {
  it.effect("keeps one state per session", () =>
    pluginTest(Effect.gen(function*() {
      assert.deepStrictEqual(yield* assignIds("ses_a", "c1", "c2"), [1, 2])
      assert.deepStrictEqual(yield* assignIds("ses_b", "c9"), [1])
      assert.deepStrictEqual(yield* assignIds("ses_a", "c3", "c1"), [3, 1])
    })))

  it.effect("a session seen again after a restart is reloaded from disk, with its IDs", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* assignIds("ses_a", "c1", "c2").pipe(Effect.provide(pluginUnder(root)))
      assert.deepStrictEqual(yield* assignIds("ses_a", "c2", "c3").pipe(Effect.provide(pluginUnder(root))), [2, 3])
    }))

  it.effect("changes are written behind the request, and flush writes them now", () =>
    pluginTest(Effect.gen(function*() {
      yield* assignIds("ses_a", "c1")
      yield* (yield* SessionStore).flush
      const stored = yield* (yield* Persistence).load("ses_a")
      assert.deepStrictEqual(Option.map(stored, (file) => file.ids), Option.some({ c1: 1 }))
    })))

  it.effect("asks the host whether a session is a sub-agent once per session", () =>
    pluginTest(
      Effect.gen(function*() {
        const store = yield* SessionStore
        const subAgent = yield* store.use("ses_child", (state) => Effect.succeed(state.isSubAgent))
        const main = yield* store.use("ses_main", (state) => Effect.succeed(state.isSubAgent))
        yield* store.use("ses_child", () => Effect.void)
        yield* store.use("ses_main", () => Effect.void)
        assert.isTrue(subAgent)
        assert.isFalse(main)
        assert.strictEqual(yield* Ref.get((yield* HostRecorder).sessionLookups), 2)
      }),
      { host: { sessions: { ses_child: { parentID: "ses_main" } } } }
    ))

  it.effect("when the host cannot be asked, the session is not used and is asked again next time", () =>
    pluginTest(
      Effect.gen(function*() {
        const store = yield* SessionStore
        const first = yield* Effect.exit(store.use("ses_a", () => Effect.void))
        const second = yield* Effect.exit(store.use("ses_a", () => Effect.void))
        assert.isTrue(Exit.isFailure(first))
        assert.isTrue(Exit.isFailure(second))
        assert.strictEqual(yield* Ref.get((yield* HostRecorder).sessionLookups), 2)
      }),
      { host: { failing: true } }
    ))

  it.effect("rejects a session ID that could escape the state directory", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const exit = yield* Effect.exit(assignIds("../../etc/x", "c1").pipe(Effect.provide(pluginUnder(root))))
      assert.isTrue(Exit.isFailure(exit))
      const fs = yield* FileSystem.FileSystem
      assert.isFalse(yield* fs.exists(`${root}/etc`))
    }).pipe(Effect.provide(platform)))

  it.effect("forgetting a deleted session removes its file", () =>
    pluginTest(Effect.gen(function*() {
      const store = yield* SessionStore
      yield* assignIds("ses_a", "c1")
      yield* store.flush
      yield* store.forget("ses_a")
      assert.isTrue(Option.isNone(yield* (yield* Persistence).load("ses_a")))
      assert.deepStrictEqual(yield* assignIds("ses_a", "c5"), [1])
    })))

  it.effect("more sessions than it keeps in memory still keep their state", () =>
    pluginTest(Effect.gen(function*() {
      for (let i = 0; i < 50; i++) yield* assignIds(`ses_${i}`, "c1", `c${i + 2}`)
      yield* (yield* SessionStore).flush
      assert.deepStrictEqual(yield* assignIds("ses_0", "c2", "c100"), [2, 3])
    })))
})

/** A change the request path, the model's tools or the user's commands make to a session's persisted state. */
type Edit =
  | { readonly kind: "call"; readonly call: number }
  | { readonly kind: "prune"; readonly call: number; readonly tokens: number }
  | { readonly kind: "unprune"; readonly call: number }
  | { readonly kind: "fold"; readonly turn: number; readonly calls: ReadonlyArray<number> }
  | { readonly kind: "unfold"; readonly turn: number }
  | { readonly kind: "reRead"; readonly call: number; readonly tokens: number }
  | { readonly kind: "restore"; readonly call: number }
  | { readonly kind: "unrestore"; readonly call: number }
  | { readonly kind: "finding"; readonly text: string }
  | { readonly kind: "findingsHandedOver" }
  | { readonly kind: "stats"; readonly calls: number }
  | { readonly kind: "summary"; readonly id: string | undefined }
  | { readonly kind: "sentLeft"; readonly tokens: number | undefined }
  | { readonly kind: "model"; readonly modelID: string }
  | { readonly kind: "callGone"; readonly call: number }

const callIndex = fc.integer({ min: 0, max: 9 })
const edit: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ kind: fc.constant("call" as const), call: callIndex }),
  fc.record({ kind: fc.constant("prune" as const), call: callIndex, tokens: fc.nat(5000) }),
  fc.record({ kind: fc.constant("unprune" as const), call: callIndex }),
  fc.record({
    kind: fc.constant("fold" as const),
    turn: fc.integer({ min: 0, max: 3 }),
    calls: fc.array(callIndex, { maxLength: 3 })
  }),
  fc.record({ kind: fc.constant("unfold" as const), turn: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ kind: fc.constant("reRead" as const), call: callIndex, tokens: fc.nat(5000) }),
  fc.record({ kind: fc.constant("restore" as const), call: callIndex }),
  fc.record({ kind: fc.constant("unrestore" as const), call: callIndex }),
  fc.record({ kind: fc.constant("finding" as const), text: fc.string({ maxLength: 8 }) }),
  fc.record({ kind: fc.constant("findingsHandedOver" as const) }),
  fc.record({ kind: fc.constant("stats" as const), calls: fc.nat(100) }),
  fc.record({
    kind: fc.constant("summary" as const),
    id: fc.option(fc.constantFrom("msg_s1", "msg_s2"), { nil: undefined })
  }),
  fc.record({ kind: fc.constant("sentLeft" as const), tokens: fc.option(fc.nat(9000), { nil: undefined }) }),
  fc.record({ kind: fc.constant("model" as const), modelID: fc.constantFrom("m1", "m2") }),
  fc.record({ kind: fc.constant("callGone" as const), call: callIndex })
)

const makeEdit = (state: SessionState, change: Edit): void => {
  const callID = (i: number) => `call_${i}`
  switch (change.kind) {
    case "call":
      stableId(state, callID(change.call))
      break
    case "prune":
      state.pruned.set(callID(change.call), { reason: "deduplication", tokens: change.tokens, at: 1 })
      break
    case "unprune":
      state.pruned.delete(callID(change.call))
      break
    case "fold":
      setFold(state, `msg_${change.turn}`, { calls: change.calls.map(callID), tokens: 7, at: 2 })
      break
    case "unfold":
      setFold(state, `msg_${change.turn}`, undefined)
      break
    case "reRead":
      state.reReads.set(callID(change.call), change.tokens)
      break
    case "restore":
      state.restored.add(callID(change.call))
      break
    case "unrestore":
      state.restored.delete(callID(change.call))
      break
    case "finding":
      state.findings.push({ id: state.findings.length, tool: "read", text: change.text })
      break
    case "findingsHandedOver":
      state.findings = []
      break
    case "stats":
      state.stats = { ...state.stats, calls: change.calls }
      break
    case "summary":
      state.summaryId = change.id
      break
    case "sentLeft":
      state.sentLeft = change.tokens
      break
    case "model":
      state.model = { providerID: "p", modelID: change.modelID, npm: undefined, contextLimit: 1000, outputLimit: 10 }
      break
    case "callGone":
      state.ids.delete(callID(change.call))
      state.pruned.delete(callID(change.call))
      state.restored.delete(callID(change.call))
      state.reReads.delete(callID(change.call))
      break
  }
  changed(state)
}

/** A file as JSON keeps it (no key set to undefined), its restored calls as the set they are. */
const comparable = (file: SessionFile): unknown => ({
  ...JSON.parse(JSON.stringify(file)),
  restored: [...file.restored].sort()
})

type Step = { readonly edits: ReadonlyArray<Edit> } | "write" | "disk fails" | "disk back" | "restart"

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ edits: fc.array(edit, { minLength: 1, maxLength: 6 }) }) },
  { weight: 4, arbitrary: fc.constant("write" as const) },
  { weight: 2, arbitrary: fc.constant("disk fails" as const) },
  { weight: 2, arbitrary: fc.constant("disk back" as const) },
  { weight: 1, arbitrary: fc.constant("restart" as const) }
)

/**
 * The real file system, except that while `faults.failing` an atomic write fails and an append writes half its line
 * and then fails, as a full disk or a crash would.
 */
const faultyDisk = (faults: { failing: boolean }) =>
  Layer.effect(
    FileSystem.FileSystem,
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const refuse = (method: string, path: string) =>
        Effect.fail(systemError({ _tag: "Unknown", module: "FileSystem", method, pathOrDescriptor: path }))
      return {
        ...fs,
        open: (path: string, options?: Parameters<FileSystem.FileSystem["open"]>[1]) =>
          !faults.failing
            ? fs.open(path, options)
            : options?.flag === "a"
            ? fs.open(path, options).pipe(Effect.map((file) =>
              Object.assign(Object.create(file) as FileSystem.File, {
                writeAll: (bytes: Uint8Array) =>
                  file.writeAll(bytes.subarray(0, bytes.length >> 1)).pipe(Effect.andThen(refuse("writeAll", path)))
              })
            ))
            : refuse("open", path),
        rename: (from: string, to: string) => faults.failing ? refuse("rename", from) : fs.rename(from, to)
      }
    })
  ).pipe(Layer.provide(NodeFileSystem.layer))

describe("SessionStore: what is written", () => {
  it.effect("after its first write, a session's change is appended to its journal, and its file is left as it was", () =>
    pluginTest((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const file = `${root}/data/opencode/storage/plugin/dcp/ses_a.json`
        yield* assignIds("ses_a", "c1", "c2")
        yield* (yield* SessionStore).flush
        const whole = yield* fs.readFileString(file)
        yield* assignIds("ses_a", "c3")
        yield* (yield* SessionStore).flush
        assert.strictEqual(yield* fs.readFileString(file), whole)
        const journal = yield* fs.readFileString(`${root}/data/opencode/storage/plugin/dcp/ses_a.journal`)
        assert.deepStrictEqual(journal.split("\n").map((line) => line === "" ? {} : JSON.parse(line).change.ids), [
          { c3: 3 },
          {}
        ])
      }).pipe(Effect.provide(platform))
    ))

  it.effect("once its journal holds as many entries as the session, the session is written whole again", () =>
    pluginTest((root) =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const journal = `${root}/data/opencode/storage/plugin/dcp/ses_a.journal`
        const sizes: Array<number> = []
        for (let i = 0; i < 60; i++) {
          yield* assignIds("ses_a", ...Array.from({ length: 10 }, (_, j) => `c${i * 10 + j}`))
          yield* (yield* SessionStore).flush
          sizes.push(Option.getOrElse(
            Option.map(yield* fs.stat(journal).pipe(Effect.option), (info) => Number(info.size)),
            () => 0
          ))
        }
        const restarts = sizes.flatMap((size, i) => i > 0 && size < sizes[i - 1]! ? [i] : [])
        // Each change is 18 entries (10 IDs, the scalars as 8): past the journal's floor of 256 at the 15th change
        // after the first write; then past the session's own entries (160 + 10 a change) at the 21st after that.
        assert.deepStrictEqual(restarts, [15, 36])
        assert.deepStrictEqual(
          Option.map(yield* (yield* Persistence).load("ses_a"), (file) => Object.keys(file.ids).length),
          Option.some(600)
        )
      }).pipe(Effect.provide(platform))
    ))

  it.effect(
    "a restarted plugin loads the state as last written, through appended changes, whole writes and failed, half-written appends",
    () =>
      Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 40 }), (steps) =>
            Effect.runPromise(Effect.scoped(
              Effect.gen(function*() {
                const root = yield* tempDir
                const faults = { failing: false }
                const persistence = Persistence.layer.pipe(Layer.provide(faultyDisk(faults)))
                const sessionID = "ses_written00000000000000001"
                const start = Effect.gen(function*() {
                  const scope = yield* Scope.make()
                  return { scope, plugin: yield* Layer.buildWithScope(pluginUnder(root, { persistence }), scope) }
                })
                let running = yield* start
                const onPlugin = <A, E>(f: (store: SessionStore["Service"]) => Effect.Effect<A, E>) =>
                  Effect.suspend(() => SessionStore.use(f).pipe(Effect.provide(running.plugin)))
                // What the session holds in memory, as its file (`use` would mark a changed state's time once more).
                const heldNow = onPlugin((store) =>
                  Effect.gen(function*() {
                    yield* store.use(sessionID, () => Effect.void)
                    let file: SessionFile | undefined
                    yield* store.ifLoaded(sessionID, (state) => void (file = toFile(state)))
                    return file!
                  })
                )
                // No file is the state a session starts from.
                const stored = Persistence.use((disk) => disk.load(sessionID)).pipe(
                  Effect.map((file) => comparable(Option.getOrElse(file, () => emptySessionFile(sessionID, 0)))),
                  Effect.provide(persistenceUnder(root))
                )
                let held = yield* heldNow
                for (const next of steps) {
                  if (next === "disk fails" || next === "disk back") {
                    faults.failing = next === "disk fails"
                  } else if (next === "restart") {
                    faults.failing = false
                    yield* Scope.close(running.scope, Exit.void)
                    running = yield* start
                    assert.deepStrictEqual(comparable(yield* heldNow), comparable(held))
                  } else if (next === "write") {
                    yield* onPlugin((store) => store.flush)
                    if (!faults.failing) assert.deepStrictEqual(yield* stored, comparable(held))
                  } else {
                    yield* onPlugin((store) =>
                      store.use(sessionID, (state) =>
                        Effect.sync(() => {
                          for (const e of next.edits) makeEdit(state, e)
                        }))
                    )
                    held = yield* heldNow
                  }
                }
                faults.failing = false
                yield* onPlugin((store) => store.flush)
                assert.deepStrictEqual(yield* stored, comparable(held))
                const stateDir = `${root}/data/opencode/storage/plugin/dcp`
                assert.deepStrictEqual((yield* listTree(stateDir)).filter((name) => name.includes("corrupt")), [])
                yield* Scope.close(running.scope, Exit.void)
              }).pipe(Effect.provide(platform))
            ))),
          { numRuns: 60 }
        )
      )
  )
})
