import { mkdir, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { afterEach, assert, describe, it, vi } from "vitest"
import type { SessionStatus } from "../../src/state/status.ts"
import { useIsolatedHome } from "../support/plugin.ts"

// OpenCode's terminal UI hands a TUI plugin its own Solid and OpenTUI; here, stand-ins: elements are plain
// `{ type, props }` records and a signal is a variable, so a view is read by calling its accessors again.
vi.mock("solid-js", () => ({
  createSignal: <T>(value: T) => {
    let current = value
    return [
      () => current,
      (
        next: T | ((previous: T) => T)
      ) => (current = typeof next === "function" ? (next as (previous: T) => T)(current) : next)
    ]
  },
  createMemo: <T>(compute: () => T) => compute
}))
vi.mock("@opentui/solid/jsx-runtime", () => ({ jsx: (type: unknown, props: object) => ({ type, props }) }))

const { default: plugin } = await import("../../src/tui.ts")
const { createAlarm } = await import("../../src/tui/view.ts")

const root = useIsolatedHome("dcp-tui-plugin-")
const sessionID = "ses_tui0000000000000000001"

interface Element {
  readonly type: unknown
  readonly props: Record<string, unknown>
}

/** The text a view shows: its text elements, line by line, and the titles of a choice list. */
const textOf = (node: unknown): string => {
  if (node === null || node === undefined) return ""
  if (typeof node === "string") return node
  if (typeof node === "function") return textOf((node as () => unknown)())
  if (Array.isArray(node)) return node.map(textOf).filter((text) => text !== "").join("\n")
  const element = node as Element
  if (typeof element.type === "function") {
    return ((element.props.options ?? []) as ReadonlyArray<{ title: string }>).map((option) => option.title).join("\n")
  }
  return textOf(element.props.children)
}

/** Finds the element rendering `component` in a view. */
const findComponent = (node: unknown, component: unknown): Element | undefined => {
  if (node === null || node === undefined || typeof node === "string") return undefined
  if (typeof node === "function") return findComponent((node as () => unknown)(), component)
  if (Array.isArray(node)) {
    for (const child of node) {
      const found = findComponent(child, component)
      if (found !== undefined) return found
    }
    return undefined
  }
  const element = node as Element
  return element.type === component ? element : findComponent(element.props.children, component)
}

/**
 * Retries `check` until it passes: a view shows what the plugin read from the status file, which it reads in the
 * background. The time limit only guards against a hang (vi.waitFor's default, one second, is not enough on busy cores).
 */
const eventually = (check: () => void) => vi.waitFor(check, { timeout: 60_000, interval: 20 })

const theme = { text: "text", textMuted: "muted", warning: "warning" }

/** A stand-in for the host's plugin API that records what the plugin registers and asks for. */
const fakeApi = (
  options: { readonly broken?: boolean; readonly terminal?: { width: number; height: number } } = {}
) => {
  const slots: Array<{ slots: Record<string, (...args: Array<unknown>) => unknown> }> = []
  const layers: Array<{ commands: Array<{ name: string; slashName?: string; run: () => void }> }> = []
  const toasts: Array<{ variant?: string; message: string }> = []
  const commands: Array<unknown> = []
  const disposers: Array<() => unknown> = []
  let dialog: (() => unknown) | undefined
  const DialogSelect = () => null
  const api = {
    ...(options.terminal === undefined ? {} : { renderer: options.terminal }),
    slots: {
      register: (plugin: (typeof slots)[number]) => {
        if (options.broken) throw new Error("slots are broken")
        slots.push(plugin)
        return "id"
      }
    },
    keymap: {
      registerLayer: (layer: (typeof layers)[number]) => {
        layers.push(layer)
        return () => undefined
      }
    },
    event: { on: () => () => undefined },
    lifecycle: {
      onDispose: (dispose: () => unknown) => {
        disposers.push(dispose)
        return () => undefined
      }
    },
    route: { current: { name: "session", params: { sessionID } } },
    theme: { current: theme },
    state: {
      session: {
        get: () => ({ id: sessionID }),
        messages: () => [{ role: "user", agent: "build", model: { providerID: "fake", modelID: "fake-model" } }]
      }
    },
    ui: {
      toast: (toast: (typeof toasts)[number]) => void toasts.push(toast),
      dialog: { replace: (render: () => unknown) => void (dialog = render), setSize: () => undefined },
      DialogSelect
    },
    client: {
      session: {
        command: async (parameters: unknown) => {
          commands.push(parameters)
          return { data: { parts: [{ type: "text", text: "Restored the 1 pruned call.", ignored: true }] } }
        }
      }
    }
  }
  return { api, slots, layers, toasts, commands, disposers, DialogSelect, dialog: () => dialog }
}

const writeStatus = async (status: Partial<SessionStatus> = {}) => {
  const dir = join(root(), "data", "opencode", "storage", "plugin", "dcp", "status")
  await mkdir(dir, { recursive: true })
  const full: SessionStatus = {
    version: 1,
    sessionID,
    updatedAt: 1,
    pruned: { calls: 1, tokens: 800 },
    session: { calls: 1, tokens: 800, byReason: { deduplication: { calls: 1, tokens: 800 } } },
    recent: [{ id: 1, tool: "read", target: "src/a.ts", tokens: 800, reason: "deduplication" }],
    commands: true,
    ...status
  }
  await writeFile(join(dir, `${sessionID}.json`), JSON.stringify(full))
}

const start = async (host: ReturnType<typeof fakeApi>) => {
  await plugin.tui(host.api as never, undefined, {} as never)
  return host
}

let running: ReturnType<typeof fakeApi> | undefined
afterEach(async () => {
  for (const dispose of running?.disposers ?? []) await dispose()
  running = undefined
})

describe("the TUI part in the host", () => {
  it("registers a sidebar panel and a palette entry, and the panel shows the session's status file", async () => {
    await writeStatus()
    const host = running = await start(fakeApi())
    assert.deepStrictEqual(host.layers.flatMap((layer) => layer.commands.map((command) => command.name)), [
      "dcp.dialog"
    ])
    const panel = host.slots[0]!.slots.sidebar_content!({ theme: { current: theme } }, { session_id: sessionID })
    await eventually(() => assert.include(textOf(panel), "Pruned: 1 call, ~800 tokens"))
  })

  it("/dcp opens the dialog without asking the server for anything, and a choice runs the server's /dcp", async () => {
    await writeStatus()
    const host = running = await start(fakeApi())
    host.layers[0]!.commands[0]!.run()
    const view = host.dialog()!()
    await eventually(() => assert.include(textOf(view), "Pruned        1 call, ~800 tokens out of every request"))
    assert.deepStrictEqual(host.commands, [])
    const choices = findComponent(view, host.DialogSelect)!
    assert.strictEqual(textOf(choices), "Sweep\nRestore all\n1  read src/a.ts")
    ;(choices.props.onSelect as (option: { value: string }) => void)({ value: "restore all" })
    await eventually(() =>
      assert.deepStrictEqual(host.toasts.map((toast) => toast.message), ["Restored the 1 pruned call."])
    )
    assert.deepStrictEqual(host.commands, [
      { sessionID, command: "dcp", arguments: "restore all", agent: "build", model: "fake/fake-model" }
    ])
  })

  it("registers no slash command: the server's /dcp is the one entry of the prompt's autocomplete", async () => {
    const host = running = await start(fakeApi())
    assert.deepStrictEqual(
      host.layers.flatMap((layer) => layer.commands.map((command) => command.slashName)),
      [undefined]
    )
  })

  it("/dcp alone, as the prompt sends it, opens the dialog and never reaches the server", async () => {
    await writeStatus()
    const host = running = await start(fakeApi())
    const result = await host.api.client.session.command({ sessionID, command: "dcp", arguments: "" } as never)
    assert.deepStrictEqual(result, { data: undefined, error: undefined } as never)
    await eventually(() =>
      assert.include(textOf(host.dialog()!()), "Pruned        1 call, ~800 tokens out of every request")
    )
    assert.deepStrictEqual(host.commands, [])
  })

  it("/dcp with a subcommand, and any other command, still go to the server", async () => {
    const host = running = await start(fakeApi())
    await host.api.client.session.command({ sessionID, command: "dcp", arguments: "stats" } as never)
    await host.api.client.session.command({ sessionID, command: "review", arguments: "" } as never)
    assert.deepStrictEqual(host.commands, [
      { sessionID, command: "dcp", arguments: "stats" },
      { sessionID, command: "review", arguments: "" }
    ])
    assert.isUndefined(host.dialog())
  })

  it("unloading the TUI part gives the prompt its client back as it was", async () => {
    const host = await start(fakeApi())
    const replaced = host.api.client.session.command
    for (const dispose of host.disposers) await dispose()
    assert.notStrictEqual(host.api.client.session.command, replaced)
    await host.api.client.session.command({ sessionID, command: "dcp", arguments: "" } as never)
    assert.deepStrictEqual(host.commands, [{ sessionID, command: "dcp", arguments: "" }])
  })

  it("with no status file (no server part, or no request yet), offers nothing to run", async () => {
    const host = running = await start(fakeApi())
    host.layers[0]!.commands[0]!.run()
    const view = host.dialog()!()
    await eventually(() => assert.include(textOf(view), "No data yet"))
    assert.isUndefined(findComponent(view, host.DialogSelect))
  })

  it("a host API that throws leaves the host running: the plugin resolves and says why in a toast", async () => {
    const host = running = await start(fakeApi({ broken: true }))
    assert.lengthOf(host.toasts, 1)
    assert.strictEqual(host.toasts[0]!.variant, "warning")
    assert.include(host.toasts[0]!.message, "slots are broken")
  })

  it("the dialog's lines take the rows a short terminal leaves above its list, which keeps every choice on screen", async () => {
    await writeStatus()
    const host = running = await start(fakeApi({ terminal: { width: 80, height: 24 } }))
    host.layers[0]!.commands[0]!.run()
    const view = host.dialog()!()
    await eventually(() => assert.include(textOf(view), "Pruned        1 call"))
    const lines = findIntrinsic(view, "scrollbox")!
    // 24 rows: the dialog starts at row 7; its list of 3 choices in 2 categories takes 6 rows and 6 more for its frame.
    assert.strictEqual(lines.props.maxHeight, 3)
  })
})

/** Finds the first element of an intrinsic type (`"scrollbox"`) in a view. */
const findIntrinsic = (node: unknown, type: string): Element | undefined => {
  if (node === null || node === undefined || typeof node === "string") return undefined
  if (typeof node === "function") return findIntrinsic((node as () => unknown)(), type)
  if (Array.isArray(node)) {
    for (const child of node) {
      const found = findIntrinsic(child, type)
      if (found !== undefined) return found
    }
    return undefined
  }
  const element = node as Element
  return element.type === type ? element : findIntrinsic(element.props.children, type)
}

describe("the alarm that draws the views again when what they show expires", () => {
  afterEach(() => void vi.useRealTimers())

  it("rings once, at the time set", () => {
    vi.useFakeTimers()
    let rings = 0
    const alarm = createAlarm(() => rings++)
    alarm.set(Date.now() + 1_000)
    vi.advanceTimersByTime(999)
    assert.strictEqual(rings, 0)
    vi.advanceTimersByTime(1)
    assert.strictEqual(rings, 1)
    vi.advanceTimersByTime(10_000)
    assert.strictEqual(rings, 1)
  })

  it("keeps the earliest of the times set, and ignores a time already past", () => {
    vi.useFakeTimers()
    let rings = 0
    const alarm = createAlarm(() => rings++)
    alarm.set(Date.now() - 1)
    alarm.set(Date.now() + 5_000)
    alarm.set(Date.now() + 1_000)
    alarm.set(Date.now() + 3_000)
    vi.advanceTimersByTime(1_000)
    assert.strictEqual(rings, 1)
    vi.advanceTimersByTime(10_000)
    assert.strictEqual(rings, 1)
  })

  it("once stopped, never rings", () => {
    vi.useFakeTimers()
    let rings = 0
    const alarm = createAlarm(() => rings++)
    alarm.set(Date.now() + 1_000)
    alarm.stop()
    vi.advanceTimersByTime(10_000)
    assert.strictEqual(rings, 0)
  })
})
