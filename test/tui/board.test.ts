import { Effect, Layer } from "effect"
import { NodePath } from "@effect/platform-node"
import { execFileSync } from "node:child_process"
import { link, mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, beforeEach, describe, it } from "vitest"
import { Paths } from "../../src/services/Paths.ts"
import type { SessionStatus } from "../../src/state/status.ts"
import { createBoard, loadStatus, statusDirectory } from "../../src/tui/board.ts"

const sample = (sessionID: string, calls: number): SessionStatus => ({
  version: 1,
  sessionID,
  updatedAt: 1,
  pruned: { calls, tokens: calls * 100 },
  session: { calls, tokens: calls * 100, byReason: {} },
  recent: [],
  commands: true
})

let dir = ""
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "dcp-board-"))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** Writes a status file the way the server part does: a temporary file renamed over the target. */
const publish = async (directory: string, status: SessionStatus) => {
  await mkdir(directory, { recursive: true })
  const file = join(directory, `${status.sessionID}.json`)
  await writeFile(`${file}.tmp`, JSON.stringify(status))
  await rename(`${file}.tmp`, file)
}

describe("reading a status file", () => {
  it("no file: missing", async () => {
    assert.deepStrictEqual(await loadStatus(dir, "ses_a"), { _tag: "missing" })
  })

  it("a file the server part wrote: its status", async () => {
    await publish(dir, sample("ses_a", 2))
    assert.deepStrictEqual(await loadStatus(dir, "ses_a"), { _tag: "ok", status: sample("ses_a", 2) })
  })

  it("a file of another status version is told apart from a broken one", async () => {
    await writeFile(join(dir, "ses_a.json"), JSON.stringify({ ...sample("ses_a", 1), version: 2 }))
    await writeFile(join(dir, "ses_b.json"), "{ not json")
    assert.deepStrictEqual(await loadStatus(dir, "ses_a"), { _tag: "otherVersion", version: 2 })
    assert.strictEqual((await loadStatus(dir, "ses_b"))._tag, "invalid")
  })

  it("a session ID that could leave the directory is never read", async () => {
    await writeFile(join(dir, "secret.json"), JSON.stringify(sample("secret", 1)))
    assert.deepStrictEqual(await loadStatus(join(dir, "status"), "../secret"), { _tag: "missing" })
  })
})

describe("the board", () => {
  it("follows a file replaced while the session's first read is still under way", async () => {
    const board = createBoard(dir)
    const file = join(dir, "ses_a.json")
    // The file the first read opens is a pipe, so that read cannot end before the file is replaced; a second name
    // for the pipe lets the test end it afterwards.
    execFileSync("mkfifo", [file])
    const pipe = join(dir, "first-read.pipe")
    await link(file, pipe)
    try {
      await board.ready
      const first = board.refresh("ses_a")
      const replaced = new Promise<void>((resolve) => {
        const off = board.subscribe(() => {
          off()
          resolve()
        })
      })
      await publish(dir, sample("ses_a", 3))
      await replaced
      await writeFile(pipe, JSON.stringify(sample("ses_a", 1)))
      await first
      assert.deepStrictEqual(board.get("ses_a"), { _tag: "ok", status: sample("ses_a", 3) })
    } finally {
      board.close()
    }
  })

  it("follows a session's file as the server part replaces it", async () => {
    const board = createBoard(dir)
    try {
      const changed = () =>
        new Promise<void>((resolve) => {
          const off = board.subscribe(() => {
            off()
            resolve()
          })
        })
      const first = changed()
      assert.isUndefined(board.get("ses_a"))
      await first
      await board.ready
      assert.deepStrictEqual(board.get("ses_a"), { _tag: "missing" })
      const second = changed()
      await publish(dir, sample("ses_a", 3))
      await second
      assert.deepStrictEqual(board.get("ses_a"), { _tag: "ok", status: sample("ses_a", 3) })
    } finally {
      board.close()
    }
  })

  it("reads where the server part writes: the state directory Paths resolves, from the same environment", async () => {
    const env = { HOME: join(dir, "home"), XDG_DATA_HOME: join(dir, "data") }
    const stateDir = Effect.runSync(
      Paths.use((paths) => Effect.succeed(paths.stateDir)).pipe(
        Effect.provide(Paths.layer({ directory: join(dir, "project") }, env).pipe(Layer.provide(NodePath.layer)))
      )
    )
    assert.strictEqual(statusDirectory(env), join(stateDir, "status"))
    assert.strictEqual(
      statusDirectory({ HOME: env.HOME }),
      join(env.HOME, ".local", "share", "opencode", "storage", "plugin", "dcp", "status")
    )
  })
})
