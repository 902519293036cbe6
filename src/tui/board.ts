import { type FSWatcher, watch } from "node:fs"
import { mkdir, readFile } from "node:fs/promises"
import { homedir } from "node:os"
import { join } from "node:path"
import { sessionIdProblem } from "../host/sessionId.ts"
import { type ReadStatus, readStatus, stateDirInDataHome, statusDirName, statusFileName } from "../state/status.ts"

/**
 * The TUI part's view of the status files the server part writes (src/state/status.ts). Plain code, no Effect
 * runtime: it runs inside OpenCode's terminal UI, where a thrown error would reach the host, so nothing here throws.
 */

/** What is known of a session's status: a file's content, or that there is none (yet). */
export type Loaded = ReadStatus | { readonly _tag: "missing" }

/**
 * Where the server part writes status files, found the way src/services/Paths.ts finds the state directory, from
 * the environment both parts share.
 */
export const statusDirectory = (env: Readonly<Record<string, string | undefined>> = process.env): string => {
  const home = env.HOME !== undefined && env.HOME !== "" ? env.HOME : homedir()
  const dataHome = env.XDG_DATA_HOME !== undefined && env.XDG_DATA_HOME !== ""
    ? env.XDG_DATA_HOME
    : join(home, ".local", "share")
  return join(dataHome, ...stateDirInDataHome, statusDirName)
}

/**
 * Reads one session's status file.
 *
 * @internal Exported for its tests (a file of another version, a broken one, an ID that would climb out of the folder);
 * the board reads through it.
 */
export const loadStatus = async (directory: string, sessionID: string): Promise<Loaded> => {
  if (sessionIdProblem(sessionID) !== undefined) return { _tag: "missing" }
  const text = await readFile(join(directory, statusFileName(sessionID)), "utf8").then(
    (content) => ({ content }),
    (error: unknown) => ({ error })
  )
  if ("error" in text) {
    const code = (text.error as { code?: unknown } | undefined)?.code
    return code === "ENOENT"
      ? { _tag: "missing" }
      : { _tag: "invalid", problem: text.error instanceof Error ? text.error.message : String(text.error) }
  }
  return readStatus(text.content)
}

export interface Board {
  /** The session's status as last read; undefined until the first read of it is done (which this starts). */
  readonly get: (sessionID: string) => Loaded | undefined
  /** Reads the session's status again now. */
  readonly refresh: (sessionID: string) => Promise<void>
  /** Reads every session asked for so far again: for hosts where watching the directory reports nothing. */
  readonly refreshAll: () => Promise<void>
  /** Called after every change of what `get` returns. */
  readonly subscribe: (listener: () => void) => () => void
  /** Settles once the directory is watched (or watching it failed, leaving `refresh` to callers). */
  readonly ready: Promise<void>
  readonly close: () => void
}

/**
 * Status of the sessions the UI asks for, kept current by watching the status directory: the server part replaces
 * a file (write, then rename) after each request, and the rename is the event.
 */
export const createBoard = (directory: string, options: { readonly watch?: boolean } = {}): Board => {
  const known = new Map<string, Loaded>()
  /** The newest read started per session: an older read that ends later must not overwrite it. */
  const reads = new Map<string, number>()
  const listeners = new Set<() => void>()
  let sequence = 0
  let watcher: FSWatcher | undefined
  let closed = false

  const notify = () => {
    for (const listener of [...listeners]) {
      try {
        listener()
      } catch {
        // A listener belongs to a view that may be gone; the others still hear of the change.
      }
    }
  }

  const refresh = async (sessionID: string) => {
    const read = ++sequence
    reads.set(sessionID, read)
    const loaded = await loadStatus(directory, sessionID).catch((error: unknown): Loaded => ({
      _tag: "invalid",
      problem: String(error)
    }))
    if (closed || reads.get(sessionID) !== read) return
    const before = known.get(sessionID)
    known.set(sessionID, loaded)
    if (before === undefined || JSON.stringify(before) !== JSON.stringify(loaded)) notify()
  }

  const startWatching = async () => {
    // The directory is created so it can be watched before the server part's first write.
    await mkdir(directory, { recursive: true, mode: 0o700 })
    if (closed) return
    watcher = watch(directory, (_event, name) => {
      // The writer renames `<sessionID>.json.<unique>.tmp` to `<sessionID>.json`. Node reports the new name, Bun
      // (1.3, OpenCode's) the old one: both start with the session's file name.
      const file = typeof name === "string" ? name : ""
      const end = file.indexOf(".json")
      if (end <= 0) return
      const sessionID = file.slice(0, end)
      // A session whose first read is still under way counts: that read may have opened the file this replaced.
      if (known.has(sessionID) || reads.has(sessionID)) void refresh(sessionID)
    })
    watcher.on("error", () => {
      watcher?.close()
      watcher = undefined
    })
  }
  const ready = options.watch === false ? Promise.resolve() : startWatching().catch(() => undefined)

  return {
    get: (sessionID) => {
      const loaded = known.get(sessionID)
      if (loaded === undefined && !reads.has(sessionID)) void refresh(sessionID)
      return loaded
    },
    refresh,
    refreshAll: async () => {
      await Promise.all([...known.keys()].map(refresh))
    },
    subscribe: (listener) => {
      listeners.add(listener)
      return () => void listeners.delete(listener)
    },
    ready,
    close: () => {
      closed = true
      watcher?.close()
      watcher = undefined
      listeners.clear()
    }
  }
}
