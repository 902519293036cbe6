import type { Hooks } from "@opencode-ai/plugin"
import { assert, describe, it } from "vitest"
import { type DriveOptions, type DrivenPlugin, noPlugin } from "../../src/simulator/drive.ts"
import type { Msg } from "../../src/host/schema.ts"
import { recordedSession, replayedOnClaude } from "../support/recorded.ts"

/**
 * The edits the replay counts against what each request showed of the edited file: the figure that tells what
 * masking costs the model (an edit made without the file's content in view), next to what it saves.
 */

const file = "/p/src/a.ts"
const content = Array.from({ length: 40 }, (_, i) => `${i + 1}: export const value${i} = ${i}`).join("\n")

const { user, assistant, call, startAt } = recordedSession("ses_d")
const read = (callID: string, path = file) => call(callID, "read", { filePath: path }, content)
const edit = (callID: string, path = file) =>
  call(callID, "edit", { filePath: path, oldString: "value0", newString: "first" }, "Edit applied successfully.")

/** A plugin whose transform rewrites every read output as `rewrite` says, and does nothing else. */
const rewritingReads = (rewrite: (output: string) => string): DrivenPlugin => {
  const hooks: Hooks = {
    "experimental.chat.messages.transform": async (_input, output) => {
      for (const message of output.messages) {
        for (const part of message.parts) {
          if (part.type === "tool" && part.tool === "read" && part.state.status === "completed") {
            part.state.output = rewrite(part.state.output)
          }
        }
      }
    }
  }
  return { hooks, setTime: () => {} }
}

const replay = (messages: ReadonlyArray<Msg>, plugin: DrivenPlugin, options: Partial<DriveOptions> = {}) =>
  replayedOnClaude({ sessionID: "ses_d", messages, plugin, ...options })

const editsOf = async (messages: ReadonlyArray<Msg>, plugin: DrivenPlugin, openCodePrune = false, directory?: string) =>
  (await replay(messages, plugin, { openCodePrune, ...(directory === undefined ? {} : { directory }) })).edits

describe("edits made with the file masked", () => {
  it("an edit whose file's only read was replaced in what was sent is counted as masked", async () => {
    const session = [user("fix a.ts"), assistant(read("c1")), assistant(edit("c2"))]
    assert.deepStrictEqual(await editsOf(session, rewritingReads(() => "[pruned: read a.ts; recall 1]")), {
      made: 1,
      masked: 1
    })
  })

  it("a read sent with a tag at its head still shows the file", async () => {
    const session = [user("fix a.ts"), assistant(read("c1")), assistant(edit("c2"))]
    assert.deepStrictEqual(await editsOf(session, rewritingReads((output) => `[#1]\n${output}`)), {
      made: 1,
      masked: 0
    })
  })

  it("one read still in view is enough, whatever happened to the others", async () => {
    let reads = 0
    const firstMasked = rewritingReads((output) => (reads++ % 2 === 0 ? "[pruned]" : output))
    const session = [user("fix a.ts"), assistant(read("c1")), assistant(read("c2")), assistant(edit("c3"))]
    assert.deepStrictEqual(await editsOf(session, firstMasked), { made: 1, masked: 0 })
  })

  it("the content of an earlier write shows the file", async () => {
    const write = call("c1", "write", { filePath: file, content }, "Wrote file successfully.")
    const session = [user("fix a.ts"), assistant(write), assistant(edit("c2"))]
    assert.deepStrictEqual(await editsOf(session, rewritingReads(() => "[pruned]")), { made: 1, masked: 0 })
  })

  it("a GPT model's apply_patch counts as an edit of each file it updates, its paths resolved in the directory", async () => {
    const text = ["*** Begin Patch", "*** Update File: src/a.ts", "@@", "-value0", "+first", "*** End Patch"].join("\n")
    const patch = call("c2", "apply_patch", { patchText: text }, "Success. Updated the following files:\nM src/a.ts")
    const session = [user("fix a.ts"), assistant(read("c1")), assistant(patch)]
    const masked = await editsOf(session, rewritingReads(() => "[pruned]"), false, "/p")
    assert.deepStrictEqual(masked, { made: 1, masked: 1 })
    assert.deepStrictEqual(await editsOf(session, noPlugin, false, "/p"), { made: 1, masked: 0 })
    assert.deepStrictEqual(await editsOf(session, noPlugin, false, "/elsewhere"), { made: 0, masked: 0 })
  })

  it("a GPT model's apply_patch that added the file shows it, until its patch is pruned", async () => {
    const patch = (...lines: Array<string>) => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n")
    const added = patch("*** Add File: src/a.ts", "+export const value0 = 0")
    const update = patch("*** Update File: src/a.ts", "@@", "-value0", "+first")
    const session = [
      user("add a.ts"),
      assistant(call("c1", "apply_patch", { patchText: added }, "Success. Updated the following files:\nA src/a.ts")),
      assistant(call("c2", "apply_patch", { patchText: update }, "Success. Updated the following files:\nM src/a.ts"))
    ]
    const prunesPatches: DrivenPlugin = {
      hooks: {
        "experimental.chat.messages.transform": async (_input, output) => {
          for (const message of output.messages) {
            for (const part of message.parts) {
              if (part.type === "tool" && part.tool === "apply_patch") part.state.input = { patchText: "[pruned]" }
            }
          }
        }
      },
      setTime: () => {}
    }
    assert.deepStrictEqual(await editsOf(session, noPlugin, false, "/p"), { made: 1, masked: 0 })
    assert.deepStrictEqual(await editsOf(session, prunesPatches, false, "/p"), { made: 1, masked: 1 })
  })

  it("an edit of a file the model never saw is not counted", async () => {
    const session = [user("fix b.ts"), assistant(read("c1")), assistant(edit("c2", "/p/src/b.ts"))]
    assert.deepStrictEqual(await editsOf(session, rewritingReads(() => "[pruned]")), { made: 0, masked: 0 })
  })

  it("a read OpenCode's compaction.prune cleared no longer shows the file", async () => {
    // At a turn's end, outputs older than the last two turns and past the newest 40,000 tokens of tool output are
    // cleared once more than 20,000 tokens can go.
    const big = "x".repeat(4 * 45_000)
    const session = [
      user("fix a.ts"),
      assistant(read("c1")),
      assistant(call("c2", "bash", { command: "make" }, big)),
      user("go on"),
      assistant(call("c3", "bash", { command: "make test" }, big)),
      user("and now"),
      assistant(call("c4", "bash", { command: "make lint" }, "ok")),
      user("fix it"),
      assistant(edit("c5"))
    ]
    assert.deepStrictEqual(await editsOf(session, noPlugin), { made: 1, masked: 0 })
    assert.deepStrictEqual(await editsOf(session, noPlugin, true), { made: 1, masked: 1 })
  })
})

describe("the model reading a masked file again before editing it", () => {
  /** A plugin that sends the outputs of the calls named as a placeholder, and does nothing else. */
  const masking = (...callIDs: Array<string>): DrivenPlugin => ({
    hooks: {
      "experimental.chat.messages.transform": async (_input, output) => {
        for (const message of output.messages) {
          for (const part of message.parts) {
            if (part.type === "tool" && part.state.status === "completed" && callIDs.includes(part.callID)) {
              part.state.output = "[pruned]"
            }
          }
        }
      }
    },
    setTime: () => {}
  })
  const reRead = (messages: ReadonlyArray<Msg>, plugin: DrivenPlugin) =>
    replay(messages, plugin, { reReadMasked: true })
  /** The tool calls of the last message of the last request sent: what the model answered before the edit. */
  const answered = (driven: Awaited<ReturnType<typeof reRead>>) =>
    driven.last?.messages.at(-1)?.parts.flatMap((part) =>
      part.type === "tool" && part.state.status === "completed"
        ? [{ tool: part.tool, input: part.state.input, output: part.state.output }]
        : []
    )

  it("costs one more request, whose history ends with the file read again as the model last read it", async () => {
    const session = [user("fix a.ts"), assistant(read("c1")), assistant(edit("c2"))]
    const driven = await reRead(session, masking("c1"))
    assert.deepStrictEqual(
      { requests: driven.priced.anthropic!.requests, reReads: driven.reReads, answered: answered(driven) },
      { requests: 3, reReads: 1, answered: [{ tool: "read", input: { filePath: file }, output: content }] }
    )
  })

  it("reads what a write wrote as the read tool shows a whole file", async () => {
    const written = "export const a = 1\nexport const b = 2"
    const write = call("c1", "write", { filePath: file, content: written }, "Wrote file successfully.")
    const masksWrites: DrivenPlugin = {
      hooks: {
        "experimental.chat.messages.transform": async (_input, output) => {
          for (const message of output.messages) {
            for (const part of message.parts) {
              if (part.type === "tool" && part.tool === "write") part.state.input = { filePath: file }
            }
          }
        }
      },
      setTime: () => {}
    }
    const driven = await reRead([user("add a.ts"), assistant(write), assistant(edit("c2"))], masksWrites)
    assert.deepStrictEqual(answered(driven), [{
      tool: "read",
      input: { filePath: file },
      output: [
        `<path>${file}</path>`,
        "<type>file</type>",
        "<content>",
        "1: export const a = 1",
        "2: export const b = 2",
        "",
        "(End of file - total 2 lines)",
        "</content>"
      ].join("\n")
    }])
  })

  it("is OpenCode's too when its compaction summarised the file's copy away", async () => {
    const log = (callID: string) => call(callID, "bash", { command: "make test" }, "x".repeat(48_000))
    const session = [
      user("fix a.ts"),
      assistant(read("c1")),
      assistant(log("c2")),
      assistant(log("c3")),
      assistant({ type: "text", text: "The tests fail in a.ts." }),
      assistant(edit("c4"))
    ]
    // A 20,000-token window: the second log fills it, and OpenCode compacts before the edit's request.
    const driven = await replay(session, noPlugin, {
      model: { providerID: "anthropic", modelID: "claude-sonnet-4-5", context: 20_000, output: 4_000 },
      compactAtOverflow: true,
      reReadMasked: true
    })
    assert.deepStrictEqual({ compactions: driven.compactions, edits: driven.edits, reReads: driven.reReads }, {
      compactions: 1,
      edits: { made: 1, masked: 1 },
      reReads: 1
    })
  })

  it("costs nothing when the file's content is in view", async () => {
    const session = [user("fix a.ts"), assistant(read("c1")), assistant(edit("c2"))]
    const driven = await reRead(session, masking())
    assert.deepStrictEqual({ requests: driven.priced.anthropic!.requests, reReads: driven.reReads }, {
      requests: 2,
      reReads: 0
    })
  })
})

describe("OpenCode's compaction", () => {
  /** Each request's input tokens, summary requests apart, on a 20,000-token window (16,000 usable) compacting. */
  const requestsOf = async (messages: ReadonlyArray<Msg>) => {
    const requests: Array<{ tokens: number; cost: number; summary: boolean }> = []
    const driven = await replay(messages, noPlugin, {
      model: { providerID: "anthropic", modelID: "claude-sonnet-4-5", context: 20_000, output: 4_000 },
      compactAtOverflow: true,
      onRequest: (costs, summary) => requests.push({ tokens: costs[0]!.tokens, cost: costs[0]!.cost, summary })
    })
    return Object.assign(requests, {
      summariesOverWindow: driven.summariesOverWindow,
      priced: driven.priced.anthropic!
    })
  }
  const failingTests = [
    user("run the tests"),
    assistant(call("c1", "bash", { command: "make test" }, "x".repeat(48_000))),
    assistant(call("c2", "bash", { command: "make test" }, "x".repeat(48_000))),
    assistant({ type: "text", text: "Both runs failed." }),
    user("look again"),
    assistant({ type: "text", text: "Looking." })
  ]

  it("sends the summariser the history before the kept tail as text, each tool result cut to 2,000 characters", async () => {
    const requests = await requestsOf(failingTests)
    const summaries = requests.filter((request) => request.summary)
    assert.lengthOf(summaries, 1)
    // The first log (12,000 tokens whole) is in it, cut to 2,000 characters; the second is in the kept tail.
    assert.isAbove(summaries[0]!.tokens, 2_000 / 4)
    assert.isBelow(summaries[0]!.tokens, 1_000)
    assert.isAbove(Math.max(...requests.map((request) => request.tokens)), 24_000)
  })

  it("prices the summary the model writes as output, at five times an input token", async () => {
    const requests = await requestsOf(failingTests)
    const input = requests.reduce((sum, request) => sum + request.cost, 0)
    assert.isAbove(requests.priced.outputTokens, 1_000)
    assert.closeTo(requests.priced.cost - input, 5 * requests.priced.outputTokens, 1e-6)
  })

  it("counts a summary request longer than the window, which a provider refuses: tool inputs go to it whole", async () => {
    const requests = await requestsOf([
      user("write the fixture"),
      assistant(call("c1", "write", { filePath: file, content: "y".repeat(100_000) }, "Wrote file successfully.")),
      assistant({ type: "text", text: "Written." }),
      user("now test it"),
      assistant({ type: "text", text: "Testing." })
    ])
    assert.isAbove(requests.find((request) => request.summary)!.tokens, 20_000)
    assert.strictEqual(requests.summariesOverWindow, 1)
  })
})

describe("a compaction the plugin asks for between turns", () => {
  /** A plugin that asks for a compaction at the end of each turn in `turns` (1 for the first), and does nothing else. */
  const askingAfter = (...turns: Array<number>): DrivenPlugin => {
    let ended = 0
    let asked = 0
    const hooks: Hooks = {
      event: async ({ event }) => {
        if (event.type === "session.idle" && turns.includes(++ended)) asked++
      }
    }
    return { hooks, setTime: () => {}, compactionsAsked: () => [asked, asked = 0][0]! }
  }
  const twoTurns = [
    user("run the tests"),
    assistant(call("c1", "bash", { command: "make test" }, "x".repeat(8_000))),
    assistant({ type: "text", text: "They failed." }),
    user("look again"),
    assistant({ type: "text", text: "Looking." })
  ]
  const requestsOf = async (plugin: DrivenPlugin) => {
    const requests: Array<{ tokens: number; summary: boolean }> = []
    const driven = await replay(twoTurns, plugin, {
      compactAtOverflow: true,
      onRequest: (costs, summary) => requests.push({ tokens: costs[0]!.tokens, summary })
    })
    return { requests, compactions: driven.compactions }
  }

  it("runs before the user's next prompt", async () => {
    const { compactions, requests } = await requestsOf(askingAfter(1))
    assert.strictEqual(compactions, 1)
    assert.deepStrictEqual(requests.map((request) => request.summary), [false, false, true, false])
  })

  it("is priced when asked at the end of the last turn too: OpenCode runs it whether the user comes back or not", async () => {
    const { compactions, requests } = await requestsOf(askingAfter(2))
    assert.strictEqual(compactions, 1)
    assert.deepStrictEqual(requests.map((request) => request.summary), [false, false, false, true])
  })
})

describe("OpenCode's system prompt", () => {
  /** What each request of a session started at `start` (local time), a second apart, read from the cache. */
  const readsFrom = async (start: Date) => {
    startAt(start.getTime())
    const messages = [
      user("read it"),
      assistant(call("c1", "read", { filePath: file }, "x".repeat(8_000))),
      assistant(call("c2", "glob", { pattern: "*.ts" }, "a.ts")),
      assistant({ type: "text", text: "Read." })
    ]
    const reads: Array<number> = []
    await replay(messages, noPlugin, {
      system: (time) => [`You are OpenCode.\nToday's date: ${new Date(time).toDateString()}`],
      onRequest: (costs) => reads.push(costs[0]!.readTokens)
    })
    return reads
  }

  it("carries the date of each request, so the first request after local midnight is written whole", async () => {
    assert.strictEqual((await readsFrom(new Date(2026, 10, 25, 23, 59, 57)))[2], 0)
  })

  it("reads the same day's requests from the cache", async () => {
    assert.isAbove((await readsFrom(new Date(2026, 10, 25, 12, 0, 0)))[2]!, 2_000)
  })
})
