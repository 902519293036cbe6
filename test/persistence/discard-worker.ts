/**
 * An OpenCode process whose model discards each new tool output: `node discard-worker.ts <root> work <calls>` or
 * `node discard-worker.ts <root> check <calls> <acknowledged...>`. The plugin is loaded through its factory with a fake
 * host; HOME and the XDG directories are under `<root>`. The history is one session's, one tool call a turn, each turn's
 * assistant message holding the call and (as in OpenCode) the model's discard of it.
 *
 * `work`: from call <calls> + 1 on, for ever: the request, the discard of its newest output, `session.idle` (which
 * writes the session file); prints `call <i>` before and `ack <i>` once `session.idle` has returned: an acknowledged
 * discard. `check`: the next start: the request for the whole history of <calls> calls, then `recall` of each
 * acknowledged call; prints `{"kept": n, "lost": [i...]}`.
 */
import { join } from "node:path"
import { fakeClient } from "../support/fakeClient.ts"
import { assistantOf, pad, readHistory } from "./readHistory.ts"

const [root, role, calls, ...acknowledged] = process.argv.slice(2)
if (root === undefined || calls === undefined || (role !== "work" && role !== "check")) {
  throw new Error("usage: discard-worker.ts <root> work|check <calls> [acknowledged...]")
}
process.env.HOME = join(root, "home")
process.env.XDG_CONFIG_HOME = join(root, "config")
process.env.XDG_DATA_HOME = join(root, "data")
delete process.env.OPENCODE_CONFIG_DIR
const { default: plugin } = await import("../../src/plugin.ts")

const sessionID = "ses_crash000000000000000001"
const history = (count: number) => readHistory(sessionID, count, (i) => `/project/f${i}.ts`)

const hooks = (await plugin({
  client: fakeClient() as never,
  directory: "/project",
  worktree: "/project",
  project: {} as never,
  experimental_workspace: { register: () => undefined },
  serverUrl: new URL("http://localhost:4096"),
  $: {} as never
})) as Record<string, any>
const context = (i: number) => ({ sessionID, messageID: assistantOf(i), agent: "build" })
const idle = { event: { type: "session.idle", properties: { sessionID } } }
/** The stable ID the request gave call `i`: its output's tag, or its placeholder's recall number. */
const idOf = (messages: Array<any>, i: number) => {
  const part = messages.flatMap((message) => message.parts).find((part) => part.callID === `call_${pad(i)}`)
  const output = String(part?.state?.output)
  return /^\[id (\d+)\]\n/.exec(output)?.[1] ?? /recall (\d+)\]$/.exec(output)?.[1]
}

if (role === "work") {
  for (let i = Number(calls) + 1;; i++) {
    process.stdout.write(`call ${i}\n`)
    const messages = history(i)
    await hooks["experimental.chat.messages.transform"]({}, { messages })
    // A kill between the discard's write and its `ack` leaves it made but not acknowledged: the next run makes it again.
    await hooks.tool.discard.execute({ ids: ["noise", idOf(messages, i)] }, context(i)).catch((error: unknown) => {
      if (!String(error).includes("is already pruned")) throw error
    })
    await hooks.event(idle)
    process.stdout.write(`ack ${i}\n`)
  }
} else {
  const messages = history(Number(calls))
  await hooks["experimental.chat.messages.transform"]({}, { messages })
  const lost: Array<number> = []
  for (const i of acknowledged.map(Number)) {
    const recalled = await hooks.tool.recall.execute({ ids: [idOf(messages, i)] }, context(Number(calls))).then(
      () => true,
      () => false
    )
    if (!recalled) lost.push(i)
  }
  await hooks.dispose()
  process.stdout.write(`${JSON.stringify({ kept: acknowledged.length - lost.length, lost })}\n`)
}
