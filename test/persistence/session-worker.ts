/**
 * One of two OpenCode processes working in the same session: `node session-worker.ts <root> <requests>`. Loads the
 * plugin through its factory (as OpenCode does) with a fake host, HOME and the XDG directories under `<root>`, prints
 * "ready" and waits for a line on stdin; then, request after request, the session grows by one tool output, which the
 * model discards, and the session goes idle (writing the session file and the lifetime totals). Both processes see the
 * same history, as two OpenCode processes showing one session do.
 */
import { createInterface } from "node:readline"
import { join } from "node:path"
import { fakeClient } from "../support/fakeClient.ts"
import { assistantOf, readHistory } from "./readHistory.ts"

const [root, requests] = process.argv.slice(2)
if (root === undefined || requests === undefined) throw new Error("usage: session-worker.ts <root> <requests>")
process.env.HOME = join(root, "home")
process.env.XDG_CONFIG_HOME = join(root, "config")
process.env.XDG_DATA_HOME = join(root, "data")
delete process.env.OPENCODE_CONFIG_DIR
const { default: plugin } = await import("../../src/plugin.ts")

const sharedSession = "ses_shared00000000000000001"
const project = join(root, "project")
const history = (calls: number) => readHistory(sharedSession, calls, (i) => join(project, `f${i}.ts`))

const hooks = (await plugin({
  client: fakeClient() as never,
  directory: project,
  worktree: project,
  project: {} as never,
  experimental_workspace: { register: () => undefined },
  serverUrl: new URL("http://localhost:4096"),
  $: {} as never
})) as Record<string, any>
const idle = { event: { type: "session.idle", properties: { sessionID: sharedSession } } }

process.stdout.write("ready\n")
await new Promise<void>((resolve) => createInterface({ input: process.stdin }).once("line", () => resolve()))
for (let calls = 1; calls <= Number(requests); calls++) {
  const messages = history(calls)
  await hooks["experimental.chat.messages.transform"]({}, { messages })
  const id = /^\[id (\d+)\]\n/.exec(messages[messages.length - 1].parts[1].state.output)?.[1]
  if (id !== undefined) {
    await hooks.tool.discard.execute({ ids: ["noise", id] }, {
      sessionID: sharedSession,
      messageID: assistantOf(calls),
      agent: "build"
    }).catch(() => undefined)
  }
  await hooks.event(idle)
}
// One more request delivers the last discard.
await hooks["experimental.chat.messages.transform"]({}, { messages: history(Number(requests)) })
await hooks.event(idle)
await hooks.dispose()
