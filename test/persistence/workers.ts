import { spawn } from "node:child_process"
import { Effect } from "effect"
import { childScript } from "../support/childScripts.ts"

interface WorkerExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * A child process running `script` on the same Node binary as the tests. `ready` completes once it prints "ready",
 * `go` writes a line to its stdin, `kill` sends SIGKILL (a crash: no finalizer runs), `exit` completes when it has
 * exited and been reaped. Killed if the scope closes before that.
 */
const spawnWorker = (script: string, args: ReadonlyArray<string>) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const child = spawn(process.execPath, [script, ...args], { stdio: ["pipe", "pipe", "pipe"] })
      let stdout = ""
      let stderr = ""
      const exit = new Promise<WorkerExit>((resolve) => {
        child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
        child.on("error", (error) => resolve({ code: null, signal: null, stdout, stderr: `${stderr}${String(error)}` }))
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
    ({ child }) => Effect.sync(() => child.exitCode === null && child.signalCode === null && child.kill("SIGKILL"))
  ).pipe(
    Effect.map(({ child, ready, exit }) => ({
      pid: child.pid!,
      ready: Effect.promise(() => ready),
      go: Effect.sync(() => child.stdin.end("go\n")),
      kill: Effect.sync(() => child.kill("SIGKILL")).pipe(Effect.andThen(Effect.promise(() => exit))),
      /** Whether it is still running (it has not exited, or not yet been reaped). */
      running: Effect.sync(() => child.exitCode === null && child.signalCode === null),
      exit: Effect.promise(() => exit)
    }))
  )

/** An OpenCode process recording lifetime totals `count` times, of `session` or of its own: see `lifetime-worker.ts`. */
export const spawnLifetimeWorker = (root: string, count: number, session?: string) =>
  spawnWorker(childScript("lifetime-worker"), [root, String(count), ...(session === undefined ? [] : [session])])

/**
 * An OpenCode process stopped in the middle of an atomic write, its temporary written and flushed but not yet renamed:
 * see `stalled-worker.ts`. `what` is "session" (a session file), "status" (a status file for the terminal UI) or
 * "lifetime" (lifetime totals, lock held).
 */
export const spawnStalledWorker = (root: string, what: "session" | "status" | "lifetime") =>
  spawnWorker(childScript("stalled-worker"), [root, what])

/** An OpenCode process making `requests` requests, each with a discard, in one session: see `session-worker.ts`. */
export const spawnSessionWorker = (root: string, requests: number) =>
  spawnWorker(childScript("session-worker"), [root, String(requests)])
