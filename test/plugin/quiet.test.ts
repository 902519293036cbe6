import { spawn } from "node:child_process"
import { mkdtemp, readFile, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterEach, assert, describe, it } from "vitest"
import { childScript } from "../support/childScripts.ts"

/**
 * OpenCode owns the terminal: its UI draws over anything else written there. A whole run of the plugin, with every
 * hook given good and bad input and warnings to report (a global config directory that cannot be created, a config
 * problem, a state file that cannot be read, debug on), writes nothing to the process's stdout or stderr; the warnings
 * reach OpenCode's log instead.
 */
describe("the plugin and the terminal", () => {
  let root = ""
  afterEach(() => rm(root, { recursive: true, force: true }))

  it("a run writes nothing to stdout or stderr, and its warnings reach OpenCode's log", async () => {
    root = await mkdtemp(join(tmpdir(), "dcp-quiet-"))
    const child = spawn(process.execPath, [childScript("quiet-run"), root], {
      env: {
        ...process.env,
        HOME: join(root, "home"),
        // No directory can be created in /sys (Linux): the default config is not written, which is a warning.
        XDG_CONFIG_HOME: "/sys",
        XDG_DATA_HOME: join(root, "data"),
        OPENCODE_CONFIG_DIR: ""
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => void (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => void (stderr += chunk))
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve))

    assert.strictEqual(stdout, "")
    assert.strictEqual(stderr, "")
    assert.strictEqual(code, 0)
    const logged = JSON.parse(await readFile(join(root, "host-log.json"), "utf8")) as Array<
      { body: { message: string } }
    >
    assert.isTrue(logged.some((line) => line.body.message.includes("could not write the default config")))
  })
})
