import { type ChildProcess, spawn } from "node:child_process"
import { cp, mkdir, writeFile } from "node:fs/promises"
import { join } from "node:path"

export const opencodeBinary = new URL("../../../node_modules/opencode-ai/bin/opencode.exe", import.meta.url).pathname

export interface OpenCodeOptions {
  /** A fresh temp directory: HOME, XDG dirs, TMPDIR and the project all live under it. */
  readonly root: string
  /** Value for the `plugin` list: a `file://` URL of the plugin package directory or module. */
  readonly plugin: string
  /** Base URL of the scripted model (`.../v1`). */
  readonly modelUrl: string
  /** Extra files in the project, relative path -> content. */
  readonly projectFiles?: Readonly<Record<string, string>>
  /** A `~/.config/opencode` prepared once (OpenCode installs `@opencode-ai/plugin` there on first start). */
  readonly configTemplate?: string
}

export interface OpenCode {
  readonly url: string
  readonly project: string
  readonly env: Readonly<Record<string, string>>
  readonly logs: () => string
  readonly api: <T = unknown>(method: string, path: string, body?: unknown) => Promise<{ status: number; data: T }>
  readonly stop: () => Promise<void>
}

export const isolatedEnv = (root: string): Record<string, string> => ({
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: join(root, "home"),
  XDG_CONFIG_HOME: join(root, "home", ".config"),
  XDG_DATA_HOME: join(root, "home", ".local", "share"),
  XDG_CACHE_HOME: join(root, "home", ".cache"),
  XDG_STATE_HOME: join(root, "home", ".local", "state"),
  TMPDIR: join(root, "tmp"),
  OPENCODE_DISABLE_MODELS_FETCH: "1",
  OPENCODE_DISABLE_AUTOUPDATE: "1",
  OPENCODE_DISABLE_SHARE: "1",
  OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
  OPENCODE_DISABLE_CLAUDE_CODE: "1",
  OPENCODE_DISABLE_EXTERNAL_SKILLS: "1"
})

export const openCodeConfig = (plugin: string, modelUrl: string) => ({
  $schema: "https://opencode.ai/config.json",
  model: "fake/fake-model",
  small_model: "fake/fake-small",
  permission: { "*": "allow" },
  autoupdate: false,
  share: "disabled",
  plugin: [plugin],
  provider: {
    fake: {
      npm: "@ai-sdk/openai-compatible",
      name: "Fake",
      options: { baseURL: modelUrl, apiKey: "x" },
      models: {
        "fake-model": { tool_call: true, limit: { context: 200000, output: 8192 } },
        "fake-small": { tool_call: false, limit: { context: 200000, output: 1024 } }
      }
    }
  }
})

/** Starts `opencode serve` for an isolated project; resolves once it listens. */
export const startOpenCode = async (options: OpenCodeOptions): Promise<OpenCode> => {
  const env = isolatedEnv(options.root)
  const project = join(options.root, "project")
  await mkdir(project, { recursive: true })
  await mkdir(env.TMPDIR!, { recursive: true })
  if (options.configTemplate !== undefined) {
    await cp(options.configTemplate, join(env.XDG_CONFIG_HOME!, "opencode"), { recursive: true })
  }
  await writeFile(join(project, "opencode.json"), JSON.stringify(openCodeConfig(options.plugin, options.modelUrl), null, 2))
  for (const [file, content] of Object.entries(options.projectFiles ?? {})) {
    await mkdir(join(project, file, ".."), { recursive: true })
    await writeFile(join(project, file), content)
  }
  const child: ChildProcess = spawn(opencodeBinary, ["serve", "--port", "0", "--hostname", "127.0.0.1", "--print-logs"], {
    cwd: project,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true
  })
  let output = ""
  child.stdout?.on("data", (chunk: Buffer) => void (output += chunk.toString()))
  child.stderr?.on("data", (chunk: Buffer) => void (output += chunk.toString()))
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`opencode did not start:\n${output.slice(-3000)}`)), 60_000)
    const check = () => {
      const match = /opencode server listening on (http:\/\/\S+)/.exec(output)
      if (match) {
        clearTimeout(timer)
        resolve(match[1]!)
      }
    }
    child.stdout?.on("data", check)
    child.stderr?.on("data", check)
    child.on("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`opencode exited with ${code}:\n${output.slice(-3000)}`))
    })
  })
  const api = async <T>(method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { "content-type": "application/json", "x-opencode-directory": project },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    let data: unknown = text
    try {
      data = JSON.parse(text)
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, data: data as T }
  }
  const stop = async () => {
    if (child.exitCode !== null || child.pid === undefined) return
    const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
    try {
      process.kill(-child.pid, "SIGTERM")
    } catch {
      return
    }
    const timeout = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL")
      } catch {
        // already gone
      }
    }, 5000)
    await exited
    clearTimeout(timeout)
  }
  return { url, project, env, logs: () => output, api, stop }
}
