import { createHash } from "node:crypto"
import { hostname } from "node:os"
import { Effect, FileSystem, Option } from "effect"

/**
 * Which process wrote a temporary file or holds a lock, recorded in the file's name or content, so that a later
 * process can tell a writer that crashed from one that is still at work.
 */
export interface Owner {
  /**
   * The machine, as a short hash of its host name and (on Linux) its PID namespace: processes of another machine
   * sharing the home directory, or of another container, are never judged by this machine's process table.
   */
  readonly host: string
  readonly pid: number
  /**
   * When the process started, as the kernel counts it (Linux: clock ticks since boot, from `/proc/<pid>/stat`), so a
   * PID reused by a newer process is not taken for the original. Empty where the platform does not say.
   */
  readonly started: string
}

/** `<host>-<pid>-<started>`: only hex digits, digits and "-", so it fits in a file name and never contains ".". */
export const ownerTag = (owner: Owner): string => `${owner.host}-${owner.pid}-${owner.started}`

const tagShape = /^([0-9a-f]{12})-([1-9][0-9]{0,9})-([0-9]{0,20})$/

/** The owner a tag names; undefined for anything else (files named by an older release carry only a PID). */
export const parseOwnerTag = (tag: string): Owner | undefined => {
  const match = tagShape.exec(tag)
  if (match === null) return undefined
  const pid = Number(match[2])
  // PID 0 and negative PIDs address process groups: never signal those.
  if (pid < 1 || pid > 0x7fffffff) return undefined
  return { host: match[1]!, pid, started: match[3]! }
}

const hostHash = (name: string, pidNamespace: string): string =>
  createHash("sha256").update(`${name}\0${pidNamespace}`).digest("hex").slice(0, 12)

/** Process state and start time from `/proc/<pid>/stat`; None where there is no /proc or it hides the process. */
const procStat = (fs: FileSystem.FileSystem, pid: number) =>
  fs.readFileString(`/proc/${pid}/stat`).pipe(
    Effect.map((text) => {
      // The command name (field 2) is in parentheses and may itself contain spaces and parentheses.
      const fields = text.slice(text.lastIndexOf(")") + 2).split(" ")
      const state = fields[0]
      const started = fields[19]
      return state !== undefined && started !== undefined && /^[0-9]+$/.test(started)
        ? Option.some({ state, started })
        : Option.none()
    }),
    Effect.orElseSucceed(() => Option.none<{ state: string; started: string }>())
  )

/** This process. */
export const currentOwner: Effect.Effect<Owner, never, FileSystem.FileSystem> = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const pidNamespace = yield* fs.readLink("/proc/self/ns/pid").pipe(Effect.orElseSucceed(() => ""))
  const stat = yield* procStat(fs, process.pid)
  return {
    host: hostHash(hostname(), pidNamespace),
    pid: process.pid,
    started: Option.match(stat, { onNone: () => "", onSome: (s) => s.started })
  }
})

/**
 * - `running`: the owner is certainly alive (this process, or the same PID with the same start time);
 * - `presumed running`: a process with that PID runs, but nothing tells whether it is the owner or a newer process
 *   that reused the PID;
 * - `gone`: the owner has exited (no such process, a zombie, or the PID now belongs to a newer process);
 * - `unknown`: the owner ran on another machine, or its file does not name it.
 */
export type Liveness = "running" | "presumed running" | "gone" | "unknown"

/** `kill(pid, 0)`: true while a process with that PID exists, also one of another user (EPERM). */
const processExists = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as { code?: unknown }).code === "EPERM"
  }
}

/** Whether `owner` still runs, judged from `self` (this process). Never fails: what cannot be told is `unknown`. */
export const liveness = Effect.fnUntraced(function*(owner: Owner | undefined, self: Owner) {
  if (owner === undefined || owner.host !== self.host) return "unknown" satisfies Liveness
  if (owner.pid === self.pid) return owner.started === self.started ? "running" : "gone"
  if (!(yield* Effect.sync(() => processExists(owner.pid)))) return "gone"
  const stat = yield* procStat(yield* FileSystem.FileSystem, owner.pid)
  if (Option.isNone(stat)) return "presumed running"
  // Z: a zombie, dead but not yet reaped by its parent; X: dead.
  if (stat.value.state === "Z" || stat.value.state === "X") return "gone"
  if (owner.started === "") return "presumed running"
  return stat.value.started === owner.started ? "running" : "gone"
}) as (owner: Owner | undefined, self: Owner) => Effect.Effect<Liveness, never, FileSystem.FileSystem>
