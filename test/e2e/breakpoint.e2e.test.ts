import { dirname } from "node:path"
import { assert, describe, it } from "vitest"
import type { RequestCost } from "../../src/simulator/cost.ts"
import { profiles } from "../../src/pricing/profiles.ts"
import { done, holdsPlaceholder, sourceFile } from "./support/fixtures.ts"
import type { AnthropicRequest, Reply } from "./support/model-server.ts"
import { type Scenario, useScenario } from "./support/scenario.ts"
import { priceAnthropicBodies } from "./support/wire.ts"

/**
 * The plugin's own prompt-cache breakpoint (src/engine/anchor.ts) on the real Anthropic wire: OpenCode talks to the
 * scripted model through `@ai-sdk/anthropic`, so the bodies recorded are what Anthropic would receive. The same
 * session runs twice with the plugin on, with `cache.breakpoint` and without it. Stale outputs are masked after 3
 * calls and applied at once (`cache.mode: "immediate"`), so a short script makes a prune on almost every request
 * and both runs send the same content and apply the same prunes: the breakpoint is the only difference. What no rule
 * prunes (here a long prompt) sits before the pruned outputs: without the breakpoint, every prune writes it again.
 */

const files = Object.fromEntries(
  Array.from({ length: 12 }, (_, i) => [`src/f${i}.ts`, sourceFile(`f${i}`, 150)] as const)
)

/**
 * The project's config, over the tier's global one (prunes applied at once, repeats off: see scenario.ts), which the
 * scenarios here share with the other files' on one OpenCode.
 */
const projectConfig = (breakpoint: boolean) =>
  `${
    JSON.stringify({
      cache: { breakpoint },
      strategies: { staleOutputs: { trigger: 2000, keepRecent: 3, clearAtLeast: 500 } }
    })
  }\n`

/** Each step says what it does, then reads a file: the text is where the breakpoint can go. */
const script = (s: Scenario): ReadonlyArray<Reply> => [
  ...Object.keys(files).map((file, i) => ({
    text: `Reading ${file}.`,
    toolCalls: [{ name: "read", args: { filePath: s.path(file) }, id: `toolu_r${i}` }]
  })),
  done
]

interface Run {
  readonly bodies: ReadonlyArray<AnthropicRequest>
  readonly costs: ReadonlyArray<RequestCost>
}

/** A prompt with a pasted document: content before every pruned output that no rule prunes. */
const prompt = `Read the sources against this specification:\n${sourceFile("spec", 300)}`

const runSession = async (s: Scenario): Promise<Run> => {
  const session = await s.newSession()
  s.model.script(script(s))
  await s.prompt(session, prompt)
  const recorded = s.anthropicRequests()
  const times = recorded.map((body) => s.model.anthropic.times[s.model.anthropic.requests.indexOf(body)]!)
  // Each run has its own temporary directories (the project, and the server's home); named alike, both runs send the
  // same bytes.
  const server = dirname(s.opencode().env.HOME!)
  const bodies = recorded.map((body) =>
    JSON.parse(
      JSON.stringify(body).replaceAll(s.root, "/tmp/run").replaceAll(server, "/tmp/server")
    ) as AnthropicRequest
  )
  return { bodies, costs: priceAnthropicBodies(profiles.anthropic, bodies, times) }
}

type Block = Exclude<AnthropicRequest["messages"][number]["content"], string>[number]
const blocksOf = (message: AnthropicRequest["messages"][number]): ReadonlyArray<Block> =>
  typeof message.content === "string" ? [] : message.content

/** Assistant text blocks marked for the cache before the last two messages (OpenCode marks those itself). */
const ownMarks = (body: AnthropicRequest): Array<string> =>
  body.messages.slice(0, -2).flatMap((message) =>
    message.role === "assistant"
      ? blocksOf(message).flatMap((block) =>
        block.type === "text" && block.cache_control !== undefined ? [block.text ?? ""] : []
      )
      : []
  )

const markerCount = (body: AnthropicRequest): number => {
  const system = typeof body.system === "string" ? [] : body.system ?? []
  return [...system, ...body.messages.flatMap(blocksOf)].filter((block) => block.cache_control !== undefined).length
}

/** What a body sends, without its cache breakpoints. */
const unmarked = (run: Run) =>
  run.bodies.map((body) => JSON.stringify(body, (key, value) => (key === "cache_control" ? undefined : value)))

/** Each content block a body sends, in order, without its cache breakpoint. */
const sentBlocks = (body: AnthropicRequest): Array<string> =>
  body.messages.flatMap((message) =>
    blocksOf(message).map((block) =>
      JSON.stringify(block, (key, value) => (key === "cache_control" ? undefined : value))
    )
  )

let withMark: Run | undefined
let withoutMark: Run | undefined

/** The session's scenario through `@ai-sdk/anthropic`, with the plugin's breakpoint on or off. */
const anthropicScenario = (breakpoint: boolean) =>
  useScenario({
    files: { ...files, ".opencode/dcp.jsonc": projectConfig(breakpoint) },
    mainModel: "claude-fake",
    protocol: "anthropic"
  })

describe("without the breakpoint", () => {
  const scenario = anthropicScenario(false)

  it("runs the session; prunes apply, and no body carries a breakpoint of the plugin's own", async () => {
    withoutMark = await runSession(scenario())
    assert.lengthOf(withoutMark.bodies, 13)
    assert.isTrue(withoutMark.bodies.some((body) => sentBlocks(body).some(holdsPlaceholder)))
    for (const body of withoutMark.bodies) assert.deepStrictEqual(ownMarks(body), [])
  })
})

describe("with the breakpoint", () => {
  const scenario = anthropicScenario(true)

  it("runs the session; once prunes apply, a body marks one assistant text before the outputs still to be masked", async () => {
    withMark = await runSession(scenario())
    assert.lengthOf(withMark.bodies, 13)
    const marks = withMark.bodies.map(ownMarks)
    // Nothing is masked before the context passes the trigger: no breakpoint of the plugin's own yet.
    assert.deepStrictEqual(marks[0], [])
    const first = marks.findIndex((own) => own.length > 0)
    assert.isAbove(first, 0)
    for (const own of marks.slice(first)) {
      assert.lengthOf(own, 1)
      assert.match(own[0]!, /^Reading src\/f\d+\.ts\.$/)
    }
  })

  it("never sends more than the 4 breakpoints Anthropic allows: the system section shares OpenCode's system block", () => {
    // The plugin's own breakpoint among them.
    assert.isTrue(withMark!.bodies.some((body) => ownMarks(body).length === 1))
    for (const body of withMark!.bodies) {
      assert.isAtMost(markerCount(body), 4)
      assert.strictEqual(typeof body.system === "string" ? 1 : body.system?.length, 1)
    }
  })

  it("sends every block a request sent again byte-identical, but for its breakpoint and where a prune now applies", () => {
    const bodies = withMark!.bodies
    let pruned = 0
    for (let k = 1; k < bodies.length; k++) {
      // A trailing note (a nudge) is sent with one request only.
      const before = sentBlocks(bodies[k - 1]!).filter((block) => !block.includes("[Context note"))
      const after = sentBlocks(bodies[k]!)
      before.forEach((block, i) => {
        if (block === after[i]) return
        assert.isTrue(holdsPlaceholder(after[i] ?? ""), `request ${k}, block ${i}`)
        pruned++
      })
    }
    // Prunes did apply in the session: blocks sent before were sent again as placeholders.
    assert.isAbove(pruned, 0)
  })

  it("changes nothing but the breakpoints: both runs send the same content and prune the same outputs", () => {
    const [marked, plain] = [unmarked(withMark!), unmarked(withoutMark!)]
    assert.isTrue(marked.some((body) => holdsPlaceholder(body)), "the runs prune")
    marked.forEach((body, k) => {
      assert.isTrue(body === plain[k], `request ${k} differs`)
    })
  })

  it("priced by Anthropic's rules, a prune rewrites the cache from the breakpoint: less is written, the session costs less", () => {
    const written = (run: Run) => run.costs.reduce((sum, cost) => sum + cost.writeTokens, 0)
    const cost = (run: Run) => run.costs.reduce((sum, request) => sum + request.cost, 0)
    withMark!.costs.forEach((request, k) => {
      assert.isAtMost(request.writeTokens, withoutMark!.costs[k]!.writeTokens)
    })
    assert.isBelow(written(withMark!), written(withoutMark!))
    assert.isBelow(cost(withMark!), cost(withoutMark!))
  })
})

describe("with another plugin that adds a system text of its own", () => {
  // A project plugin, loaded after this one: its text reaches OpenCode as a second system message, which OpenCode
  // marks too.
  const other = `export const Other = async () => ({
  "experimental.chat.system.transform": async (_input, output) => {
    output.system.push("Another plugin's instructions.")
  }
})
`
  const scenario = useScenario({
    files: { ...files, ".opencode/plugin/other.js": other, ".opencode/dcp.jsonc": projectConfig(true) },
    mainModel: "claude-fake",
    protocol: "anthropic"
  })

  it("the plugin keeps no breakpoint of its own, and OpenCode's marker on the newest message stays", async () => {
    const run = await runSession(scenario())
    assert.lengthOf(run.bodies, 13)
    assert.isTrue(run.bodies.some((body) => sentBlocks(body).some(holdsPlaceholder)))
    for (const body of run.bodies) {
      const system = typeof body.system === "string" ? [body.system] : (body.system ?? []).map((block) => block.text)
      assert.deepStrictEqual(system.slice(1), ["Another plugin's instructions."])
      assert.deepStrictEqual(ownMarks(body), [])
      assert.isDefined(blocksOf(body.messages.at(-1)!).at(-1)?.cache_control)
    }
  })
})
