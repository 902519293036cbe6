/**
 * One OpenCode run of the plugin, with nothing on the console but what the plugin itself writes:
 * `node quiet-run.ts <root>`. HOME and the XDG directories are set by the caller. The plugin is loaded through its
 * factory with a fake host and driven through every hook, with input good and bad, with debug on and a state file it
 * cannot read; then what OpenCode's log received is written to `<root>/host-log.json`. The script itself never writes
 * to stdout or stderr.
 */
import { mkdirSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import plugin from "../../src/plugin.ts"
import { fakeClient } from "../support/fakeClient.ts"

const root = process.argv[2]!
const project = join(root, "project")
const sessionID = "ses_quiet000000000000000001"
const unreadable = "ses_quiet000000000000000002"
mkdirSync(join(project, ".opencode"), { recursive: true })
writeFileSync(join(project, ".opencode", "dcp.jsonc"), `{ "debug": true, "unknownKey": 1 }`)
// A directory where a session's state file should be: reading it fails.
mkdirSync(join(process.env.XDG_DATA_HOME!, "opencode", "storage", "plugin", "dcp", `${unreadable}.json`), {
  recursive: true
})

const client = fakeClient()
const history = (session: string) => [
  {
    info: { id: "msg_u1", sessionID: session, role: "user", time: { created: 1 }, agent: "build" },
    parts: [{ id: "prt_1", type: "text", text: "go" }]
  },
  {
    info: { id: "msg_a1", sessionID: session, role: "assistant", time: { created: 2 } },
    parts: [
      { id: "prt_2", type: "step-start" },
      ...[1, 2].map((n) => ({
        id: `prt_t${n}`,
        type: "tool",
        callID: `call_${n}`,
        tool: "read",
        state: {
          status: "completed",
          input: { filePath: "a.ts" },
          output: "x\n".repeat(400),
          time: { start: 1, end: 2 }
        }
      }))
    ]
  }
]
const context = (session: unknown) => ({ sessionID: session, messageID: "msg_a1", agent: "build" })
const settle = (promise: unknown) => Promise.resolve(promise).catch(() => undefined)

const hooks = (await plugin({
  client: client as never,
  directory: project,
  worktree: project,
  project: {} as never,
  experimental_workspace: { register: () => undefined },
  serverUrl: new URL("http://localhost:4096"),
  $: {} as never
})) as Record<string, any>

for (const session of [sessionID, unreadable]) {
  await settle(hooks["experimental.chat.messages.transform"]({}, { messages: history(session) }))
  await settle(hooks["experimental.chat.system.transform"]({ sessionID: session }, { system: ["You are"] }))
  await settle(hooks["chat.message"]({ sessionID: session, agent: "build" }, {}))
  for (const name of ["discard", "recall", "extract"]) {
    await settle(hooks.tool[name].execute({ ids: ["noise", "1", { id: 2 }], distillation: ["a"] }, context(session)))
  }
  await settle(
    hooks["command.execute.before"]({ command: "dcp", sessionID: session, arguments: "stats" }, { parts: [] })
  )
  await settle(hooks.event({ event: { type: "session.idle", properties: { sessionID: session } } }))
}
await settle(hooks["experimental.chat.messages.transform"]({}, { messages: [{ garbage: true }] }))
for (const name of Object.keys(hooks)) {
  if (typeof hooks[name] === "function" && name !== "dispose") {
    await settle(hooks[name](null, null))
    await settle(hooks[name](undefined, undefined))
  }
}
await settle(hooks.tool.discard.execute(null, null))
await settle(hooks.dispose())
writeFileSync(
  join(root, "host-log.json"),
  JSON.stringify(client.calls.filter((call) => call.method === "app.log").map((call) => call.body))
)
