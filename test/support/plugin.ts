/**
 * The real plugin factory as OpenCode calls it, under a temporary HOME and XDG directories, and the context OpenCode
 * hands a tool's `execute`.
 */
import type { ToolContext } from "@opencode-ai/plugin/tool"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, beforeEach } from "vitest"
import plugin from "../../src/plugin.ts"
import { fakeClient } from "./fakeClient.ts"
import { sessionID } from "./history.ts"

/**
 * Each test of the file gets a fresh root holding HOME, the XDG config and data directories and the project (under
 * `project/`); the environment is restored after it. Returns the current test's root.
 */
export const useIsolatedHome = (prefix: string): () => string => {
  let root = ""
  const saved = { ...process.env }
  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), prefix))
    process.env.HOME = join(root, "home")
    process.env.XDG_CONFIG_HOME = join(root, "config")
    process.env.XDG_DATA_HOME = join(root, "data")
    delete process.env.OPENCODE_CONFIG_DIR
  })
  afterEach(async () => {
    process.env = { ...saved }
    await rm(root, { recursive: true, force: true })
  })
  return () => root
}

/** The plugin's hooks, loaded for the project `<root>/project`. */
export const loadPlugin = (root: string, client: unknown = fakeClient()) =>
  plugin({
    client: client as never,
    directory: join(root, "project"),
    worktree: join(root, "project"),
    project: {} as never,
    experimental_workspace: { register: () => undefined },
    serverUrl: new URL("http://localhost:4096"),
    $: {} as never
  })

/** What OpenCode passes a tool's `execute` for a call in the test session. */
export const toolContext = (directory = "/project"): ToolContext => ({
  sessionID,
  messageID: "msg_tool",
  agent: "build",
  directory,
  worktree: directory,
  abort: new AbortController().signal,
  metadata: () => undefined,
  ask: async () => undefined
})
