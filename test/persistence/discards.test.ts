import { spawn } from "node:child_process"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createInterface } from "node:readline"
import { afterEach, assert, describe, it } from "vitest"
import { childScript } from "../support/childScripts.ts"

/** mulberry32: the moments of the kills are random, and the same on every run. */
const seeded = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/**
 * A model's discard acknowledged before OpenCode is killed (the tool answered and `session.idle`, which writes the
 * session file, returned) is still in effect after the restart: `recall` finds it pruned. Only an undo of its turn takes
 * it back (test/pipeline/revert.test.ts): the kill loop's history once lacked the message holding the discards, so the
 * undo rule withdrew them at every restart, which looked like prunes lost in the crashes.
 *
 * Each run of a worker is killed with SIGKILL at a moment chosen by reading its output: after a random number of
 * further lines once it has acknowledged a random number of discards, so the kill lands wherever the worker is by then
 * (mid-request, mid-write, between turns). Nothing here waits on time.
 */
describe("acknowledged discards and crashes", () => {
  let root = ""
  afterEach(() => rm(root, { recursive: true, force: true }))

  it("every discard acknowledged before a SIGKILL is still in effect after the restart", async () => {
    root = await mkdtemp(join(tmpdir(), "dcp-discards-"))
    // No automatic rule prunes or folds here: what is pruned at the end was pruned by a discard, and its placeholder
    // (with the number recall takes) is in the request.
    await mkdir(join(root, "config", "opencode"), { recursive: true })
    await writeFile(
      join(root, "config", "opencode", "dcp.jsonc"),
      JSON.stringify({
        strategies: Object.fromEntries(
          ["deduplication", "supersedeWrites", "purgeErrors", "staleOutputs", "repeats", "fold"].map((name) => [
            name,
            { enabled: false }
          ])
        )
      })
    )
    const worker = childScript("discard-worker")
    const random = seeded(48)
    const acknowledged: Array<number> = []
    let calls = 0
    for (let kill = 0; kill < 5; kill++) {
      const child = spawn(process.execPath, [worker, root, "work", String(calls)], {
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stderr = ""
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => void (stderr += chunk))
      const exited = new Promise<NodeJS.Signals | null>((resolve) =>
        child.on("close", (_code, signal) => resolve(signal))
      )
      const acksBeforeKill = 1 + Math.floor(random() * 4)
      let linesAfter = Math.floor(random() * 4)
      let acks = 0
      for await (const line of createInterface({ input: child.stdout })) {
        const [what, n] = line.split(" ")
        if (what === "call") calls = Math.max(calls, Number(n))
        if (what === "ack") {
          acknowledged.push(Number(n))
          acks++
        }
        if (acks >= acksBeforeKill && linesAfter-- <= 0) {
          child.kill("SIGKILL")
          break
        }
      }
      assert.strictEqual(await exited, "SIGKILL", stderr)
    }

    const check = spawn(process.execPath, [worker, root, "check", String(calls), ...acknowledged.map(String)], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    check.stdout.setEncoding("utf8").on("data", (chunk: string) => void (stdout += chunk))
    check.stderr.setEncoding("utf8").on("data", (chunk: string) => void (stderr += chunk))
    assert.strictEqual(await new Promise((resolve) => check.on("close", resolve)), 0, stderr)

    assert.isAtLeast(acknowledged.length, 5)
    assert.deepStrictEqual(JSON.parse(stdout), { kept: acknowledged.length, lost: [] })
  }, 180_000)
})
