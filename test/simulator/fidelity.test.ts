import type { Hooks } from "@opencode-ai/plugin"
import { assert, describe, it } from "vitest"
import type { Msg } from "../../src/host/schema.ts"
import { type DrivenPlugin, noPlugin } from "../../src/simulator/drive.ts"
import { generate } from "../../src/simulator/generator/generate.ts"
import { recordedSession, replayedOnClaude } from "../support/recorded.ts"

/**
 * Used-content retention (SPEC 9.12), on hand-made histories replayed through plugins that do one thing each: of the
 * lines a reply used whose only earlier source was a tool output, the share its request still showed.
 */

const used = "export function parseConfig(text: string): Config {"
const other = "const DEFAULT_TIMEOUT_MILLISECONDS = 30_000"
const fileContent = ["import { Config } from './types'", used, "  return JSON.parse(text)", "}", other].join("\n")
const readOutput = fileContent.split("\n").map((line, i) => `${i + 1}: ${line}`).join("\n")

const { user, assistant, call } = recordedSession("ses_f")
const text = (value: string) => ({ type: "text", text: value })
const read = (callID: string) => call(callID, "read", { filePath: "/p/src/config.ts" }, readOutput)
const edit = (callID: string, oldString: string) =>
  call(callID, "edit", { filePath: "/p/src/config.ts", oldString, newString: "x" }, "Edit applied successfully.")

/** A plugin that changes each sent tool part of the calls named as `change` says, and does nothing else. */
const changing = (change: (parts: Array<Msg["parts"][number]>, at: number) => void, ...callIDs: Array<string>) => {
  const hooks: Hooks = {
    "experimental.chat.messages.transform": async (_input, output) => {
      for (const message of output.messages) {
        for (let p = message.parts.length - 1; p >= 0; p--) {
          const part = message.parts[p]!
          if (part.type === "tool" && callIDs.includes(part.callID)) change(message.parts as never, p)
        }
      }
    }
  }
  return { hooks, setTime: () => {} } satisfies DrivenPlugin
}
const pruning = (...callIDs: Array<string>) =>
  changing((parts, p) => {
    ;(parts[p] as { state: { output: string } }).state.output = "[pruned; recall 1]"
  }, ...callIDs)
const folding = (...callIDs: Array<string>) =>
  changing((parts, p) => {
    parts.splice(p, 1, { type: "text", text: "[folded tool calls]\n#1 read src/config.ts" } as never)
  }, ...callIDs)

const fidelityOf = async (messages: ReadonlyArray<Msg>, plugin: DrivenPlugin) =>
  (await replayedOnClaude({ sessionID: "ses_f", messages, plugin })).fidelity

const session = () => [
  user("fix the config parser"),
  assistant(read("c1")),
  assistant(text("Found it."), edit("c2", `${used}\n  return JSON.parse(text)`))
]

describe("used-content retention", () => {
  it("a line the reply copied from a tool output still sent is used and retained", async () => {
    const fidelity = await fidelityOf(session(), noPlugin)
    assert.deepStrictEqual(
      { used: fidelity.used, retained: fidelity.retained, misses: fidelity.misses.length },
      { used: 1, retained: 1, misses: 0 }
    )
  })

  it("a line whose only source was pruned is a miss, showing the placeholder where the source was", async () => {
    const fidelity = await fidelityOf(session(), pruning("c1"))
    assert.deepStrictEqual(fidelity.misses, [{
      request: 2,
      field: "edit.oldString",
      line: used,
      sources: [{ callID: "c1", tool: "read", shown: "[pruned; recall 1]" }]
    }])
    assert.strictEqual(fidelity.retained, 0)
  })

  it("a line whose only source was folded out of the request is a miss", async () => {
    const fidelity = await fidelityOf(session(), folding("c1"))
    assert.deepStrictEqual(fidelity.misses.map((miss) => [miss.line, miss.sources.map((source) => source.shown)]), [
      [used, ["not sent (folded, or its message left)"]]
    ])
  })

  it("a line pruned in one copy and sent in another is retained", async () => {
    const messages = [
      user("fix the config parser"),
      assistant(read("c1")),
      assistant(read("c2")),
      assistant(edit("c3", used))
    ]
    const fidelity = await fidelityOf(messages, pruning("c1"))
    assert.deepStrictEqual({ used: fidelity.used, retained: fidelity.retained }, { used: 1, retained: 1 })
  })

  it("a line the model wrote in its own earlier text is not used from a tool output", async () => {
    const messages = [
      user("fix the config parser"),
      assistant(read("c1")),
      assistant(text(`The parser starts with \`${used}\`.`)),
      assistant(edit("c2", used))
    ]
    const fidelity = await fidelityOf(messages, pruning("c1"))
    assert.deepStrictEqual({ used: fidelity.used, misses: fidelity.misses.length }, { used: 0, misses: 0 })
  })

  it("a line the user wrote is not used from a tool output either", async () => {
    const messages = [user(`the line ${other} is wrong`), assistant(read("c1")), assistant(edit("c2", other))]
    assert.strictEqual((await fidelityOf(messages, pruning("c1"))).used, 0)
  })

  it("lines shorter than 24 characters are not candidates", async () => {
    const messages = [user("fix it"), assistant(read("c1")), assistant(edit("c2", "  return JSON.parse(text)"))]
    assert.strictEqual((await fidelityOf(messages, noPlugin)).used, 0)
  })

  it("each request with misses is priced as one recall: its context read from the cache, the outputs written", async () => {
    const fidelity = await fidelityOf(session(), pruning("c1"))
    const recalled = Math.ceil(readOutput.length / 4)
    assert.strictEqual(fidelity.requestsWithMisses, 1)
    assert.strictEqual(fidelity.recalledTokens, recalled)
    assert.isAbove(fidelity.recallCost.anthropic!, 1.25 * recalled)
  })

  it("OpenCode alone retains every used line of a generated session", async () => {
    const generated = generate({ seed: 2, toolCalls: 150 })
    const fidelity = await fidelityOf(generated.messages, noPlugin)
    assert.isAbove(fidelity.used, 20)
    assert.deepStrictEqual({ retained: fidelity.retained, misses: fidelity.misses.length }, {
      retained: fidelity.used,
      misses: 0
    })
  })
})
