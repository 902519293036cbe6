import { Clock, Effect, FileSystem, Option, Path, Random, Schedule, Schema, type Scope } from "effect"
import type { PlatformError } from "effect/PlatformError"
import { type Liveness, liveness, type Owner, ownerTag, parseOwnerTag } from "./owner.ts"

/**
 * File primitives for state that must survive crashes and concurrent OpenCode processes: atomic replacement,
 * quarantine of unreadable files, a lock file shared between processes, and the removal of what a process killed
 * in the middle of a write or while holding the lock left behind.
 */

/** Owner read/write only: state files hold tool call IDs and statistics of the user's sessions. */
const fileMode = 0o600
const directoryMode = 0o700

/**
 * A name no other writer uses, that also names the writer: two processes (or two fibers) never share a temporary or
 * a lock token, and a temporary left by a crashed process can be told from one a live process is still writing.
 */
const uniqueSuffix = (owner: Owner) =>
  Effect.gen(function*() {
    const a = yield* Random.nextIntBetween(0, 0x7fffffff)
    const b = yield* Random.nextIntBetween(0, 0x7fffffff)
    return `${ownerTag(owner)}.${a.toString(36)}${b.toString(36)}`
  })

/**
 * Replaces `target` with `content` so that a reader sees the old file or the new one, never a mix: the content is
 * written and flushed to a fresh temporary file beside the target, `<target>.<owner>.<random>.tmp`, then renamed
 * over it. The temporary is removed when anything fails or the fiber is interrupted before the rename; one left by a
 * process killed meanwhile is removed by `removeLeftovers`.
 */
export const writeFileAtomic = Effect.fnUntraced(function*(target: string, content: string, owner: Owner) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  yield* fs.makeDirectory(path.dirname(target), { recursive: true, mode: directoryMode })
  const temporary = `${target}.${yield* uniqueSuffix(owner)}.tmp`
  const bytes = new TextEncoder().encode(content)
  yield* Effect.scoped(
    Effect.gen(function*() {
      // "wx": never write through a file or symlink that is already there.
      const file = yield* fs.open(temporary, { flag: "wx", mode: fileMode })
      yield* file.writeAll(bytes)
      yield* file.sync
    })
  ).pipe(
    Effect.andThen(fs.rename(temporary, target)),
    Effect.onError(() => fs.remove(temporary, { force: true }).pipe(Effect.ignore))
  )
})

/**
 * Appends `content` to `file` (created when missing) and flushes it. A write cut short leaves the file's earlier content
 * as it was and a last line without its end, which a reader of appended lines can tell from a whole one.
 */
export const appendFile = Effect.fnUntraced(function*(file: string, content: string) {
  const fs = yield* FileSystem.FileSystem
  yield* Effect.scoped(
    Effect.gen(function*() {
      const opened = yield* fs.open(file, { flag: "a", mode: fileMode })
      yield* opened.writeAll(new TextEncoder().encode(content))
      yield* opened.sync
    })
  )
})

/** Reads a file; None when it does not exist. */
export const readFileIfExists = Effect.fnUntraced(function*(file: string) {
  const fs = yield* FileSystem.FileSystem
  return yield* fs.readFileString(file).pipe(
    Effect.map(Option.some),
    Effect.catchReason("PlatformError", "NotFound", () => Effect.succeedNone)
  )
})

/** `2025-01-31T12-00-00-000Z`: sortable, and valid in file names on every platform. */
const fileTimestamp = (millis: number) => new Date(millis).toISOString().replace(/[:.]/g, "-")

/**
 * Moves an unreadable file aside to `<file>.corrupt-<time>`, keeping it for inspection. None when the file was
 * already gone (another process moved or replaced it first).
 */
export const quarantine = Effect.fnUntraced(function*(file: string) {
  const fs = yield* FileSystem.FileSystem
  const aside = `${file}.corrupt-${fileTimestamp(yield* Clock.currentTimeMillis)}`
  return yield* fs.rename(file, aside).pipe(
    Effect.as(Option.some(aside)),
    Effect.catchReason("PlatformError", "NotFound", () => Effect.succeedNone)
  )
})

export class LockTimeout extends Schema.TaggedError<LockTimeout>()("LockTimeout", {
  lockFile: Schema.String,
  waitedMillis: Schema.Number
}) {
  override get message() {
    return `Lock ${this.lockFile} is still held by another process after ${this.waitedMillis} ms`
  }
}

export interface LockOptions {
  /**
   * A lock whose holder cannot be checked (it runs on another machine, or this platform cannot tell a reused PID)
   * is presumed abandoned once unchanged this long. A lock whose holder is known to have exited is broken at once.
   */
  readonly staleAfterMillis: number
  /**
   * Give up waiting after this long. Held locks last one read-modify-write (milliseconds), so this only bounds the
   * wait behind a holder that is stuck, or behind an unverifiable one not yet stale: a later attempt breaks that.
   * It bounds how long writing lifetime totals, and so handling `session.idle`, can take.
   */
  readonly timeoutMillis: number
}

const defaultLockOptions: LockOptions = { staleAfterMillis: 5_000, timeoutMillis: 2_000 }

class LockBusy extends Schema.TaggedError<LockBusy>()("LockBusy", {}) {}

/**
 * Tokens of the locks this process holds. A lock naming this process that is not among them was leaked by an
 * earlier copy of the plugin in this process (or a copy loaded twice): it is judged by its age, like one of a
 * process that cannot be checked.
 */
const heldHere = new Set<string>()

/**
 * Holds `lockFile` (created exclusively, so one holder at a time across processes) until the scope closes. The lock
 * file holds a token naming its holder (`<owner>.<random>`), so a waiter can break it as soon as the holder has
 * exited. Waiting polls with jitter so two waiters do not retry in step.
 */
export const acquireFileLock = (
  lockFile: string,
  owner: Owner,
  options: LockOptions = defaultLockOptions
): Effect.Effect<void, LockTimeout | PlatformError, FileSystem.FileSystem | Scope.Scope> =>
  Effect.gen(function*() {
    const token = yield* uniqueSuffix(owner)
    const attempt = createWithContent(lockFile, token).pipe(
      Effect.andThen(Effect.sync(() => void heldHere.add(token))),
      Effect.catchReason("PlatformError", "AlreadyExists", () =>
        breakIfStale(lockFile, owner, options.staleAfterMillis).pipe(Effect.andThen(Effect.fail(new LockBusy()))))
    )
    yield* Effect.acquireRelease(attempt, () =>
      releaseFileLock(lockFile, token)).pipe(
        Effect.retry({
          while: (error) =>
            error._tag === "LockBusy",
          schedule: Schedule.spaced("4 millis").pipe(
            Schedule.jittered,
            Schedule.upTo({ duration: options.timeoutMillis })
          )
        }),
        Effect.catchTag(
          "LockBusy",
          () => Effect.fail(new LockTimeout({ lockFile, waitedMillis: options.timeoutMillis }))
        )
      )
  })

/**
 * Creates `file` holding `token`, failing with AlreadyExists when it exists, in one step: the token is written to a
 * temporary (named like an atomic write's, so a crash here leaves nothing the next start does not remove) and
 * hard-linked into place. Created with "wx" and then written, a lock file is empty for a moment, and a holder killed
 * in that moment would leave a lock naming no one, which only its age could break.
 */
const createWithContent = (file: string, token: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const temporary = `${file}.${token}.tmp`
    yield* fs.writeFileString(temporary, token, { flag: "wx", mode: fileMode })
    yield* fs.link(temporary, file).pipe(
      // A file system without hard links: fall back to the two-step creation.
      Effect.catchIf(
        (error) => error.reason._tag !== "AlreadyExists",
        () => fs.writeFileString(file, token, { flag: "wx", mode: fileMode })
      ),
      Effect.ensuring(fs.remove(temporary, { force: true }).pipe(Effect.ignore))
    )
  })

/** Removes the lock only while it is still ours: after a stale break it may belong to another process. */
const releaseFileLock = (lockFile: string, token: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    heldHere.delete(token)
    const held = yield* readFileIfExists(lockFile)
    if (Option.isSome(held) && held.value === token) yield* fs.remove(lockFile)
  }).pipe(
    Effect.catch((error) => Effect.logWarning(`Could not release lock ${lockFile}: ${error.message}`))
  )

/** The holder a lock token names; undefined for a token being written (empty) or written by an older release. */
const tokenOwner = (token: string): Owner | undefined => parseOwnerTag(token.slice(0, token.indexOf(".")))

/**
 * Breaks the lock when its holder has exited, or when it cannot be checked and the lock is older than
 * `staleAfterMillis`; true when it broke it. The lock is renamed aside first (only one breaker can win that) and
 * checked to be the file judged: if a live process took the lock in between, it is linked back.
 */
const breakIfStale = (lockFile: string, self: Owner, staleAfterMillis: number) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const seen = yield* fs.stat(lockFile)
    const token = Option.getOrElse(yield* readFileIfExists(lockFile), () => "")
    const holder = tokenOwner(token)
    const checked = yield* liveness(holder, self)
    const verdict: Liveness = checked === "running" && holder?.pid === self.pid && !heldHere.has(token)
      ? "presumed running"
      : checked
    if (verdict === "running") return false
    const now = yield* Clock.currentTimeMillis
    const age = now - Option.match(seen.mtime, { onNone: () => now, onSome: (date) => date.getTime() })
    if (verdict !== "gone" && age < staleAfterMillis) return false
    const aside = `${lockFile}.${yield* uniqueSuffix(self)}.stale`
    yield* fs.rename(lockFile, aside)
    const moved = yield* fs.stat(aside)
    const movedToken = Option.getOrElse(yield* readFileIfExists(aside), () => "")
    const same = sameFile(seen, moved) && movedToken === token
    if (!same) {
      yield* fs.link(aside, lockFile).pipe(Effect.catchReason("PlatformError", "AlreadyExists", () => Effect.void))
    } else {
      yield* Effect.logWarning(
        verdict === "gone"
          ? `Broke lock ${lockFile}: its holder, process ${holder?.pid} on this machine, is no longer running`
          : `Broke lock ${lockFile}: unchanged for ${age} ms, its holder is gone`
      )
    }
    yield* fs.remove(aside, { force: true })
    return same
  }).pipe(
    // The lock vanished or changed under us: its holder released it, or another waiter broke it. Just retry.
    Effect.catchReason("PlatformError", "NotFound", () => Effect.succeed(false))
  )

const sameFile = (a: FileSystem.File.Info, b: FileSystem.File.Info) =>
  Option.getOrUndefined(a.ino) === Option.getOrUndefined(b.ino) &&
  Option.getOrUndefined(Option.map(a.mtime, (d) => d.getTime())) ===
    Option.getOrUndefined(Option.map(b.mtime, (d) => d.getTime()))

export interface LeftoverOptions {
  /**
   * A temporary whose writer cannot be checked (another machine, or a name from an older release that records only
   * a PID) is removed once it is this old: writes take milliseconds, so no live writer is still at it by then.
   */
  readonly orphanAfterMillis: number
  readonly lock: LockOptions
}

const defaultLeftoverOptions: LeftoverOptions = { orphanAfterMillis: 60 * 60_000, lock: defaultLockOptions }

/**
 * The writer a leftover's name records: `<file>.<owner>.<random>.tmp` (an atomic write) or `.stale` (a lock being
 * broken). `owner` is undefined when the name does not say; the result is undefined for any other file.
 */
const leftoverWriter = (name: string): { readonly owner: Owner | undefined } | undefined => {
  const match = /\.([^.]+)\.[0-9a-z]+\.(?:tmp|stale)$/.exec(name)
  return match === null ? undefined : { owner: parseOwnerTag(match[1]!) }
}

/**
 * What crashed processes left in `dir`: temporaries of interrupted atomic writes, locks broken halfway, and locks
 * whose holder is gone. Removes those and returns their names. A temporary or lock of a process that is still
 * running (or may be) is never touched.
 */
export const removeLeftovers = Effect.fnUntraced(function*(
  dir: string,
  self: Owner,
  options: LeftoverOptions = defaultLeftoverOptions
) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const names = yield* fs.readDirectory(dir).pipe(
    Effect.catchReason("PlatformError", "NotFound", () => Effect.succeed<ReadonlyArray<string>>([]))
  )
  const removed: Array<string> = []
  for (const name of names) {
    const file = path.join(dir, name)
    const gone = yield* removeIfLeftover(file, name, self, options).pipe(
      Effect.catch((error) =>
        Effect.logWarning(`Could not remove leftover ${file}: ${error.message}`).pipe(Effect.as(false))
      )
    )
    if (gone) removed.push(name)
  }
  return removed as ReadonlyArray<string>
})

const removeIfLeftover = (file: string, name: string, self: Owner, options: LeftoverOptions) =>
  Effect.gen(function*() {
    if (name.endsWith(".lock")) return yield* breakIfStale(file, self, options.lock.staleAfterMillis)
    const writer = leftoverWriter(name)
    if (writer === undefined) return false
    const fs = yield* FileSystem.FileSystem
    const verdict = yield* liveness(writer.owner, self)
    if (verdict === "running" || verdict === "presumed running") return false
    if (verdict === "unknown") {
      const info = yield* fs.stat(file)
      const now = yield* Clock.currentTimeMillis
      const modified = Option.match(info.mtime, { onNone: () => now, onSome: (date) => date.getTime() })
      if (now - modified < options.orphanAfterMillis) return false
    }
    yield* fs.remove(file, { force: true })
    return true
  }).pipe(Effect.catchReason("PlatformError", "NotFound", () => Effect.succeed(false)))
