import { assert, describe, it } from "@effect/vitest"
import { Effect, FileSystem, Option } from "effect"
import { TestClock } from "effect/testing"
import { fromFile, type SessionState, setFold, stableId, takeChange, toFile } from "../../src/engine/session.ts"
import { Persistence } from "../../src/services/Persistence.ts"
import type { SessionFile } from "../../src/state/schema.ts"
import { listTree, onDisk, sampleSession, withCapturedLogs } from "./support.ts"

const sessionID = "ses_4f1c2b3a9ffeXYZabc123"
const journal = `${sessionID}.journal`

/** The state `file` holds, changed by `edit`: what it is then, and the change a write after `file` appends. */
const changed = (file: SessionFile, edit: (state: SessionState) => void) => {
  const state = fromFile(file, false)
  edit(state)
  return { change: takeChange(state), after: toFile(state) }
}

const newCall = (callID: string) => (state: SessionState) => {
  stableId(state, callID)
  state.pruned.set(callID, { reason: "deduplication", tokens: 10, at: 5 })
}

/** The sample session saved and one change appended to its journal, at a time that names what is moved aside. */
const savedWithOneChange = Effect.gen(function*() {
  const persistence = yield* Persistence
  yield* TestClock.setTime(Date.UTC(2025, 0, 31, 12, 30, 45, 678))
  const generation = yield* persistence.save(sampleSession(sessionID))
  const first = changed(sampleSession(sessionID), newCall("call_d"))
  yield* persistence.append(sessionID, generation, first.change)
  return { generation, first }
})

describe("Persistence.layer: a session's journal", () => {
  it.effect("a change appended after a save is in what the next load returns", () =>
    onDisk(() =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        const generation = yield* persistence.save(sampleSession(sessionID))
        const { after, change } = changed(sampleSession(sessionID), (state) => {
          newCall("call_d")(state)
          state.pruned.delete("call_a")
          state.restored.delete("call_c")
          state.restored.add("call_a")
          state.reReads.delete("call_c")
          setFold(state, "msg_u1", undefined)
          state.findings.push({ id: 4, tool: "grep", text: "two callers" })
          state.summaryId = undefined
          state.stats = { ...state.stats, calls: 3 }
        })
        yield* persistence.append(sessionID, generation, change)
        assert.deepStrictEqual(yield* persistence.load(sessionID), Option.some(after))
      })
    ))

  it.effect("changes are replayed in the order appended", () =>
    onDisk(() =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        const generation = yield* persistence.save(sampleSession(sessionID))
        const first = changed(sampleSession(sessionID), newCall("call_d"))
        const second = changed(first.after, (state) => state.pruned.delete("call_d"))
        yield* persistence.append(sessionID, generation, first.change)
        yield* persistence.append(sessionID, generation, second.change)
        assert.deepStrictEqual(yield* persistence.load(sessionID), Option.some(second.after))
      })
    ))

  it.effect("a save writes the whole state and removes the journal", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        const generation = yield* persistence.save(sampleSession(sessionID))
        const { after, change } = changed(sampleSession(sessionID), newCall("call_d"))
        yield* persistence.append(sessionID, generation, change)
        yield* persistence.save(after)
        assert.deepStrictEqual(yield* listTree(stateDir), [`${sessionID}.json`])
        assert.deepStrictEqual(yield* persistence.load(sessionID), Option.some(after))
      })
    ))

  it.effect("lines written before the latest save (its journal not removed: a crash) are not replayed", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        const fs = yield* FileSystem.FileSystem
        const older = yield* persistence.save(sampleSession(sessionID))
        const { change } = changed(sampleSession(sessionID), newCall("call_d"))
        yield* persistence.append(sessionID, older, change)
        const lines = yield* fs.readFileString(`${stateDir}/${journal}`)
        yield* persistence.save(sampleSession(sessionID))
        yield* fs.writeFileString(`${stateDir}/${journal}`, lines)
        assert.deepStrictEqual(yield* persistence.load(sessionID), Option.some(sampleSession(sessionID)))
      })
    ))

  it.effect("a last line cut short is not replayed, and the changes before it are", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        const fs = yield* FileSystem.FileSystem
        const generation = yield* persistence.save(sampleSession(sessionID))
        const first = changed(sampleSession(sessionID), newCall("call_d"))
        const second = changed(first.after, newCall("call_e"))
        yield* persistence.append(sessionID, generation, first.change)
        yield* persistence.append(sessionID, generation, second.change)
        const text = yield* fs.readFileString(`${stateDir}/${journal}`)
        yield* fs.writeFileString(`${stateDir}/${journal}`, text.slice(0, text.length - 20))
        const { logs, result } = yield* withCapturedLogs(persistence.load(sessionID))
        assert.deepStrictEqual(result, Option.some(first.after))
        assert.deepStrictEqual(logs.map((line) => line.level), ["Info"])
      })
    ))

  it.effect("a line that is not a change is moved aside with its journal, and the changes before it are kept", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        const fs = yield* FileSystem.FileSystem
        const { first, generation } = yield* savedWithOneChange
        const second = changed(first.after, newCall("call_e"))
        const bad = `{"generation":"${generation}","change":{"nextId":"five"}}\n`
        yield* fs.writeFileString(`${stateDir}/${journal}`, bad, { flag: "a" })
        yield* persistence.append(sessionID, generation, second.change)
        const text = yield* fs.readFileString(`${stateDir}/${journal}`)

        const { logs, result } = yield* withCapturedLogs(persistence.load(sessionID))

        assert.deepStrictEqual(result, Option.some(first.after))
        const aside = `${journal}.corrupt-2025-01-31T12-30-45-678Z`
        assert.deepStrictEqual(yield* listTree(stateDir), [aside, `${sessionID}.json`])
        assert.strictEqual(yield* fs.readFileString(`${stateDir}/${aside}`), text)
        assert.strictEqual(logs.length, 1)
        assert.strictEqual(logs[0]!.level, "Warn")
        assert.include(logs[0]!.message, "line 2")
        assert.include(logs[0]!.message, aside)
      })
    ))

  it.effect("a journal whose session file is invalid is moved aside with it", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        const fs = yield* FileSystem.FileSystem
        yield* savedWithOneChange
        yield* fs.writeFileString(`${stateDir}/${sessionID}.json`, "{ not json")
        const { result } = yield* withCapturedLogs(persistence.load(sessionID))
        assert.deepStrictEqual(result, Option.none())
        assert.deepStrictEqual(yield* listTree(stateDir), [
          `${sessionID}.journal.corrupt-2025-01-31T12-30-45-678Z`,
          `${sessionID}.json.corrupt-2025-01-31T12-30-45-678Z`
        ])
      })
    ))

  it.effect("a journal without a session file is moved aside, and the session loads as None", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        const fs = yield* FileSystem.FileSystem
        yield* savedWithOneChange
        yield* fs.remove(`${stateDir}/${sessionID}.json`)
        const { logs, result } = yield* withCapturedLogs(persistence.load(sessionID))
        assert.deepStrictEqual(result, Option.none())
        assert.deepStrictEqual(yield* listTree(stateDir), [`${journal}.corrupt-2025-01-31T12-30-45-678Z`])
        assert.match(logs[0]!.message, /no session file/)
      })
    ))

  it.effect("removing the session removes its journal", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        yield* savedWithOneChange
        yield* persistence.remove(sessionID)
        assert.deepStrictEqual(yield* listTree(stateDir), [])
      })
    ))

  it.effect("a session file written before journals (no generation) loads as it is", () =>
    onDisk(({ stateDir }) =>
      Effect.gen(function*() {
        const persistence = yield* Persistence
        const fs = yield* FileSystem.FileSystem
        yield* fs.makeDirectory(stateDir, { recursive: true })
        yield* fs.writeFileString(`${stateDir}/${sessionID}.json`, JSON.stringify(sampleSession(sessionID)))
        assert.deepStrictEqual(yield* persistence.load(sessionID), Option.some(sampleSession(sessionID)))
      })
    ))
})
