import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { access, cp, mkdir, symlink, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { Effect, Option } from "effect"
import { Paths } from "../../../src/services/Paths.ts"
import { storedSessionAt } from "../../persistence/support.ts"
import { guardMs } from "./wait.ts"

export const opencodeBinary = new URL("../../../node_modules/opencode-ai/bin/opencode.exe", import.meta.url).pathname

export interface OpenCodeOptions {
  /** A fresh temp directory: HOME, XDG dirs, TMPDIR and the project all live under it. */
  readonly root: string
  /** Value for the `plugin` list: a `file://` URL of the plugin package directory or module; none when absent. */
  readonly plugin?: string
  /** Plugins listed before `plugin` (paths relative to the project), which OpenCode loads, and runs, first. */
  readonly pluginsBefore?: ReadonlyArray<string>
  /** Base URL of the scripted model (`.../v1`). */
  readonly modelUrl: string
  /** Extra files in the project, relative path -> content. */
  readonly projectFiles?: Readonly<Record<string, string>>
  /**
   * A `~/.config/opencode` prepared once (OpenCode installs `@opencode-ai/plugin` there on first start); its
   * node_modules is linked, not copied, and must stay unchanged.
   */
  readonly configTemplate?: string
  /** Files in `~/.config/opencode`, relative path -> content, written after the template is copied. */
  readonly globalFiles?: Readonly<Record<string, string>>
  /**
   * The main model's ID (default `fake-model`). OpenCode writes prompt-cache markers into the body for a model whose
   * ID names Claude (`claude-fake`), as it does for Anthropic's models.
   */
  readonly mainModel?: string
  /** More models of the scripted provider, which a prompt may pick instead of the main one (the same settings). */
  readonly otherModels?: ReadonlyArray<string>
  /** The context window of the main and other models (default 200,000 tokens; their output limit is 8,192). */
  readonly contextLimit?: number
  /** Variants the main and other models offer (no options of their own), which a prompt may pick. */
  readonly variants?: ReadonlyArray<string>
  /**
   * The wire between OpenCode and the scripted model (default `openai`): `anthropic` configures the provider with
   * `@ai-sdk/anthropic` (built into the binary, as `@ai-sdk/openai-compatible` is), so the bodies are Anthropic Messages
   * requests with `cache_control` on their blocks, exactly what Anthropic would receive.
   */
  readonly protocol?: Protocol
  /**
   * The project is the subdirectory `pkg` of a git repository (`project/`): OpenCode's worktree is then the
   * repository, its directory the subdirectory, as when a monorepo package is opened.
   */
  readonly inGitSubdirectory?: boolean
}

export type Protocol = "openai" | "anthropic"

export interface OpenCode {
  readonly url: string
  readonly project: string
  readonly env: Readonly<Record<string, string>>
  readonly logs: () => string
  readonly api: <T = unknown>(method: string, path: string, body?: unknown) => Promise<{ status: number; data: T }>
  readonly stop: () => Promise<void>
}

const isolatedEnv = (root: string): Record<string, string> => ({
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

const openCodeConfig = (
  plugins: ReadonlyArray<string>,
  modelUrl: string,
  mainModel = "fake-model",
  protocol: Protocol = "openai",
  otherModels: ReadonlyArray<string> = [],
  contextLimit = 200000,
  variants: ReadonlyArray<string> = []
) => ({
  $schema: "https://opencode.ai/config.json",
  model: `fake/${mainModel}`,
  small_model: "fake/fake-small",
  permission: { "*": "allow" },
  autoupdate: false,
  share: "disabled",
  plugin: plugins,
  provider: {
    fake: {
      // `@ai-sdk/anthropic` posts to `${baseURL}/messages`, `@ai-sdk/openai-compatible` to `${baseURL}/chat/completions`.
      npm: protocol === "anthropic" ? "@ai-sdk/anthropic" : "@ai-sdk/openai-compatible",
      name: "Fake",
      options: { baseURL: modelUrl, apiKey: "x" },
      models: {
        ...Object.fromEntries(
          [mainModel, ...otherModels].map((
            id
          ) => [id, {
            tool_call: true,
            limit: { context: contextLimit, output: 8192 },
            ...(variants.length === 0 ? {} : { variants: Object.fromEntries(variants.map((name) => [name, {}])) })
          }])
        ),
        "fake-small": { tool_call: false, limit: { context: 200000, output: 1024 } }
      }
    }
  }
})

const exists = (path: string) => access(path).then(() => true, () => false)

/**
 * Gives a config directory the result of OpenCode's first-start install, so OpenCode does not run it again (about
 * 10 s per directory). node_modules is linked: copying it costs seconds, and OpenCode only reads it. Skipped when
 * already done (a restart on the same HOME).
 */
const seedConfigDir = async (template: string, dir: string) => {
  if (await exists(join(dir, "node_modules"))) return
  await mkdir(dir, { recursive: true })
  for (const entry of ["package.json", "package-lock.json", ".gitignore"]) {
    await cp(join(template, entry), join(dir, entry))
  }
  await symlink(join(template, "node_modules"), join(dir, "node_modules"))
}

// Servers still running when the test process exits (servers shared by the files of a worker, a crashed worker, an
// interrupted run) are killed by their process group, so no `opencode serve` outlives the run.
const running = new Set<ChildProcess>()
process.once("exit", () => {
  for (const child of running) {
    try {
      process.kill(-child.pid!, "SIGKILL")
    } catch {
      // already gone
    }
  }
})
// vitest stops a worker with SIGTERM, which would end the process without running the "exit" handlers.
process.once("SIGTERM", () => process.exit(143))

/**
 * HOME, the XDG directories and TMPDIR under `root`, with the global config directory seeded from the template and
 * `globalFiles` written into it. Returns the environment OpenCode runs with.
 */
export const prepareHome = async (
  root: string,
  options: Pick<OpenCodeOptions, "configTemplate" | "globalFiles"> = {}
): Promise<Record<string, string>> => {
  const env = isolatedEnv(root)
  await mkdir(env.TMPDIR!, { recursive: true })
  const globalConfig = join(env.XDG_CONFIG_HOME!, "opencode")
  if (options.configTemplate !== undefined) await seedConfigDir(options.configTemplate, globalConfig)
  for (const [file, content] of Object.entries(options.globalFiles ?? {})) {
    await mkdir(join(globalConfig, file, ".."), { recursive: true })
    await writeFile(join(globalConfig, file), content)
  }
  return env
}

/** The project `<root>/project` (or its `pkg`, see `inGitSubdirectory`) with its `opencode.json` and files. */
export const prepareProject = async (
  root: string,
  options: Omit<OpenCodeOptions, "root" | "globalFiles">
): Promise<string> => {
  const repository = join(root, "project")
  const project = options.inGitSubdirectory === true ? join(repository, "pkg") : repository
  await mkdir(project, { recursive: true })
  if (options.inGitSubdirectory === true) execFileSync("git", ["init", "-q"], { cwd: repository, stdio: "ignore" })
  await writeFile(
    join(project, "opencode.json"),
    JSON.stringify(
      openCodeConfig(
        [...(options.pluginsBefore ?? []), ...(options.plugin === undefined ? [] : [options.plugin])],
        options.modelUrl,
        options.mainModel,
        options.protocol,
        options.otherModels,
        options.contextLimit,
        options.variants
      ),
      null,
      2
    )
  )
  for (const [file, content] of Object.entries(options.projectFiles ?? {})) {
    await mkdir(join(project, file, ".."), { recursive: true })
    await writeFile(join(project, file), content)
  }
  // A project `.opencode/` is a config directory too: OpenCode runs the same install there.
  if (options.configTemplate !== undefined && (await exists(join(project, ".opencode")))) {
    await seedConfigDir(options.configTemplate, join(project, ".opencode"))
  }
  return project
}

/**
 * Lays out an isolated world under `options.root`: HOME and XDG directories, the global config (from the template),
 * and the project with its `opencode.json` and files. Returns the environment OpenCode runs with and the project.
 */
export const prepareWorld = async (
  options: OpenCodeOptions
): Promise<{ env: Record<string, string>; project: string }> => ({
  env: await prepareHome(options.root, options),
  project: await prepareProject(options.root, options)
})

/**
 * A running `opencode serve`. One process serves any number of projects: each request names its project directory
 * (`x-opencode-directory`), and OpenCode keeps an instance, with its own config and plugins, per directory.
 */
export interface OpenCodeServer {
  readonly url: string
  readonly env: Readonly<Record<string, string>>
  readonly logs: () => string
  readonly api: <T = unknown>(
    project: string,
    method: string,
    path: string,
    body?: unknown
  ) => Promise<{ status: number; data: T }>
  readonly stop: () => Promise<void>
}

/** Starts `opencode serve` in `env` (see `prepareHome`); resolves once it listens. */
export const startServer = async (env: Readonly<Record<string, string>>, cwd: string): Promise<OpenCodeServer> => {
  const child: ChildProcess = spawn(
    opencodeBinary,
    ["serve", "--port", "0", "--hostname", "127.0.0.1", "--print-logs"],
    {
      cwd,
      env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true
    }
  )
  running.add(child)
  child.once("exit", () => running.delete(child))
  let output = ""
  child.stdout?.on("data", (chunk: Buffer) => void (output += chunk.toString()))
  child.stderr?.on("data", (chunk: Buffer) => void (output += chunk.toString()))
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
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
  const listening = new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`opencode did not start in ${guardMs} ms:\n${output.slice(-3000)}`)),
      guardMs
    )
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
  const url = await listening.catch(async (error: unknown) => {
    await stop()
    throw error
  })
  const send = (project: string, method: string, path: string, body: unknown) =>
    fetch(`${url}${path}`, {
      method,
      headers: { "content-type": "application/json", "x-opencode-directory": project },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  const api = async <T>(project: string, method: string, path: string, body?: unknown) => {
    const response = await send(project, method, path, body).catch((error: unknown) => {
      // Every server of a test file listens on 4096 when it is free, and fetch keeps connections alive per origin: the
      // first request to a new server can go out on a pooled connection to the one stopped before it, which the
      // kernel resets before anything is sent. A reset on connect is safe to send again.
      if ((error as { cause?: { code?: string } }).cause?.code !== "ECONNRESET") throw error
      return send(project, method, path, body)
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
  return { url, env, logs: () => output, api, stop }
}

/** One project of a running server, as its clients see it. */
export const projectOn = (server: OpenCodeServer, project: string): OpenCode => ({
  url: server.url,
  project,
  env: server.env,
  logs: server.logs,
  api: <T>(method: string, path: string, body?: unknown) => server.api<T>(project, method, path, body),
  stop: server.stop
})

/** Starts `opencode serve` for an isolated project; resolves once it listens. */
export const startOpenCode = async (options: OpenCodeOptions): Promise<OpenCode> => {
  const { env, project } = await prepareWorld(options)
  return projectOn(await startServer(env, project), project)
}

export interface RunResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * `opencode run --model fake/fake-model <args>` in an OpenCode's project, with its HOME and config: a second OpenCode
 * process, with its own in-process server, beside the running `opencode serve`. Standard input is empty. With
 * `attached`, the command is the same client of the running server (`--attach`), with no server of its own.
 */
export const runOpenCode = (
  opencode: OpenCode,
  args: ReadonlyArray<string>,
  attached = false
): Promise<RunResult> =>
  new Promise((resolve, reject) => {
    const attach = attached ? ["--attach", opencode.url, "--dir", opencode.project] : []
    const child: ChildProcess = spawn(opencodeBinary, ["run", ...attach, "--model", "fake/fake-model", ...args], {
      cwd: opencode.project,
      env: opencode.env,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true
    })
    running.add(child)
    let stdout = ""
    let stderr = ""
    child.stdout?.on("data", (chunk: Buffer) => void (stdout += chunk.toString()))
    child.stderr?.on("data", (chunk: Buffer) => void (stderr += chunk.toString()))
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL")
      } catch {
        // already gone
      }
      reject(new Error(`opencode run ${args.join(" ")} did not finish in ${guardMs} ms:\n${stderr.slice(-3000)}`))
    }, guardMs)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      running.delete(child)
      resolve({ code, stdout, stderr })
    })
  })

/** The plugin's state of `session` in this OpenCode as the plugin loads it (its file, its journal replayed). */
export const pluginState = (opencode: Pick<OpenCode, "env" | "project">, session: string) =>
  Effect.runPromise(
    storedSessionAt(Paths.layer({ directory: opencode.project }, opencode.env), session).pipe(
      Effect.map(Option.getOrUndefined)
    )
  )
