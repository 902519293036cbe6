import { assert, describe, it } from "@effect/vitest"
import { Effect, FileSystem, Ref } from "effect"
import { dcp } from "../../src/hooks/command.ts"
import { system } from "../../src/hooks/system.ts"
import { SessionId } from "../../src/host/sessionId.ts"
import { layoutNote } from "../../src/engine/notes.ts"
import { formatTokens } from "../../src/engine/placeholders.ts"
import { transformOf } from "../support/request.ts"
import { HostRecorder, type HostFixture } from "../../src/services/Host.ts"
import { SessionStore } from "../../src/services/SessionStore.ts"
import { assistant, fresh, lines, type Msg, sessionID, tool, toolPart, user } from "../support/history.ts"
import { pluginUnder, platform, tempDir } from "../support/layers.ts"
import { pluginTest } from "../support/pluginTest.ts"

const project = (root: string) => `${root}/project`

/** A run: the user asks, the model reads two files, then (after a second user message) runs a command and a todo. */
const history = (root: string): Array<Msg> => [
  user("look at the code"),
  assistant([
    tool({ tool: "read", callID: "c1", input: { filePath: `${project(root)}/a.ts` }, output: lines(80, "a") })
  ]),
  assistant([
    tool({ tool: "read", callID: "c2", input: { filePath: `${project(root)}/b.ts` }, output: lines(80, "b") })
  ]),
  user("now test it"),
  assistant([tool({ tool: "bash", callID: "c3", input: { command: "npm test" }, output: lines(60, "test") })]),
  assistant([tool({ tool: "todowrite", callID: "c4", input: { todos: [] }, output: lines(20, "todo") })])
]

const lastNote = Effect.gen(function*() {
  const notes = yield* Ref.get((yield* HostRecorder).notes)
  return notes.at(-1)?.text ?? ""
})

const withConfig = (root: string, config: object) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    yield* fs.makeDirectory(`${root}/config/opencode`, { recursive: true })
    yield* fs.writeFileString(`${root}/config/opencode/dcp.jsonc`, JSON.stringify(config))
  }).pipe(Effect.provide(platform))

/** The plugin under a fresh root, with the history already sent once (so the plugin has seen its tool calls). */
const scenario = <A, E, R>(
  body: (root: string, messages: Array<Msg>) => Effect.Effect<A, E, R>,
  options: { config?: object; host?: (root: string) => HostFixture } = {}
) =>
  Effect.gen(function*() {
    const root = yield* tempDir
    if (options.config !== undefined) yield* withConfig(root, options.config)
    const messages = history(root)
    const host = options.host?.(root) ?? { messages: { [sessionID]: messages } }
    return yield* Effect.gen(function*() {
      yield* transformOf(fresh(messages))
      return yield* body(root, messages)
    }).pipe(Effect.provide(pluginUnder(root, { host })))
  })

const outputOf = (messages: Array<Msg>, callID: string) =>
  Effect.gen(function*() {
    const sent = fresh(messages)
    yield* transformOf(sent)
    return String(toolPart(sent, callID).state.output)
  })

describe("/dcp commands", () => {
  it.effect("an unknown subcommand is refused in one line that names the valid ones, not with the whole help", () =>
    scenario(() =>
      Effect.gen(function*() {
        const { refused } = yield* dcp(sessionID, "frobnicate")
        assert.isTrue(refused)
        assert.strictEqual(
          yield* lastNote,
          layoutNote(`Unknown subcommand "frobnicate": /dcp takes context, stats, sweep [n], restore <id|all> or help.`)
        )
      })
    ))

  it.effect("help is not a refusal", () =>
    scenario(() =>
      Effect.gen(function*() {
        assert.isFalse((yield* dcp(sessionID, "")).refused)
        assert.isFalse((yield* dcp(sessionID, "help")).refused)
      })
    ))

  it.effect("a restore argument that is not an id names the ids pruned now, as the notes show them", () =>
    scenario(() =>
      Effect.gen(function*() {
        yield* dcp(sessionID, "sweep 3")
        const { refused } = yield* dcp(sessionID, "restore abc")
        assert.isTrue(refused)
        assert.strictEqual(
          (yield* lastNote).replace(/\s+/g, " "),
          `DCP · "abc" is not an id: /dcp restore takes an id or "all". Pruned now: 1-3 (the number before each call in the pruning notes).`
        )
      })
    ))

  it.effect("sweep prunes every call since the user's last message, except protected tools", () =>
    scenario((_root, messages) =>
      Effect.gen(function*() {
        yield* dcp(sessionID, "sweep")
        assert.include(yield* lastNote, "Swept 1 call since your last message")
        assert.match(yield* outputOf(messages, "c3"), /^\[pruned; /)
        assert.include(yield* outputOf(messages, "c1"), "a 1:")
        assert.include(yield* outputOf(messages, "c4"), "todo 1:")
      })
    ))

  it.effect("sweep n prunes the last n prunable calls, and says which calls those are", () =>
    scenario((_root, messages) =>
      Effect.gen(function*() {
        yield* dcp(sessionID, "sweep 2")
        assert.include(
          (yield* lastNote).replace(/\s+/g, " "),
          "Swept 2 calls, the 2 newest not already pruned, protected or empty (2, 3):"
        )
        assert.match(yield* outputOf(messages, "c2"), /^\[pruned; /)
        assert.match(yield* outputOf(messages, "c3"), /^\[pruned; /)
        assert.include(yield* outputOf(messages, "c1"), "a 1:")
      })
    ))

  it.effect("sweep respects commands.protectedTools", () =>
    scenario(() =>
      Effect.gen(function*() {
        yield* dcp(sessionID, "sweep")
        assert.include(yield* lastNote, "Nothing to sweep since your last message")
      }), { config: { commands: { protectedTools: ["bash"] } } }))

  it.effect("sweep with nothing left to sweep says so", () =>
    scenario(() =>
      Effect.gen(function*() {
        yield* dcp(sessionID, "sweep")
        yield* dcp(sessionID, "sweep")
        assert.strictEqual(
          yield* lastNote,
          layoutNote(
            "Nothing to sweep since your last message: every call there is already pruned, protected or empty."
          )
        )
      })
    ))

  it.effect("sweep with a bad n prunes nothing and says what is valid", () =>
    scenario((_root, messages) =>
      Effect.gen(function*() {
        yield* dcp(sessionID, "sweep -2")
        assert.include(yield* lastNote, `"-2" is not a number of calls`)
        assert.include(yield* outputOf(messages, "c3"), "test 1:")
      })
    ))

  it.effect("restore sends a pruned call's content again, and automatic rules leave it alone afterwards", () =>
    scenario((root, messages) =>
      Effect.gen(function*() {
        const twice = [
          ...messages,
          assistant([
            tool({ tool: "read", callID: "c5", input: { filePath: `${project(root)}/a.ts` }, output: lines(80, "a") })
          ])
        ]
        assert.match(yield* outputOf(twice, "c1"), /^\[pruned duplicate/)
        yield* dcp(sessionID, "restore 1")
        assert.include(yield* lastNote, "Restored id 1")
        assert.include(yield* outputOf(twice, "c1"), "a 1:")
        // Repeats off: the re-read c5 would be the placeholder at its first send, and c1 would stay whole.
      }), { config: { cache: { mode: "immediate" }, strategies: { repeats: { enabled: false } } } }))

  it.effect("restore all un-prunes every pruned call", () =>
    scenario((_root, messages) =>
      Effect.gen(function*() {
        yield* dcp(sessionID, "sweep 3")
        yield* dcp(sessionID, "restore all")
        assert.include(yield* lastNote, "Restored all 3 pruned calls")
        for (const callID of ["c1", "c2", "c3"]) assert.notMatch(yield* outputOf(messages, callID), /^\[pruned/)
      })
    ))

  it.effect("restore of an unknown or unpruned id lists the pruned ids", () =>
    scenario(() =>
      Effect.gen(function*() {
        yield* dcp(sessionID, "restore 1")
        assert.include(yield* lastNote, "Nothing to restore: no call is pruned in this session.")
        yield* dcp(sessionID, "sweep 1")
        yield* dcp(sessionID, "restore 99")
        assert.include(
          (yield* lastNote).replace(/\s+/g, " "),
          "There is no call with id 99 in this session. Pruned now: 3 (the number before each call in the pruning notes)."
        )
        yield* dcp(sessionID, "restore 1")
        assert.include((yield* lastNote).replace(/\s+/g, " "), "id 1 is not pruned. Pruned now: 3 (")
      })
    ))

  it.effect("context shows the next request's and the without-pruning totals, which differ by exactly the pruned tokens", () =>
    scenario(() =>
      Effect.gen(function*() {
        // OpenCode hands the plugin the system prompt after the request path: only then is the estimate whole.
        yield* system(SessionId.make(sessionID), ["You are a coding agent."], { providerID: "fake", id: "fake-model" })
        yield* dcp(sessionID, "sweep")
        const pruned = yield* (yield* SessionStore).use(sessionID, (state) =>
          Effect.succeed([...state.pruned.values()].reduce((sum, record) => sum + record.tokens, 0)))
        yield* dcp(sessionID, "context")
        const note = yield* lastNote
        const number = (label: string) => {
          const match = new RegExp(`${label}:\\s+~([\\d.]+)(k?)`).exec(note)
          return Number(match![1]) * (match![2] === "k" ? 1000 : 1)
        }
        assert.include(note, "Tools (4)")
        assert.include(note, "Pruned:   1 call")
        assert.isAbove(pruned, 300)
        assert.approximately(number("Without pruning") - number("Next request"), pruned, 60)
      })
    ))

  it.effect("context in a new process takes OpenCode's figure for the latest request and reply when no prune waits", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const messages = history(root)
      const latest = messages[messages.length - 1]!.info as Record<string, unknown>
      latest.tokens = { input: 9_000, output: 10, reasoning: 0, cache: { read: 3_000, write: 0 } }
      const host = { messages: { [sessionID]: messages } }
      yield* transformOf(fresh(messages)).pipe(Effect.provide(pluginUnder(root, { host })))
      const note = yield* Effect.gen(function*() {
        yield* dcp(sessionID, "context")
        return yield* lastNote
      }).pipe(Effect.provide(pluginUnder(root, { host })))
      assert.include(note.replace(/\s+/g, " "), "Context: 12,010 tokens (reported by the provider).")
      assert.include(note, "System        not known until this process sends a request")
    }))

  it.effect("context says which prunes go out with the next request", () =>
    scenario(() =>
      Effect.gen(function*() {
        yield* dcp(sessionID, "sweep")
        const pruned = yield* (yield* SessionStore).use(
          sessionID,
          (state) => Effect.succeed(state.pruned.get("c3")!.tokens)
        )
        yield* dcp(sessionID, "context")
        assert.include(
          (yield* lastNote).replace(/\s+/g, " "),
          `Of those, 1 call (${formatTokens(pruned)} tokens) goes out with the next request for the first time.`
        )
      })
    ))

  it.effect("stats shows this session's prunes and the lifetime totals once a request carried them", () =>
    scenario((_root, messages) =>
      Effect.gen(function*() {
        yield* dcp(sessionID, "sweep")
        yield* transformOf(fresh(messages))
        yield* dcp(sessionID, "stats")
        const note = yield* lastNote
        assert.include(note, "This session: 1 call pruned")
        assert.include(note, "by strategy: swept 1")
        assert.include(note, "by tool:     bash 1")
        assert.include(note, "All sessions: 1 call pruned")
      })
    ))

  it.effect("stats counts a sweep at once, as pruned now and going out with the next request", () =>
    scenario(() =>
      Effect.gen(function*() {
        yield* dcp(sessionID, "sweep")
        const pruned = yield* (yield* SessionStore).use(sessionID, (state) =>
          Effect.succeed(state.pruned.get("c3")!.tokens))
        yield* dcp(sessionID, "stats")
        const note = (yield* lastNote).replace(/\s+/g, " ")
        assert.include(note, `This session: 1 call pruned now, ${formatTokens(pruned)} tokens out of every request.`)
        assert.include(
          note,
          `Of those, 1 call (${formatTokens(pruned)} tokens) goes out with the next request for the first time.`
        )
        assert.include(note, "All sessions: 0 calls pruned")
      })
    ))

  it.effect("in a sub-agent session, commands change nothing and say why", () =>
    scenario((_root, messages) =>
      Effect.gen(function*() {
        yield* dcp(sessionID, "sweep")
        assert.include(yield* lastNote, "This is a sub-agent session")
        assert.include(yield* outputOf(messages, "c3"), "test 1:")
      }), { host: () => ({ sessions: { [sessionID]: { parentID: "ses_parent" } } }) }))

  it.effect("a command met before any model request shows the config's problems, in a toast and in its note", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* withConfig(root, { strategies: { purgeErrors: { turns: 0 } } })
      yield* Effect.gen(function*() {
        const recorder = yield* HostRecorder
        yield* dcp(sessionID, "sweep")
        const file = `${root}/config/opencode/dcp.jsonc`
        const [note] = yield* Ref.get(recorder.notes)
        // (wrapped where the temporary path is long)
        assert.isTrue(
          note!.text.replace(/\s+/g, " ").startsWith(
            `DCP · 1 config problem in ${file}: • strategies.purgeErrors.turns: expected`
          )
        )
        assert.include(note!.text, "Nothing to sweep")
        assert.deepStrictEqual((yield* Ref.get(recorder.toasts)).map((toast) => toast.title), ["DCP: 1 config problem"])
        yield* dcp(sessionID, "sweep")
        assert.notInclude(yield* lastNote, "config problem")
        assert.strictEqual((yield* Ref.get(recorder.toasts)).length, 1)
      }).pipe(Effect.provide(pluginUnder(root, { host: { messages: { [sessionID]: [] } } })))
    }))

  it.effect("stats and context name the config's problems every time, until the file is fixed", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* withConfig(root, { strategies: { purgeErrors: { turns: 0 } } })
      yield* Effect.gen(function*() {
        const recorder = yield* HostRecorder
        const file = `${root}/config/opencode/dcp.jsonc`
        const problem = `1 config problem in ${file} (shown until fixed): • strategies.purgeErrors.turns: expected`
        for (const command of ["stats", "context", "stats", "context"]) {
          yield* dcp(sessionID, command)
          const note = (yield* lastNote).replace(/\s+/g, " ")
          assert.isTrue(note.startsWith(`DCP · ${problem}`), `/dcp ${command}: ${note}`)
          assert.strictEqual(note.split("config problem").length, 2, `/dcp ${command} names it once`)
        }
        assert.strictEqual((yield* Ref.get(recorder.toasts)).length, 1)
        yield* withConfig(root, { strategies: { purgeErrors: { turns: 12 } } })
        yield* dcp(sessionID, "stats")
        yield* dcp(sessionID, "context")
        assert.notInclude(yield* lastNote, "config problem")
      }).pipe(Effect.provide(pluginUnder(root, { host: { messages: { [sessionID]: [] } } })))
    }))

  it.effect("/dcp context before the first request says there is nothing to show yet", () =>
    pluginTest(
      Effect.gen(function*() {
        yield* dcp(sessionID, "context")
        assert.strictEqual(
          yield* lastNote,
          layoutNote(
            "Nothing to show yet: no message has been sent to the model in this session. After the first one, /dcp context shows where the tokens of each request go."
          )
        )
      }),
      { host: { messages: { [sessionID]: [] } } }
    ))

  it.effect("a session opencode run made for the command alone is deleted once its note is out", () =>
    Effect.gen(function*() {
      const notes = [{
        info: { id: "msg_note", role: "user" },
        parts: [{ type: "text", text: "DCP · ...", ignored: true }]
      }]
      yield* pluginTest(
        Effect.gen(function*() {
          const recorder = yield* HostRecorder
          yield* dcp(sessionID, "stats")
          assert.strictEqual((yield* Ref.get(recorder.notes)).length, 1)
          assert.deepStrictEqual(yield* Ref.get(recorder.removed), [sessionID])
        }),
        {
          host: { messages: { [sessionID]: notes }, sessions: { [sessionID]: { createdByRun: true } } }
        }
      )
    }))

  it.effect("a run-mode session with messages of its own is kept", () =>
    scenario(() =>
      Effect.gen(function*() {
        yield* dcp(sessionID, "stats")
        assert.deepStrictEqual(yield* Ref.get((yield* HostRecorder).removed), [])
      }), {
      host: (root) => ({ messages: { [sessionID]: history(root) }, sessions: { [sessionID]: { createdByRun: true } } })
    }))

  it.effect("an empty session of the terminal UI (not made by opencode run) is kept", () =>
    pluginTest(
      Effect.gen(function*() {
        yield* dcp(sessionID, "stats")
        assert.deepStrictEqual(yield* Ref.get((yield* HostRecorder).removed), [])
      }),
      { host: { messages: { [sessionID]: [] } } }
    ))

  it.effect("an idle session is announced idle after a command, so waiting clients return", () =>
    scenario(() =>
      Effect.gen(function*() {
        yield* dcp(sessionID, "stats")
        assert.deepStrictEqual(yield* Ref.get((yield* HostRecorder).idleAnnounced), [sessionID])
      })
    ))

  it.effect("while the agent loop runs, the reply waits for idle and nothing is aborted", () =>
    scenario(() =>
      Effect.gen(function*() {
        const recorder = yield* HostRecorder
        yield* dcp(sessionID, "stats")
        assert.deepStrictEqual(yield* Ref.get(recorder.notes), [])
        assert.deepStrictEqual(yield* Ref.get(recorder.idleAnnounced), [])
      }), { host: () => ({ busy: [sessionID] }) }))
})
