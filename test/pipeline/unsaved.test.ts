import { assert, describe, it } from "@effect/vitest"
import { Effect, FileSystem, Ref } from "effect"
import { dcp } from "../../src/hooks/command.ts"
import { discard, extract } from "../../src/hooks/tools.ts"
import { HostRecorder } from "../../src/services/Host.ts"
import { Paths } from "../../src/services/Paths.ts"
import { SessionStore } from "../../src/services/SessionStore.ts"
import { Status } from "../../src/services/Status.ts"
import { assistant, fresh, lines, type Msg, sessionID, tool, toolPart, user } from "../support/history.ts"
import { platform } from "../support/layers.ts"
import { pipelineTest, send } from "./helpers.ts"

/**
 * A discard, extract, restore or sweep the plugin cannot write to its state folder still applies for the rest of the
 * process, and says so: in the answer the model or the user gets, and once in a toast naming the folder. The folder is
 * made unwritable by putting a file in its place (the tests may run as root, whom permissions do not stop).
 */
const history: Array<Msg> = [
  user("explore"),
  assistant([
    tool({ tool: "read", callID: "c1", input: { filePath: "src/a.ts" }, output: lines(150, "a") }),
    tool({ tool: "grep", callID: "c2", input: { pattern: "TODO" }, output: lines(150, "grep") })
  ])
]

/**
 * Replaces the state folder by a file, once what was written behind is on disk (the status folder is inside it: a
 * status written after the folder went would make it again); returns the folder.
 */
const stateFolderUnwritable = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const { stateDir } = yield* Paths
  yield* (yield* SessionStore).flush
  yield* (yield* Status).flush
  yield* fs.remove(stateDir, { recursive: true })
  yield* fs.writeFileString(stateDir, "a file where the plugin's state folder was")
  return stateDir
}).pipe(Effect.provide(platform))

const toasts = Effect.gen(function*() {
  const recorder = yield* HostRecorder
  return yield* Ref.get(recorder.toasts)
})

const unsavedTest = <A, E, R>(body: (folder: string) => Effect.Effect<A, E, R>) =>
  pipelineTest(Effect.gen(function*() {
    yield* send(fresh(history))
    return yield* body(yield* stateFolderUnwritable)
  }))

describe("a prune or restore the state folder cannot take", () => {
  it.effect("a discard says in its answer that it was not saved, naming the state folder", () =>
    unsavedTest((folder) =>
      Effect.gen(function*() {
        const answer = yield* discard(sessionID, ["noise", "1"])
        assert.match(answer, /^Discarded 1 output/)
        assert.include(answer, `Not saved: the context pruning plugin cannot write its state folder ${folder} (`)
        assert.include(answer, "This holds until OpenCode restarts, and is undone then.")
      })
    ))

  it.effect("an extract says so too", () =>
    unsavedTest((folder) =>
      Effect.gen(function*() {
        const answer = yield* extract(sessionID, ["2"], ["two TODOs, both in a.ts"])
        assert.include(answer, `Not saved: the context pruning plugin cannot write its state folder ${folder} (`)
      })
    ))

  it.effect("the user is told once, in a toast naming the folder, however many prunes follow", () =>
    unsavedTest((folder) =>
      Effect.gen(function*() {
        yield* discard(sessionID, ["noise", "1"])
        yield* discard(sessionID, ["noise", "2"])
        const shown = (yield* toasts).filter((toast) => toast.title === "DCP: session state not saved")
        assert.lengthOf(shown, 1)
        assert.include(shown[0]!.message, folder)
      })
    ))

  it.effect("what was not saved still applies for the rest of the process", () =>
    unsavedTest(() =>
      Effect.gen(function*() {
        yield* discard(sessionID, ["noise", "1"])
        const next = yield* send(fresh(history))
        assert.match(toolPart(next, "c1").state.output, /^\[pruned; (?:id|recall) 1\]$/)
      })
    ))

  it.effect("/dcp restore says in its reply that it was not saved", () =>
    pipelineTest(Effect.gen(function*() {
      yield* send(fresh(history))
      yield* discard(sessionID, ["noise", "1"])
      const folder = yield* stateFolderUnwritable
      const { reply } = yield* dcp(sessionID, "restore 1")
      assert.match(reply, /^Restored id 1:/)
      assert.include(reply, `Not saved: the context pruning plugin cannot write its state folder ${folder} (`)
    })))

  it.effect("/dcp sweep says so too", () =>
    unsavedTest((folder) =>
      Effect.gen(function*() {
        const { reply } = yield* dcp(sessionID, "sweep")
        assert.match(reply, /^Swept 2 calls/)
        assert.include(reply, `Not saved: the context pruning plugin cannot write its state folder ${folder} (`)
      })
    ))

  it.effect("a discard whose state is written says nothing of it", () =>
    pipelineTest(Effect.gen(function*() {
      yield* send(fresh(history))
      assert.notInclude(yield* discard(sessionID, ["noise", "1"]), "Not saved")
      assert.lengthOf(yield* toasts, 0)
    })))
})
