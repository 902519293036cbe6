import { execFile, execFileSync } from "node:child_process"
import { mkdir, readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { promisify } from "node:util"
import { opencodeBinary } from "./opencode.ts"
import { waitFor } from "./wait.ts"

const run = promisify(execFile)

/** OpenCode's terminal UI running in a detached tmux pane, read as text (`tmux capture-pane -p`). */
export interface Tui {
  readonly screen: () => Promise<string>
  /** The screen with its colours and attributes, as SGR escape sequences (`tmux capture-pane -e`). */
  readonly coloredScreen: () => Promise<string>
  /** Types text as keys, literally. */
  readonly type: (text: string) => Promise<void>
  /** Presses named keys (`Enter`, `Escape`, `Down`). */
  readonly press: (...keys: ReadonlyArray<string>) => Promise<void>
  /** Waits until the screen passes `test`; returns that screen. Giving up reports the last screen and stderr. */
  readonly waitForScreen: (what: string, test: (screen: string) => boolean) => Promise<string>
  /** Resizes the terminal (OpenCode lays its screen out again, as for a user resizing their window). */
  readonly resize: (columns: number, rows: number) => Promise<void>
  /** Saves the current screen under .e2e-cache/screens/ (for the record, and to look at a failure). */
  readonly save: (name: string) => Promise<string>
  readonly stop: () => Promise<void>
}

const repo = new URL("../../../", import.meta.url).pathname
/** A tmux server of this test process's own: nothing else's sessions are touched, and it goes with the process. */
const socket = `dcp-e2e-${process.pid}`
const tmux = (...args: ReadonlyArray<string>) => run("tmux", ["-L", socket, ...args], { encoding: "utf8" })

const sessions = new Set<string>()
process.once("exit", () => {
  for (const session of sessions) {
    try {
      execFileSync("tmux", ["-L", socket, "kill-session", "-t", session], { stdio: "ignore" })
    } catch {
      // already gone
    }
  }
})

const quote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`

/** The sidebar column of a 160-column screen: where OpenCode puts session details and plugins their panels. */
export const sidebarOf = (screen: string): string =>
  screen.split("\n").map((line) => line.slice(116).trim()).filter((line) => line !== "").join("\n")

/** One cell of a coloured screen: its character and the background it is drawn on (the SGR that set it). */
interface Cell {
  readonly char: string
  readonly background: string
}

/**
 * A coloured screen line (`coloredScreen`) as cells, one per column. Only what sets the background matters here: the
 * row OpenCode's choice lists highlight is drawn on another background than the dialog's.
 */
export const cellsOf = (line: string): Array<Cell> => {
  const cells: Array<Cell> = []
  let background = ""
  // ESC [ params m, built from its code point: a control character in a regex literal reads as a mistake.
  const sgr = new RegExp(`${String.fromCharCode(27)}\\[([\\d;]*)m`, "y")
  for (let i = 0; i < line.length;) {
    sgr.lastIndex = i
    const match = sgr.exec(line)
    if (match !== null) {
      const params = match[1] === "" ? ["0"] : match[1]!.split(";")
      for (let k = 0; k < params.length; k++) {
        const code = params[k]!
        if (code === "0" || code === "49") background = ""
        else if (code === "48") {
          const kind = params[k + 1]
          const length = kind === "2" ? 4 : 2
          background = params.slice(k, k + 1 + length).join(";")
          k += length
        } else if (code === "38") k += params[k + 1] === "2" ? 4 : 2
        else if (/^(4[0-7]|10[0-7])$/.test(code)) background = code
      }
      i = sgr.lastIndex
      continue
    }
    const char = String.fromCodePoint(line.codePointAt(i)!)
    cells.push({ char, background })
    i += char.length
  }
  return cells
}

/**
 * The highlighted choice of a dialog whose box spans `width` columns from `left`: the rows whose text within the box
 * matches `pattern` where it is drawn on another background than the box's own (its first column's), as that part of
 * the row. OpenCode's choice lists draw the highlighted row on the theme's primary colour.
 */
export const highlightedRows = (colored: string, pattern: RegExp, left: number, width: number): Array<string> =>
  colored.split("\n").flatMap((line) => {
    const cells = cellsOf(line).slice(left, left + width)
    const text = cells.map((cell) => cell.char).join("")
    const match = pattern.exec(text)
    if (match === null) return []
    const at = [...text.slice(0, match.index)].length
    return cells[at]?.background !== cells[0]?.background ? [text.trim()] : []
  })

/**
 * Starts `opencode` (the terminal UI) in `project` with exactly `env` (plus a terminal type), 160x48 unless told, and waits for
 * its prompt. stderr goes to a file beside the world, shown when a wait times out.
 */
export const startTui = async (options: {
  readonly name: string
  readonly env: Readonly<Record<string, string>>
  readonly project: string
  readonly args?: ReadonlyArray<string>
  /** Terminal columns (default 160, where OpenCode shows its sidebar). */
  readonly width?: number
  /** Terminal rows (default 48). */
  readonly height?: number
  /** When the terminal UI is ready for keys (default: its empty prompt, "Ask anything", is drawn). */
  readonly ready?: (screen: string) => boolean
}): Promise<Tui> => {
  const session = `${options.name}-${process.pid}-${sessions.size}`
  const stderr = join(options.env.TMPDIR ?? options.project, `${session}.stderr`)
  const variables = Object.entries({ ...options.env, TERM: "xterm-256color" }).map(([key, value]) => `${key}=${value}`)
  const command = `exec ${[opencodeBinary, ...(options.args ?? [])].map(quote).join(" ")} 2>${quote(stderr)}`
  const start = () =>
    tmux(
      "new-session",
      "-d",
      "-s",
      session,
      "-x",
      String(options.width ?? 160),
      "-y",
      String(options.height ?? 48),
      "-c",
      options.project,
      "env",
      "-i",
      ...variables,
      "sh",
      "-c",
      command
    )
  // tmux's server exits once its last session is gone (`stop`), and a session asked for meanwhile can reach the server
  // as it goes ("server exited unexpectedly", seen in CI between the two UIs of a restart): once it is gone, the next
  // one starts a server of its own.
  await start().catch(async (error: unknown) => {
    if (!String(error).includes("server exited unexpectedly")) throw error
    await waitFor("the exiting tmux server to be gone", () => tmux("list-sessions").then(() => false, () => true), 50)
    await start()
  })
  sessions.add(session)

  const screen = async () => {
    const captured = await tmux("capture-pane", "-p", "-t", session).catch((error: unknown) => ({
      stdout: `(no screen: ${String(error)})`
    }))
    return captured.stdout
  }
  const coloredScreen = async () => {
    const captured = await tmux("capture-pane", "-e", "-p", "-t", session).catch((error: unknown) => ({
      stdout: `(no screen: ${String(error)})`
    }))
    return captured.stdout
  }
  const stop = async () => {
    sessions.delete(session)
    await tmux("kill-session", "-t", session).catch(() => undefined)
  }
  const waitForScreen = async (what: string, test: (screen: string) => boolean) => {
    let last = ""
    try {
      return await waitFor(what, async () => {
        last = await screen()
        return test(last) ? last : undefined
      }, 200)
    } catch (error) {
      const errors = await readFile(stderr, "utf8").catch(() => "")
      throw new Error(
        `${String(error)}\n--- last screen ---\n${last}\n--- opencode stderr (tail) ---\n${errors.slice(-2000)}`
      )
    }
  }
  const tui: Tui = {
    screen,
    coloredScreen,
    type: async (text) => {
      await tmux("send-keys", "-t", session, "-l", text)
    },
    press: async (...keys) => {
      for (const key of keys) await tmux("send-keys", "-t", session, key)
    },
    waitForScreen,
    resize: async (columns, rows) => {
      await tmux("resize-window", "-t", session, "-x", String(columns), "-y", String(rows))
    },
    save: async (name) => {
      const dir = join(repo, ".e2e-cache", "screens")
      await mkdir(dir, { recursive: true })
      const file = join(dir, `${name}.txt`)
      await writeFile(file, await screen())
      return file
    },
    stop
  }
  // Keys typed before the prompt is drawn are lost. It takes 10-30 s; far longer on a machine busy with other work.
  await waitForScreen("the prompt of the terminal UI", options.ready ?? ((text) => text.includes("Ask anything")))
    .catch(
      async (error: unknown) => {
        await stop()
        throw error
      }
    )
  return tui
}
