import { rmSync } from "node:fs"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, beforeEach } from "vitest"
import { type AnthropicRequest, type ModelServer, type RecordedRequest, startModelServer } from "./model-server.ts"
import {
  type OpenCode,
  type OpenCodeServer,
  prepareHome,
  prepareProject,
  projectOn,
  type Protocol,
  startServer
} from "./opencode.ts"
import { describeRequests } from "./requests.ts"
import { configTemplate } from "./template.ts"
import { waitFor } from "./wait.ts"

const repo = new URL("../../../", import.meta.url).pathname
const plugin = `file://${repo.replace(/\/$/, "")}`

/**
 * `DCP_E2E_DISABLED=1` switches the plugin off in every end-to-end file (`"enabled": false` in the global dcp.jsonc
 * of the scenarios here, and through `switched` in the project config of the files that set up a home of their own),
 * to show that the assertions fail without it: every test then fails but those named `control:`, each beside the
 * test it is the control of.
 */
const disabled = process.env.DCP_E2E_DISABLED === "1"

/** A project's plugin settings, with the plugin switched off under `DCP_E2E_DISABLED=1`. */
export const switched = (settings: object): object => (disabled ? { ...settings, enabled: false } : settings)

// The global dcp.jsonc of every scenario's HOME (except `freshHome`): one HOME, and so one `opencode serve`, serves
// them all; a scenario's own settings go in its project's `.opencode/dcp.jsonc`, read over this file. Automatic prunes
// are applied at once, so that a short script shows them; the default (`"auto"`) waits until they pay for a
// prompt-cache rebuild: the scenarios about that (settings.e2e.test.ts, cache.e2e.test.ts) set it back. The scripts
// read files twice to make duplicates, so repeats (pruned at their first send) are off here too.
export const globalConfig = {
  ...(disabled ? { enabled: false } : {}),
  cache: { mode: "immediate" },
  strategies: { repeats: { enabled: false } }
}

export interface ScenarioOptions {
  /** Project files, path relative to the project -> content. */
  readonly files?: Readonly<Record<string, string>>
  /**
   * No global dcp.jsonc, as on a machine where the plugin never ran (the scenario's settings, `enabled: false`
   * under DCP_E2E_DISABLED included, then belong in the project's `.opencode/dcp.jsonc`).
   */
  readonly freshHome?: boolean
  /** The main model's ID (default `fake-model`); `claude-fake` makes OpenCode write prompt-cache markers. */
  readonly mainModel?: string
  /** More models a prompt may go to (`prompt`'s `model`), set up as the main one is. */
  readonly otherModels?: ReadonlyArray<string>
  /** The models' context window (default 200,000 tokens); the scripted model refuses a request longer than it. */
  readonly contextLimit?: number
  /** Variants the models offer (`prompt`'s `variant`). */
  readonly variants?: ReadonlyArray<string>
  /** Project files holding plugins that the project's opencode.json lists before this one: OpenCode runs them first. */
  readonly pluginsBefore?: ReadonlyArray<string>
  /**
   * How OpenCode talks to the scripted model (default `openai`, recorded in `requests()`); `anthropic`: through
   * `@ai-sdk/anthropic`, recorded in `anthropicRequests()`.
   */
  readonly protocol?: Protocol
  /** The project is a subdirectory of a git repository (see `OpenCodeOptions.inGitSubdirectory`). */
  readonly inGitSubdirectory?: boolean
}

interface StoredPart {
  readonly type: string
  readonly text?: string
  readonly ignored?: boolean
  readonly synthetic?: boolean
}

interface StoredMessage {
  readonly info: {
    readonly id: string
    readonly role: string
    /** Assistant messages: a compaction's summary, and how the message ended. */
    readonly summary?: unknown
    readonly finish?: string
    readonly error?: unknown
  }
  readonly parts: ReadonlyArray<StoredPart>
}

interface ServerEvent {
  readonly type: string
  readonly properties: Record<string, unknown>
}

/** A live subscription to `GET /event`, collecting every event. */
interface EventStream {
  readonly events: ReadonlyArray<ServerEvent>
  readonly close: () => void
}

/**
 * One isolated project: its own directory (`root`, holding `project/`), its own scripted model, on an `opencode serve`
 * it shares with the other scenarios of the test file that set up HOME the same way (see `useScenario`).
 */
export interface Scenario {
  /** The directory holding the project, and nothing of another scenario's. */
  readonly root: string
  readonly model: ModelServer
  /** The project on the running server; HOME and the XDG directories are in its `env`. */
  readonly opencode: () => OpenCode
  /** Absolute path of a project file. */
  readonly path: (file: string) => string
  /** Main-model requests recorded since the current test began. */
  readonly requests: () => ReadonlyArray<RecordedRequest>
  /** Main-model Anthropic Messages requests recorded since the current test began (`protocol: "anthropic"`). */
  readonly anthropicRequests: () => ReadonlyArray<AnthropicRequest>
  readonly newSession: () => Promise<string>
  /**
   * Runs `body` with the plugin's clock `seconds` ahead of the system's (every scenario of the server, which is this
   * file's alone meanwhile), then puts it back: time passes for the plugin (a cache TTL runs out) without a wait, and
   * without the machine's speed deciding whether it did.
   */
  readonly clockAhead: <T>(seconds: number, body: () => Promise<T>) => Promise<T>
  /**
   * Runs one prompt (to `model`, one of `otherModels`, else the main model; with `variant`, one of `variants`; to
   * `agent`, else OpenCode's default);
   * OpenCode answers once the whole agent loop is done.
   */
  readonly prompt: (sessionID: string, text: string, model?: string, variant?: string, agent?: string) => Promise<void>
  /**
   * Runs a slash command (`POST /session/:id/command`) and answers with the HTTP status and body, whatever they are:
   * a command the plugin handles answers 200 with the stored note, an unknown one an error.
   */
  readonly command: (sessionID: string, command: string, args: string) => Promise<{ status: number; data: unknown }>
  /** Waits until the session's agent loop is not running (`GET /session/status`). */
  readonly waitIdle: (sessionID: string) => Promise<void>
  readonly messages: (sessionID: string) => Promise<ReadonlyArray<StoredMessage>>
  /** Waits for an ignored (never sent to the model) text part containing `includes`; returns its text. */
  readonly waitForNote: (sessionID: string, includes: string) => Promise<string>
  readonly subscribe: () => Promise<EventStream>
  /** Stops `opencode serve` and starts it again on the same HOME (the file's other scenarios' projects too). */
  readonly restart: () => Promise<void>
  readonly beginTest: () => void
  /** Prints what the model received during the current test and the OpenCode log tail. */
  readonly report: (title: string) => Promise<void>
  /** Stops the agent loops of the sessions created during the current test, so they cannot run into the next. */
  readonly abortSessions: () => Promise<void>
  readonly dispose: () => Promise<void>
}

/**
 * An `opencode serve` shared by the scenarios: starting OpenCode and its first prompt are most of a scenario's cost,
 * and a second project on a running server costs a fraction of that.
 */
interface SharedServer {
  readonly root: string
  /** The running process (a new one after a restart), and the logs of the processes before it. */
  current: OpenCodeServer
  earlierLogs: string
  /** Numbers the projects, each in a directory of its own. */
  projects: number
}

/**
 * This process's shared server. The tier's files share a process per worker (`isolate: false` in vitest.config.ts), one
 * after the other, so the server started for one file serves the later ones; the servers stop, and their directories
 * go, when the process exits.
 */
let shared: Promise<SharedServer> | undefined
const roots = new Set<string>()
process.once("exit", () => {
  for (const root of roots) rmSync(root, { recursive: true, force: true, maxRetries: 5 })
})

const startShared = async (globalFiles: Record<string, string>): Promise<SharedServer> => {
  const root = await mkdtemp(join(tmpdir(), "dcp-e2e-"))
  roots.add(root)
  const env = await prepareHome(root, { configTemplate: await configTemplate(), globalFiles })
  // The plugin's clock is the system's plus what this file holds (src/layers/main.ts): `Scenario.clockAhead`.
  const withClock = { ...env, DCP_TEST_CLOCK_FILE: join(root, "clock-offset") }
  return { root, current: await startServer(withClock, root), earlierLogs: "", projects: 0 }
}

const sharedServer = (): Promise<SharedServer> => {
  if (shared !== undefined) return shared
  const started = startShared({ "dcp.jsonc": `${JSON.stringify(globalConfig, null, 2)}\n` })
  shared = started
  // A later file tries again.
  started.catch(() => {
    if (shared === started) shared = undefined
  })
  return started
}

const startScenario = async (shared: SharedServer, options: ScenarioOptions): Promise<Scenario> => {
  const root = join(shared.root, `scenario-${++shared.projects}`)
  const model = await startModelServer(undefined, undefined, options.contextLimit)
  let project: string
  try {
    project = await prepareProject(root, {
      plugin,
      modelUrl: model.url,
      configTemplate: await configTemplate(),
      projectFiles: options.files ?? {},
      mainModel: options.mainModel,
      otherModels: options.otherModels,
      contextLimit: options.contextLimit,
      variants: options.variants,
      pluginsBefore: options.pluginsBefore,
      protocol: options.protocol,
      inGitSubdirectory: options.inGitSubdirectory
    })
  } catch (error) {
    await model.close()
    throw error
  }
  const opencode = () => projectOn(shared.current, project)
  let mark = 0
  let anthropicMark = 0
  let sessions: Array<string> = []
  const streams = new Set<AbortController>()

  const call = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await opencode().api<T>(method, path, body)
    if (response.status !== 200) {
      throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(response.data).slice(0, 2000)}`)
    }
    return response.data
  }
  const messages = (sessionID: string) => call<ReadonlyArray<StoredMessage>>("GET", `/session/${sessionID}/message`)
  const logs = () => shared.earlierLogs + shared.current.logs()

  return {
    root,
    model,
    opencode,
    path: (file) => join(project, file),
    requests: () => model.requests.slice(mark).filter((request) => model.main().includes(request)),
    anthropicRequests: () =>
      model.anthropic.requests.slice(anthropicMark).filter((request) => model.anthropic.main().includes(request)),
    clockAhead: async (seconds, body) => {
      const file = join(shared.root, "clock-offset")
      await writeFile(file, String(seconds * 1000))
      try {
        return await body()
      } finally {
        await rm(file, { force: true })
      }
    },
    newSession: async () => {
      const { id } = await call<{ id: string }>("POST", "/session", {})
      sessions.push(id)
      return id
    },
    prompt: async (sessionID, text, model, variant, agent) => {
      await call("POST", `/session/${sessionID}/message`, {
        model: { providerID: "fake", modelID: model ?? options.mainModel ?? "fake-model" },
        ...(variant === undefined ? {} : { variant }),
        ...(agent === undefined ? {} : { agent }),
        parts: [{ type: "text", text }]
      })
    },
    command: (sessionID, command, args) =>
      opencode().api("POST", `/session/${sessionID}/command`, {
        command,
        arguments: args,
        model: `fake/${options.mainModel ?? "fake-model"}`
      }),
    waitIdle: async (sessionID) => {
      await waitFor(`session ${sessionID} to be idle`, async () => {
        const statuses = await call<Record<string, { type?: string } | undefined>>("GET", "/session/status")
        const status = statuses[sessionID]
        return status === undefined || status.type === "idle"
      })
    },
    messages,
    waitForNote: (sessionID, includes) =>
      waitFor(`an ignored note containing ${JSON.stringify(includes)}`, async () => {
        const parts = (await messages(sessionID)).flatMap((message) => message.parts)
        return parts.find((part) => part.ignored === true && part.text?.includes(includes) === true)?.text
      }, 200),
    subscribe: async () => {
      const controller = new AbortController()
      streams.add(controller)
      const response = await fetch(`${shared.current.url}/event`, {
        headers: { accept: "text/event-stream", "x-opencode-directory": project },
        signal: controller.signal
      })
      const events: Array<ServerEvent> = []
      void (async () => {
        const decoder = new TextDecoder()
        let buffer = ""
        for await (const chunk of response.body!) {
          buffer += decoder.decode(chunk as Uint8Array, { stream: true })
          const lines = buffer.split("\n")
          buffer = lines.pop() ?? ""
          for (const line of lines) {
            if (line.startsWith("data:")) events.push(JSON.parse(line.slice(5)) as ServerEvent)
          }
        }
      })().catch(() => undefined)
      return {
        events,
        close: () => {
          controller.abort()
          streams.delete(controller)
        }
      }
    },
    restart: async () => {
      await shared.current.stop()
      shared.earlierLogs += `${shared.current.logs()}\n--- restarted ---\n`
      shared.current = await startServer(shared.current.env, shared.root)
    },
    beginTest: () => {
      mark = model.requests.length
      anthropicMark = model.anthropic.requests.length
      sessions = []
    },
    report: async (title) => {
      const requests = model.requests.slice(mark)
      const anthropicRequests = model.anthropic.requests.slice(anthropicMark)
      const file = join(repo, ".e2e-cache", "failures", `${title.replace(/[^\w.-]+/g, "_").slice(0, 80)}.json`)
      await mkdir(join(file, ".."), { recursive: true })
      await writeFile(file, JSON.stringify({ title, root, requests, anthropicRequests, logs: logs() }, null, 2))
      console.error([
        `=== e2e failure context: ${title}${disabled ? " (DCP_E2E_DISABLED=1)" : ""}`,
        `full request bodies and logs: ${file}`,
        `--- requests the model received during this test ---`,
        describeRequests(requests, mark),
        describeAnthropicRequests(anthropicRequests, anthropicMark),
        `--- opencode log tail ---`,
        logs().split("\n").slice(-60).join("\n")
      ].join("\n"))
    },
    abortSessions: async () => {
      for (const sessionID of sessions)
        await opencode().api("POST", `/session/${sessionID}/abort`).catch(() => undefined)
    },
    dispose: async () => {
      for (const controller of streams) controller.abort()
      // The project's OpenCode instance (its watchers, language servers) goes; the server stays for other projects.
      await opencode().api("POST", "/instance/dispose").catch(() => undefined)
      await model.close()
    }
  }
}

/** A compact rendering of Anthropic Messages requests for failure reports: one line per content block. */
const describeAnthropicRequests = (requests: ReadonlyArray<AnthropicRequest>, firstIndex: number): string =>
  requests.map((request, i) => {
    const head = `anthropic request #${firstIndex + i} (${request.model}, ${request.messages.length} messages, tools: ${
      (request.tools ?? []).map((tool) => tool.name).join(",")
    })`
    const lines = request.messages.flatMap((message) =>
      (typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content).map(
        (block) => `  ${message.role} ${block.type}: ${JSON.stringify(block).slice(0, 400)}`
      )
    )
    return [head, ...lines].join("\n")
  }).join("\n")

/**
 * One scenario shared by the tests of the enclosing `describe` (or file), which run one after the other, each in
 * its own session. A failing test prints what the model received during that test and the OpenCode log tail.
 *
 * The scenarios run on one `opencode serve`, each in a project of its own, also across the test files a worker runs.
 * What a test leaves in HOME (a global file) or does to the server (`restart`) is seen by the later scenarios on that
 * server: a test that writes a global file removes it. A `freshHome` scenario gets a server of its own, since the
 * plugin writes its global config there.
 */
export const useScenario = (options: ScenarioOptions = {}): () => Scenario => {
  let scenario: Scenario | undefined
  let own: SharedServer | undefined
  beforeAll(async () => {
    const server = options.freshHome === true ? (own = await startShared({})) : await sharedServer()
    scenario = await startScenario(server, options)
  })
  beforeEach((context) => {
    scenario?.beginTest()
    context.onTestFailed(async () => {
      await scenario?.report(context.task.name)
      await scenario?.abortSessions()
    })
  })
  afterAll(async () => {
    await scenario?.dispose()
    if (own === undefined) return
    await own.current.stop()
    await rm(own.root, { recursive: true, force: true })
    roots.delete(own.root)
  })
  return () => {
    if (scenario === undefined) throw new Error("the scenario did not start")
    return scenario
  }
}
