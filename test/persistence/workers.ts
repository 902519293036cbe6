import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"
import { Effect } from "effect"

const workerScript = fileURLToPath(new URL("./lifetime-worker.ts", import.meta.url))

export interface WorkerExit {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * A child process running `lifetime-worker.ts` on the same Node binary as the tests. `ready` completes once its
 * layer is built, `go` releases it, `exit` completes when it has exited. Killed if the scope closes before that.
 */
export const spawnLifetimeWorker = (root: string, count: number) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(process.execPath, [workerScript, root, String(count)], { stdio: ["pipe", "pipe", "pipe"] })
      let stdout = ""
      let stderr = ""
      const exit = new Promise<WorkerExit>((resolve) => {
        child.on("close", (code) => resolve({ code, stdout, stderr }))
        child.on("error", (error) => resolve({ code: null, stdout, stderr: `${stderr}${String(error)}` }))
      })
      const ready = new Promise<void>((resolve, reject) => {
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          stdout += chunk
          if (stdout.includes("ready\n")) resolve()
        })
        void exit.then((result) => reject(new Error(`worker exited before it was ready: ${result.stderr}`)))
      })
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr += chunk
      })
      return { child, ready, exit }
    }),
    ({ child }) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill())
  ).pipe(
    Effect.map(({ child, ready, exit }) => ({
      ready: Effect.promise(() => ready),
      go: Effect.sync(() => child.stdin.end("go\n")),
      exit: Effect.promise(() => exit)
    }))
  )
