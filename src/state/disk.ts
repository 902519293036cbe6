import { Clock, Effect, FileSystem, Option, Path, Random, Schedule, Schema, Scope } from "effect"
import type { PlatformError } from "effect/PlatformError"

/**
 * File primitives for state that must survive crashes and concurrent OpenCode processes: atomic replacement,
 * quarantine of unreadable files, and a lock file shared between processes.
 */

/** Owner read/write only: state files hold tool call IDs and statistics of the user's sessions. */
export const fileMode = 0o600
const directoryMode = 0o700

/** A name no other writer uses: two processes (or two fibers) never share a temporary or a lock token. */
const uniqueSuffix = Effect.gen(function*() {
  const a = yield* Random.nextIntBetween(0, 0x7fffffff)
  const b = yield* Random.nextIntBetween(0, 0x7fffffff)
  return `${process.pid}.${a.toString(36)}${b.toString(36)}`
})

/**
 * Replaces `target` with `content` so that a reader sees the old file or the new one, never a mix: the content is
 * written and flushed to a fresh temporary file beside the target, then renamed over it. The temporary is removed
 * when anything fails or the fiber is interrupted before the rename.
 */
export const writeFileAtomic = Effect.fnUntraced(function*(target: string, content: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  yield* fs.makeDirectory(path.dirname(target), { recursive: true, mode: directoryMode })
  const temporary = `${target}.${yield* uniqueSuffix}.tmp`
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
  /** A lock file older than this belongs to a process that died while holding it, and is broken. */
  readonly staleAfterMillis: number
  /** Give up waiting after this long; longer than `staleAfterMillis` so a dead holder's lock is always broken. */
  readonly timeoutMillis: number
}

export const defaultLockOptions: LockOptions = { staleAfterMillis: 5_000, timeoutMillis: 10_000 }

class LockBusy extends Schema.TaggedError<LockBusy>()("LockBusy", {}) {}

/**
 * Holds `lockFile` (created exclusively, so one holder at a time across processes) until the scope closes. Held
 * locks live for one read-modify-write, milliseconds; waiting polls with jitter so two waiters do not retry in step.
 */
export const acquireFileLock = (
  lockFile: string,
  options: LockOptions = defaultLockOptions
): Effect.Effect<void, LockTimeout | PlatformError, FileSystem.FileSystem | Scope.Scope> =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const token = yield* uniqueSuffix
    const attempt = fs.writeFileString(lockFile, token, { flag: "wx", mode: fileMode }).pipe(
      Effect.catchReason("PlatformError", "AlreadyExists", () =>
        breakIfStale(lockFile, options.staleAfterMillis).pipe(Effect.andThen(Effect.fail(new LockBusy()))))
    )
    yield* Effect.acquireRelease(attempt, () => releaseFileLock(lockFile, token)).pipe(
      Effect.retry({
        while: (error) => error._tag === "LockBusy",
        schedule: Schedule.spaced("4 millis").pipe(
          Schedule.jittered,
          Schedule.upTo({ duration: options.timeoutMillis })
        )
      }),
      Effect.catchTag("LockBusy", () =>
        Effect.fail(new LockTimeout({ lockFile, waitedMillis: options.timeoutMillis })))
    )
  })

/** Removes the lock only while it is still ours: after a stale break it may belong to another process. */
const releaseFileLock = (lockFile: string, token: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const held = yield* readFileIfExists(lockFile)
    if (Option.isSome(held) && held.value === token) yield* fs.remove(lockFile)
  }).pipe(
    Effect.catch((error) => Effect.logWarning(`Could not release lock ${lockFile}: ${error.message}`))
  )

/**
 * Breaks the lock when its holder is presumed dead. The lock is renamed aside first (only one breaker can win that)
 * and checked to be the file judged stale: if a live process took the lock in between, it is linked back.
 */
const breakIfStale = (lockFile: string, staleAfterMillis: number) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const seen = yield* fs.stat(lockFile)
    const now = yield* Clock.currentTimeMillis
    const modified = Option.match(seen.mtime, { onNone: () => now, onSome: (date) => date.getTime() })
    if (now - modified < staleAfterMillis) return
    const aside = `${lockFile}.${yield* uniqueSuffix}.stale`
    yield* fs.rename(lockFile, aside)
    const moved = yield* fs.stat(aside)
    const same = sameFile(seen, moved)
    if (!same) {
      yield* fs.link(aside, lockFile).pipe(Effect.catchReason("PlatformError", "AlreadyExists", () => Effect.void))
    } else {
      yield* Effect.logWarning(`Broke lock ${lockFile}: unchanged for ${now - modified} ms, its holder is gone`)
    }
    yield* fs.remove(aside, { force: true })
  }).pipe(
    // The lock vanished or changed under us: its holder released it, or another waiter broke it. Just retry.
    Effect.catchReason("PlatformError", "NotFound", () => Effect.void)
  )

const sameFile = (a: FileSystem.File.Info, b: FileSystem.File.Info) =>
  Option.getOrUndefined(a.ino) === Option.getOrUndefined(b.ino) &&
  Option.getOrUndefined(Option.map(a.mtime, (d) => d.getTime())) ===
    Option.getOrUndefined(Option.map(b.mtime, (d) => d.getTime()))
