/** Child processes of the benchmark scripts: run from the project root, output collected. */
import { spawn } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

export const root = fileURLToPath(new URL("..", import.meta.url))
/** Scratch output (git-ignored). */
export const work = join(root, ".bench")

export interface Finished {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * A replay dates each request's system prompt in the local time zone, as OpenCode does, so where a session crosses
 * midnight depends on it: replays run in UTC, for the same figures on every machine.
 */
const replayEnv: NodeJS.ProcessEnv = { ...process.env, TZ: "UTC" }

export const run = (
  command: string,
  argv: ReadonlyArray<string>,
  env: NodeJS.ProcessEnv = replayEnv
): Promise<Finished> =>
  new Promise((resolve, reject) => {
    const child = spawn(command, argv, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.on("error", reject)
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  })
