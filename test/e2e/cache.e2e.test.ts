import { readFile } from "node:fs/promises"
import { join } from "node:path"
import { assert, beforeAll, describe, it } from "vitest"
import type { Msg } from "../../src/host/schema.ts"
import { Blocks, type Wire, WireBuilder } from "../../src/simulator/wire.ts"
import { profiles } from "../../src/pricing/profiles.ts"
import { call, dcpConfig, done, holdsPlaceholder, read, sourceFile } from "./support/fixtures.ts"
import type { RecordedRequest, Reply } from "./support/model-server.ts"
import { contentText, messageText, requestText, resultOf } from "./support/requests.ts"
import { type Scenario, useScenario } from "./support/scenario.ts"
import { breakpointShape, priceBodies, wireOfBody } from "./support/wire.ts"

/**
 * The prompt cache on the real wire. OpenCode writes Anthropic cache breakpoints into the request body for a model
 * whose ID names Claude, so the scripted server records exactly what a provider would price. The same scripted
 * 26-request coding session runs without the plugin and with it (default settings), and the bodies are priced by
 * Anthropic's rules with OpenCode's own markers. The session pauses longer than the cache's TTL before its third
 * prompt.
 *
 * The bodies are priced at the session's pace as scripted, whatever the machine's: a request a second, and the pause.
 * The plugin reads its clock, which the pause moves past the TTL (`Scenario.clockAhead`) rather than waiting it out:
 * the TTL is an hour, so no gap between the requests of a prompt reaches it however busy the machine, and the pause
 * passes it whatever the machine. Both runs are made before the tests, which look at what they sent.
 */

const ttl = 3600
const pricing = { ...profiles.anthropic, ttlSeconds: ttl }
/** The settings of both runs: the defaults (which the tier's global file changes), with the scaled-down TTL. */
const withTtl = { cache: { mode: "auto", ttlSeconds: ttl }, strategies: { repeats: { enabled: true } } }
const files = {
  "src/app.ts": sourceFile("app", 400),
  "src/util.ts": sourceFile("util", 300),
  "src/big.ts": sourceFile("big", 800)
}

interface Run {
  readonly bodies: ReadonlyArray<RecordedRequest>
  readonly times: ReadonlyArray<number>
  /** Requests sent before the pause. */
  readonly beforePause: number
  readonly messages: ReadonlyArray<Msg>
}

/** Keys in another order than OpenCode's schema, which its todowrite answers with (the list read back, decoded). */
const todos = [
  {
    content: "Make app7 a number and check that nothing reads it as a string",
    status: "in_progress",
    priority: "high"
  },
  { status: "pending", content: "Add src/new.ts with the fresh helpers and read it back", priority: "medium" },
  { priority: "low", status: "pending", content: "Count the lines of util.ts and run the tests" }
]

const prompts = (s: Scenario): ReadonlyArray<ReadonlyArray<Reply>> => [
  [
    read(s, "src/app.ts", "r1"),
    read(s, "src/util.ts", "r2"),
    call("grep", { pattern: "export const app1", path: s.path("src") }, "g1"),
    call("bash", { command: "ls src", description: "list" }, "b1"),
    read(s, "src/app.ts", "r3"),
    call("bash", { command: "ls src", description: "list" }, "b2"),
    read(s, "src/big.ts", "r4"),
    call("read", { filePath: s.path("src/app.ts"), offset: 100, limit: 40 }, "r5"),
    read(s, "src/big.ts", "r6"),
    done
  ],
  [
    call("todowrite", { todos }, "t1"),
    call("edit", {
      filePath: s.path("src/app.ts"),
      oldString: 'export const app7 = "app line 7"',
      newString: "export const app7 = 7"
    }, "e1"),
    read(s, "src/app.ts", "r7"),
    call("write", { filePath: s.path("src/new.ts"), content: sourceFile("fresh", 120) }, "w1"),
    read(s, "src/new.ts", "r8"),
    call("bash", { command: "wc -l src/util.ts", description: "count" }, "b3"),
    read(s, "src/util.ts", "r9"),
    call("bash", { command: "echo tests pass", description: "test" }, "b4"),
    done
  ],
  [
    read(s, "src/big.ts", "r10"),
    call("grep", { pattern: "export const util2", path: s.path("src") }, "g2"),
    read(s, "src/util.ts", "r11"),
    call("bash", { command: "ls src", description: "list" }, "b5"),
    read(s, "src/app.ts", "r12"),
    call("edit", {
      filePath: s.path("src/app.ts"),
      oldString: 'export const app9 = "app line 9"',
      newString: "export const app9 = 9"
    }, "e2"),
    done
  ]
]

/**
 * Runs the scripted session in a new session of `s`. With `pause`, the last prompt goes with the plugin's clock the
 * cache TTL (and 2 s) ahead, and `pause` runs before it.
 */
const runSession = async (s: Scenario, pause?: () => Promise<unknown>): Promise<Run> => {
  const session = await s.newSession()
  const script = prompts(s)
  let beforePause = 0
  for (const [i, replies] of script.entries()) {
    const prompt = async () => {
      s.model.script(replies)
      await s.prompt(session, `step ${i + 1}`)
    }
    if (i < script.length - 1) {
      await prompt()
      continue
    }
    beforePause = s.requests().length
    if (pause === undefined) await prompt()
    else {
      await pause()
      await s.clockAhead(ttl + 2, prompt)
    }
  }
  const main = s.model.main()
  const bodies = s.requests()
  const times = bodies.map((_, k) => (k + (k >= beforePause ? ttl + 2 : 0)) * 1000)
  assert.strictEqual(bodies.length, main.length)
  return { bodies, times, beforePause, messages: (await s.messages(session)) as unknown as ReadonlyArray<Msg> }
}

const cost = (run: Run, upTo = run.bodies.length) =>
  priceBodies(pricing, run.bodies.slice(0, upTo), run.times.slice(0, upTo)).reduce((sum, entry) => sum + entry.cost, 0)

const unmarked = (message: unknown) =>
  JSON.stringify(message, (key, value) => (key === "cache_control" ? undefined : value))

/** The IDs of the calls a message carries: an assistant message's tool calls, a tool message's result. */
const callIdsOf = (message: RecordedRequest["messages"][number]): Array<string> => [
  ...(typeof message.tool_call_id === "string" ? [message.tool_call_id] : []),
  ...(Array.isArray(message.tool_calls) ? message.tool_calls.map((call: { readonly id: string }) => call.id) : [])
]

const isNote = (message: RecordedRequest["messages"][number]) =>
  message.role === "user" && contentText(message.content).startsWith("[Context note")

const off = useScenario({
  files: { ...files, ...dcpConfig({ ...withTtl, enabled: false }) },
  mainModel: "claude-fake"
})
const on = useScenario({ files: { ...files, ...dcpConfig(withTtl) }, mainModel: "claude-fake" })

let without: Run | undefined
let withPlugin: Run | undefined

beforeAll(async () => {
  // With the plugin off, a pause changes nothing OpenCode sends: it is only priced.
  withPlugin = await runSession(on(), async () => (without = await runSession(off())))
})

describe("without the plugin", () => {
  it("control: runs the scripted session; OpenCode marks its cache breakpoints in every body", () => {
    assert.lengthOf(without!.bodies, 26)
    for (const body of without!.bodies) assert.include(JSON.stringify(body.messages), '"cache_control"')
  })

  it("control: the cost model converts stored messages the way OpenCode does: the same blocks and breakpoints as each body", () => {
    const run = without!
    const blocks = new Blocks()
    const assistants = run.messages.flatMap((message, i) => (message.info.role === "assistant" ? [i] : []))
    // Each request carries the history before the assistant message it produced.
    run.bodies.forEach((body, k) => {
      const system = body.messages.filter((message) => message.role === "system").map((message) =>
        contentText(message.content)
      )
      const builder = new WireBuilder(run.messages, system)
      const converted = builder.request([], system, run.messages.slice(0, assistants[k]))
      const shape = breakpointShape(builder.blocks, withoutTextOnlyAssistantMarks(builder.blocks, converted))
      assert.deepStrictEqual(shape, breakpointShape(blocks, wireOfBody(blocks, body)), `request ${k}`)
    })
  })
})

/**
 * The scripted provider goes through the AI SDK's OpenAI-compatible package, which drops the breakpoint OpenCode puts
 * on an assistant message that holds only text (Anthropic's own package keeps it). So does the conversion, for this
 * comparison only.
 */
const withoutTextOnlyAssistantMarks = (blocks: Blocks, wire: Wire): Wire => ({
  blocks: wire.blocks,
  breakpoints: wire.breakpoints.filter((position) => {
    let start = position
    while (start > 0 && !blocks.blocks[wire.blocks[start]!]!.boundary) start--
    const boundary = blocks.blocks[wire.blocks[start]!]!
    if (boundary.role !== "assistant") return true
    for (let i = start + 1; i <= position; i++) if (blocks.blocks[wire.blocks[i]!]!.kind !== "text") return true
    return false
  })
})

describe("with the plugin", () => {
  it("runs the scripted session with its tools and system section", () => {
    assert.lengthOf(withPlugin!.bodies, 26)
    const first = withPlugin!.bodies[0]!
    assert.includeMembers(first.tools?.map((tool) => tool.function.name) ?? [], ["discard", "extract", "recall"])
    assert.strictEqual(
      first.messages.some((message) =>
        message.role === "system" && contentText(message.content).includes("## Context pruning")
      ),
      true
    )
  })

  it("sends every message a request sent again byte-identical, except where a prune or a fold now applies", () => {
    const bodies = withPlugin!.bodies
    let folded = 0
    for (let k = 1; k < bodies.length; k++) {
      const before = bodies[k - 1]!.messages.filter((message) => !isNote(message))
      const after = bodies[k]!.messages
      const callsAfter = new Set(after.flatMap(callIdsOf))
      let m = 0
      for (let i = 0; i < before.length; i++) {
        const where = `request ${k}, message ${i}:\n${unmarked(before[i]).slice(0, 400)}\n${
          unmarked(after[m]).slice(0, 400)
        }`
        // OpenCode's breakpoints move with the end of the request: they are markers, not content.
        const a = unmarked(before[i])
        const b = unmarked(after[m])
        if (a === b) {
          m++
          continue
        }
        const digest = "[folded tool calls]"
        // A digest's lines (`#12 read src/app.ts`); only a turn's first digest opens with the header.
        const digestLines = /^#\d+ \S/m
        if (
          after[m] !== undefined && digestLines.test(messageText(after[m]!)) &&
          !digestLines.test(messageText(before[i]!))
        ) {
          // A fold writes a digest into each assistant message that held the first call of a run of folded calls.
          assert.strictEqual(before[i]!.role, after[m]!.role, where)
          folded++
          m++
          continue
        }
        const calls = callIdsOf(before[i]!)
        if (calls.length > 0 && calls.every((id) => !callsAfter.has(id))) {
          // The turn's other calls and their results leave with it: the digest stands for them.
          assert.include(requestText(bodies[k]!), digest, `${where}\na call is gone without a digest`)
          continue
        }
        // A prune changes a tool result, or the content input of a call, to a placeholder: the rest stays.
        assert.strictEqual(before[i]!.role, after[m]!.role, where)
        assert.strictEqual(holdsPlaceholder(messageText(after[m]!)), true, where)
        m++
      }
    }
    assert.isAbove(folded, 0, "the session is long enough for an old turn to be folded")
  })

  it("holds what it finds back while the cache is warm, and applies it on the first request after the pause", () => {
    const bodies = withPlugin!.bodies
    /** The messages of request `k - 1` that request `k` sends otherwise (its trailing note aside). */
    const changed = (k: number) => {
      const before = bodies[k - 1]!.messages.filter((message) => !isNote(message))
      return before.filter((message, i) => unmarked(message) !== unmarked(bodies[k]!.messages[i])).length
    }
    const pause = withPlugin!.beforePause
    for (let k = 1; k < pause; k++) assert.strictEqual(changed(k), 0, `request ${k + 1} changed what was sent`)
    assert.isAbove(changed(pause), 0, "the first request after the pause applies what waited")
    const after = bodies[pause]!
    assert.isTrue(
      after.messages.slice(0, bodies[pause - 1]!.messages.length).some((m) => holdsPlaceholder(messageText(m)))
    )
  })

  it("prunes repeats at their first send: the re-reads, the lines read again, the read-back of a write or of a todo list", () => {
    // The last request before the pause: after it, the cold cache lets waiting prunes apply as well.
    const last = withPlugin!.bodies[withPlugin!.beforePause - 1]!
    assert.match(resultOf(last, "r3") ?? "", /^\[same output as id \d+; recall \d+\]$/)
    assert.match(resultOf(last, "r6") ?? "", /^\[same output as id \d+/)
    assert.match(resultOf(last, "r5") ?? "", /^\[these lines are unchanged in the output of id \d+/)
    assert.match(resultOf(last, "r8") ?? "", /^\[the same content as the earlier write of this file/)
    assert.match(resultOf(last, "t1") ?? "", /^\[the same list as this call's input; recall \d+\]$/)
    assert.match(resultOf(last, "r2") ?? "", /^\[id \d+\]\n/)
  })
})

describe("the cost, priced by Anthropic's rules with OpenCode's own breakpoints", () => {
  it("is less with the plugin than without it while the cache stays warm", async () => {
    const plain = cost(without!, without!.beforePause)
    const pruned = cost(withPlugin!, withPlugin!.beforePause)
    await report(plain, pruned, "before the pause")
    assert.isBelow(pruned, plain)
  })

  it("is less with the plugin over the whole session, a pause longer than the TTL included", async () => {
    const plain = cost(without!)
    const pruned = cost(withPlugin!)
    await report(plain, pruned, "whole session")
    assert.isBelow(pruned, plain)
  })
})

/** Prints the figures, so a run's log shows them. */
const report = async (plain: number, pruned: number, what: string) => {
  const version =
    JSON.parse(await readFile(join(new URL("../../", import.meta.url).pathname, "package.json"), "utf8")).version
  console.log(
    `cache cost (${what}, plugin ${version}): without ${plain.toFixed(0)}, with ${pruned.toFixed(0)} = ${
      (pruned / plain).toFixed(3)
    }x`
  )
}
