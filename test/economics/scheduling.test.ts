import { assert, describe, it } from "@effect/vitest"
import { Effect, FileSystem, Path } from "effect"
import { TestClock } from "effect/testing"
import { system } from "../../src/hooks/system.ts"
import { assistant, fresh, type Msg, sessionID, toolPart, user } from "../support/history.ts"
import { event, hostConfig } from "../../src/hooks/session.ts"
import { send, stateOf } from "../pipeline/helpers.ts"
import { content, modelRequest, muchLater, placeholderPattern, read, tagged, autoTest } from "./support.ts"

/**
 * Request 1 reads a.ts and b.ts; request 2 reads a.ts again (c3 makes c1 a duplicate); request 3 reads b.ts again
 * (c4 makes c2 one). Each duplicate saves about 2.5k tokens.
 */
const a = "src/a.ts"
const b = "src/b.ts"
const first: Array<Msg> = [user("look at a.ts and b.ts"), assistant([read("c1", a), read("c2", b)])]
const second: Array<Msg> = [...first, assistant([read("c3", a)])]
const third: Array<Msg> = [...second, assistant([read("c4", b)])]

const outputOf = (messages: ReadonlyArray<Msg>, callID: string) => String(toolPart(messages, callID).state.output)

/** Request 1, then a minute later request 2: the duplicate is found on a warm cache. */
const warmDuplicate = Effect.gen(function*() {
  yield* send(fresh(first))
  yield* TestClock.adjust("1 minute")
  return yield* send(fresh(second))
})

/**
 * Writes `file` (relative to the project directory under `root`), as the model, the user or a command may; `modified`
 * sets its modification time, so that a file written again is told apart on any file system.
 */
const writeFile = (root: string, file: string, text: string, modified?: Date) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const at = path.join(root, "project", file)
    yield* fs.makeDirectory(path.dirname(at), { recursive: true })
    yield* fs.writeFileString(at, text)
    if (modified !== undefined) yield* fs.utimes(at, modified, modified)
  }).pipe(Effect.orDie)

/**
 * The project holds `before` (files by path, relative to the project directory), the duplicate waits on a warm cache
 * with OpenCode's system hook reporting a system prompt that carries `carried` (the same), and `after` is then
 * written on disk: the request after that write, a second later.
 */
const warmDuplicateThenWrite = (
  after: Readonly<Record<string, string>>,
  options: { readonly before?: Readonly<Record<string, string>>; readonly carried?: ReadonlyArray<string> } = {}
) =>
(root: string) =>
  Effect.gen(function*() {
    for (const [file, text] of Object.entries(options.before ?? {})) yield* writeFile(root, file, text)
    const instructions = (options.carried ?? []).map((file) =>
      `Instructions from: ${root}/project/${file}\n${options.before?.[file] ?? ""}`
    )
    yield* send(fresh(first))
    yield* system(sessionID, ["You are OpenCode, the best coding agent on the planet.", ...instructions], undefined)
    yield* TestClock.adjust("1 minute")
    yield* send(fresh(second))
    for (const [file, text] of Object.entries(after)) yield* writeFile(root, file, text, new Date("2100-01-01"))
    yield* TestClock.adjust("1 second")
    return yield* send(fresh(second))
  })

/**
 * OpenCode's config defines an agent `reviewer` with a prompt of its own; the duplicate waits on a warm cache, and the
 * user then sends a message to `agent` (the history's turns went to build): the request that message opens.
 */
const warmDuplicateThenAgent = (agent: string) =>
  Effect.gen(function*() {
    yield* hostConfig({ reviewer: { mode: "primary", prompt: "You review code." }, plan: { mode: "primary" } })
    yield* warmDuplicate
    yield* TestClock.adjust("1 second")
    const message = user("look again")
    return yield* send(fresh([...second, { ...message, info: { ...message.info, agent } }]))
  })

describe("scheduling through the transform: no trigger", () => {
  it.effect("a duplicate found on a warm cache, below minPruneTokens, is sent whole", () =>
    Effect.gen(function*() {
      const sent = yield* autoTest(warmDuplicate)
      assert.strictEqual(outputOf(sent, "c1"), tagged(1, content(a)))
    }))

  it.effect("a pending prune is neither recorded nor counted as an application", () =>
    Effect.gen(function*() {
      const state = yield* autoTest(warmDuplicate.pipe(Effect.andThen(stateOf(sessionID))))
      assert.deepStrictEqual(state.pruned, {})
      assert.strictEqual(state.stats.calls, 0)
      assert.deepStrictEqual(state.stats.applications, { count: 0, cold: 0, rebuiltTokens: 0 })
    }))

  it.effect("the same request sent again on a warm cache is byte-identical", () =>
    Effect.gen(function*() {
      const [once, again] = yield* autoTest(Effect.gen(function*() {
        const once = yield* warmDuplicate
        yield* TestClock.adjust("1 minute")
        return [once, yield* send(fresh(second))] as const
      }))
      assert.strictEqual(JSON.stringify(again), JSON.stringify(once))
    }))

  it.effect("immediate mode with nothing stale applies nothing and counts no application", () =>
    Effect.gen(function*() {
      const [sent, state] = yield* autoTest(Effect.all([send(fresh(first)), stateOf(sessionID)]), { mode: "immediate" })
      assert.deepStrictEqual([outputOf(sent, "c1"), outputOf(sent, "c2")], [
        tagged(1, content(a)),
        tagged(2, content(b))
      ])
      assert.deepStrictEqual(state.stats.applications, { count: 0, cold: 0, rebuiltTokens: 0 })
    }))

  it.effect("a model with a large window is not under pressure", () =>
    Effect.gen(function*() {
      const sent = yield* autoTest(
        modelRequest("anthropic", 1_000_000).pipe(
          Effect.andThen(warmDuplicate)
        )
      )
      assert.strictEqual(outputOf(sent, "c1"), tagged(1, content(a)))
    }))
})

describe("scheduling through the transform: triggers", () => {
  it.effect("the first request this process sees, longer than ttlSeconds after the history's latest, applies what is pending", () =>
    Effect.gen(function*() {
      const [sent, state] = yield* autoTest(Effect.gen(function*() {
        yield* muchLater
        return [yield* send(fresh(second)), yield* stateOf(sessionID)] as const
      }))
      assert.match(outputOf(sent, "c1"), placeholderPattern)
      assert.deepStrictEqual(state.stats.applications, { count: 1, cold: 1, rebuiltTokens: 0 })
    }))

  it.effect("the first request this process sees, a minute after the history's latest, keeps what is pending (OpenCode restarted, the cache is warm)", () =>
    Effect.gen(function*() {
      const [sent, state] = yield* autoTest(Effect.gen(function*() {
        yield* TestClock.adjust("1 minute")
        return [yield* send(fresh(second)), yield* stateOf(sessionID)] as const
      }))
      assert.strictEqual(outputOf(sent, "c1"), tagged(1, content(a)))
      assert.deepStrictEqual(state.stats.applications, { count: 0, cold: 0, rebuiltTokens: 0 })
    }))

  it.effect("after an idle gap longer than ttlSeconds the pending duplicate is applied", () =>
    Effect.gen(function*() {
      const sent = yield* autoTest(Effect.gen(function*() {
        yield* warmDuplicate
        yield* TestClock.adjust("6 minutes")
        return yield* send(fresh(second))
      }))
      assert.match(outputOf(sent, "c1"), placeholderPattern)
      assert.strictEqual(outputOf(sent, "c3"), tagged(3, content(a)))
    }))

  it.effect("after an MCP server's tools changed, the next request applies the pending duplicate, a second later", () =>
    Effect.gen(function*() {
      const [sent, state] = yield* autoTest(Effect.gen(function*() {
        yield* warmDuplicate
        yield* event({ type: "mcp.tools.changed", properties: { server: "github" } })
        yield* TestClock.adjust("1 second")
        return [yield* send(fresh(second)), yield* stateOf(sessionID)] as const
      }))
      assert.match(outputOf(sent, "c1"), placeholderPattern)
      assert.deepStrictEqual(state.stats.applications, { count: 1, cold: 1, rebuiltTokens: 0 })
    }))

  it.effect("a tools-changed event of another shape is passed over: the pending duplicate waits", () =>
    Effect.gen(function*() {
      const sent = yield* autoTest(Effect.gen(function*() {
        yield* warmDuplicate
        yield* event({ type: "mcp.tools.changed", properties: { servers: ["github"] } })
        yield* TestClock.adjust("1 second")
        return yield* send(fresh(second))
      }))
      assert.strictEqual(outputOf(sent, "c1"), tagged(1, content(a)))
    }))

  it.effect("after the project's AGENTS.md was created, the next request applies the pending duplicate", () =>
    Effect.gen(function*() {
      const sent = yield* autoTest(warmDuplicateThenWrite({ "AGENTS.md": "# Rules" }))
      assert.match(outputOf(sent, "c1"), placeholderPattern)
    }))

  it.effect("after an instruction file the system prompt carried was edited, the next request applies it", () =>
    Effect.gen(function*() {
      const sent = yield* autoTest(
        warmDuplicateThenWrite({ "docs/rules.md": "Use spaces." }, {
          before: { "docs/rules.md": "Use tabs." },
          carried: ["docs/rules.md"]
        })
      )
      assert.match(outputOf(sent, "c1"), placeholderPattern)
    }))

  it.effect("after an instruction file the system prompt carried was saved again unchanged, the duplicate waits", () =>
    Effect.gen(function*() {
      const sent = yield* autoTest(
        warmDuplicateThenWrite({ "AGENTS.md": "# Rules" }, {
          before: { "AGENTS.md": "# Rules" },
          carried: ["AGENTS.md"]
        })
      )
      assert.strictEqual(outputOf(sent, "c1"), tagged(1, content(a)))
    }))

  it.effect("after an instruction file was edited to a text of the same size, the next request applies it", () =>
    Effect.gen(function*() {
      const sent = yield* autoTest(
        warmDuplicateThenWrite({ "AGENTS.md": "# RULES" }, {
          before: { "AGENTS.md": "# Rules" },
          carried: ["AGENTS.md"]
        })
      )
      assert.match(outputOf(sent, "c1"), placeholderPattern)
    }))

  it.effect("after a CONTEXT.md beside an empty AGENTS.md was edited, the duplicate waits: OpenCode reads the AGENTS.md alone", () =>
    Effect.gen(function*() {
      const sent = yield* autoTest(
        warmDuplicateThenWrite({ "CONTEXT.md": "# Context, edited" }, {
          before: { "AGENTS.md": "", "CONTEXT.md": "# Context" }
        })
      )
      assert.strictEqual(outputOf(sent, "c1"), tagged(1, content(a)))
    }))

  it.effect("after a file of no instructions was written, the pending duplicate waits", () =>
    Effect.gen(function*() {
      const sent = yield* autoTest(warmDuplicateThenWrite({ "NOTES.md": "# Notes" }))
      assert.strictEqual(outputOf(sent, "c1"), tagged(1, content(a)))
    }))

  it.effect("after a CLAUDE.md was created beside the AGENTS.md the system prompt carried, the duplicate waits", () =>
    Effect.gen(function*() {
      const sent = yield* autoTest(
        warmDuplicateThenWrite({ "CLAUDE.md": "# Claude" }, {
          before: { "AGENTS.md": "# Rules" },
          carried: ["AGENTS.md"]
        })
      )
      assert.strictEqual(outputOf(sent, "c1"), tagged(1, content(a)))
    }))

  it.effect("the first request to an agent with a prompt of its own applies the pending duplicate, a second later", () =>
    Effect.gen(function*() {
      const sent = yield* autoTest(warmDuplicateThenAgent("reviewer"))
      assert.match(outputOf(sent, "c1"), placeholderPattern)
    }))

  it.effect("the first request to an agent with the model's own prompt (plan) keeps the duplicate waiting", () =>
    Effect.gen(function*() {
      const sent = yield* autoTest(warmDuplicateThenAgent("plan"))
      assert.strictEqual(outputOf(sent, "c1"), tagged(1, content(a)))
    }))

  it.effect("an application on a cold cache is counted as cold, with no cache rebuilt", () =>
    Effect.gen(function*() {
      const state = yield* autoTest(Effect.gen(function*() {
        yield* warmDuplicate
        yield* TestClock.adjust("6 minutes")
        yield* send(fresh(second))
        return yield* stateOf(sessionID)
      }))
      assert.deepStrictEqual(Object.keys(state.pruned), ["c1"])
      assert.deepStrictEqual(state.stats.applications, { count: 1, cold: 1, rebuiltTokens: 0 })
    }))

  it.effect("a prune once applied stays applied on every later request", () =>
    Effect.gen(function*() {
      const [again, longer, state] = yield* autoTest(Effect.gen(function*() {
        yield* warmDuplicate
        yield* TestClock.adjust("6 minutes")
        const applied = yield* send(fresh(second))
        yield* TestClock.adjust("1 minute")
        const again = yield* send(fresh(second))
        yield* TestClock.adjust("1 minute")
        const longer = yield* send(fresh([...second, assistant([read("c9", "src/c.ts")])]))
        assert.strictEqual(JSON.stringify(again), JSON.stringify(applied))
        return [again, longer, yield* stateOf(sessionID)] as const
      }))
      assert.match(outputOf(again, "c1"), placeholderPattern)
      assert.match(outputOf(longer, "c1"), placeholderPattern)
      assert.strictEqual(state.stats.applications.count, 1)
    }))

  it.effect("pending duplicates found over several requests are applied together, once the batch breaks even", () =>
    Effect.gen(function*() {
      const [requests, state] = yield* autoTest(
        Effect.gen(function*() {
          yield* send(fresh(first))
          yield* TestClock.adjust("1 minute")
          const requests = [yield* send(fresh(second))]
          // Each request that keeps the batch out adds its read price to what waiting cost, until that pays the rebuild.
          while (requests.length < 40 && !placeholderPattern.test(outputOf(requests.at(-1)!, "c1"))) {
            yield* TestClock.adjust("1 minute")
            requests.push(yield* send(fresh(third)))
          }
          return [requests, yield* stateOf(sessionID)] as const
        }),
        { minPruneTokens: 4000 }
      )
      const applied = requests.at(-1)!
      assert.strictEqual(outputOf(requests[0]!, "c1"), tagged(1, content(a)))
      assert.isAbove(requests.length, 2)
      assert.match(outputOf(applied, "c1"), placeholderPattern)
      assert.match(outputOf(applied, "c2"), placeholderPattern)
      assert.strictEqual(outputOf(requests.at(-2)!, "c2"), tagged(2, content(b)))
      assert.deepStrictEqual([state.stats.applications.count, state.stats.applications.cold], [1, 0])
      assert.isAbove(state.stats.applications.rebuiltTokens, 0)
    }))

  it.effect("a context at the pressure share of a small model window applies the pending duplicate", () =>
    Effect.gen(function*() {
      const sent = yield* autoTest(
        modelRequest("anthropic", 6000).pipe(
          Effect.andThen(warmDuplicate)
        )
      )
      assert.match(outputOf(sent, "c1"), placeholderPattern)
    }))

  it.effect("an application under pressure counts the cache it rebuilds", () =>
    Effect.gen(function*() {
      const state = yield* autoTest(
        modelRequest("anthropic", 6000).pipe(
          Effect.andThen(warmDuplicate),
          Effect.andThen(stateOf(sessionID))
        )
      )
      assert.strictEqual(state.stats.applications.count, 1)
      assert.strictEqual(state.stats.applications.cold, 0)
      assert.isAbove(state.stats.applications.rebuiltTokens, 0)
    }))

  it.effect("a github-copilot model (billed per request) applies the duplicate at once", () =>
    Effect.gen(function*() {
      const sent = yield* autoTest(
        modelRequest("github-copilot", 1_000_000).pipe(
          Effect.andThen(warmDuplicate)
        )
      )
      assert.match(outputOf(sent, "c1"), placeholderPattern)
    }))

  it.effect("cache.mode immediate applies the duplicate at once on a warm cache", () =>
    Effect.gen(function*() {
      const sent = yield* autoTest(warmDuplicate, { mode: "immediate" })
      assert.match(outputOf(sent, "c1"), placeholderPattern)
    }))

  it.effect("every application is counted: one on a cold cache, one on a warm cache", () =>
    Effect.gen(function*() {
      const state = yield* autoTest(
        Effect.gen(function*() {
          yield* muchLater
          yield* send(fresh(second))
          yield* TestClock.adjust("1 minute")
          yield* send(fresh(third))
          return yield* stateOf(sessionID)
        }),
        { mode: "immediate" }
      )
      assert.deepStrictEqual(Object.keys(state.pruned).sort(), ["c1", "c2"])
      assert.strictEqual(state.stats.applications.count, 2)
      assert.strictEqual(state.stats.applications.cold, 1)
    }))
})
