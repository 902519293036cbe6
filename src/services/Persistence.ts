import {
  Clock,
  Context,
  Effect,
  Fiber,
  FileSystem,
  Layer,
  Option,
  Path,
  PlatformError,
  Random,
  Result,
  Schema,
  Semaphore
} from "effect"
import { whyUnreadable } from "../data/platformError.ts"
import {
  acquireFileLock,
  appendFile,
  quarantine,
  readFileIfExists,
  removeLeftovers,
  writeFileAtomic
} from "../state/disk.ts"
import { currentOwner } from "../state/owner.ts"
import { InvalidSessionId, sessionIdProblem } from "../host/sessionId.ts"
import { emptyLifetime, migrateV1, recordSessions, retireSession, sessionTotals } from "../state/lifetime.ts"
import { journalLine, readJournal, replay, StoredSession } from "../state/journal.ts"
import {
  LifetimeFile,
  LifetimeFileV1,
  type SessionChange,
  type SessionFile,
  type SessionTotals
} from "../state/schema.ts"
import { encodeStatus, type SessionStatus, statusDirName, statusFileName } from "../state/status.ts"
import { Paths } from "./Paths.ts"

export class PersistenceError extends Schema.TaggedError<PersistenceError>()("PersistenceError", {
  operation: Schema.Literals(["read", "write", "remove", "quarantine", "lock"]),
  path: Schema.String,
  cause: Schema.Defect()
}) {
  override get message() {
    const cause = this.cause instanceof Error ? this.cause.message : String(this.cause)
    return `Could not ${this.operation} ${this.path}: ${cause}`
  }
}

/** Why a state file could not be read or written, in words for a toast or an answer. */
export const reasonOf = (error: PersistenceError): string =>
  PlatformError.isPlatformError(error.cause)
    ? whyUnreadable(error.cause)
    : error.cause instanceof Error
    ? error.cause.message
    : String(error.cause)

/**
 * Lifetime totals live beside the session files under a name no session file can have: a session file is
 * `<sessionID>.json` and a session ID never contains ".".
 */
const lifetimeFileName = "lifetime.stats.json"
const sessionFileName = (sessionID: string) => `${sessionID}.json`
const journalFileName = (sessionID: string) => `${sessionID}.journal`

/** Durable per-session state and lifetime statistics, and the status files the terminal UI reads. */
export class Persistence extends Context.Service<Persistence, {
  /**
   * The session's file with its journal replayed (src/state/journal.ts); None when there is no state. A corrupt or
   * invalid file is moved aside (with a warning) and None returned; a journal line that is not a change is moved aside
   * with its journal, and the state is the one that line's write started from.
   */
  readonly load: (sessionID: string) => Effect.Effect<Option.Option<SessionFile>, InvalidSessionId | PersistenceError>
  /**
   * Replaces the session's state atomically and starts its journal afresh; returns the generation that `append`
   * continues.
   */
  readonly save: (file: SessionFile) => Effect.Effect<string, InvalidSessionId | PersistenceError>
  /**
   * Appends `change` to the journal of the state this process saved as `generation`: a write as large as the change.
   * A change after another process's save of the session is not replayed (the later whole write wins, as it would
   * without a journal).
   */
  readonly append: (
    sessionID: string,
    generation: string,
    change: SessionChange
  ) => Effect.Effect<void, InvalidSessionId | PersistenceError>
  /** Deletes the session's state (its lifetime totals are kept, retired); nothing to delete is fine. */
  readonly remove: (sessionID: string) => Effect.Effect<void, InvalidSessionId | PersistenceError>
  /**
   * Lifetime totals across all sessions, by session (`totalsOf` sums them); empty when nothing was recorded yet or the
   * file was corrupt. A file of version 1 is migrated first.
   */
  readonly lifetime: Effect.Effect<LifetimeFile, PersistenceError>
  /**
   * Records sessions' own totals (not increments: see `LifetimeFile`) without losing a concurrent update from another
   * OpenCode process; returns the new file.
   */
  readonly recordLifetime: (
    sessions: ReadonlyMap<string, SessionTotals>
  ) => Effect.Effect<LifetimeFile, PersistenceError>
  /**
   * The clean-up run at start, in the background: temporaries and locks that crashed processes left in the state
   * directory and its status folder, removed. Waits for it to finish and returns the names removed (relative to the
   * state directory).
   */
  readonly leftoversRemoved: Effect.Effect<ReadonlyArray<string>>
  /** Replaces the session's status for the terminal UI (src/state/status.ts) atomically. */
  readonly saveStatus: (status: SessionStatus) => Effect.Effect<void, InvalidSessionId | PersistenceError>
  /** Deletes the session's status; nothing to delete is fine. */
  readonly removeStatus: (sessionID: string) => Effect.Effect<void, InvalidSessionId | PersistenceError>
}>()("opencode-context-pruner/Persistence") {
  static readonly layer: Layer.Layer<Persistence, never, FileSystem.FileSystem | Path.Path | Paths> = Layer.effect(
    Persistence,
    Effect.gen(function*() {
      const paths = yield* Paths
      const path = yield* Path.Path
      const fs = yield* FileSystem.FileSystem
      const platform = yield* Effect.context<FileSystem.FileSystem | Path.Path>()
      const lifetimeFile = path.join(paths.stateDir, lifetimeFileName)
      const lockFile = `${lifetimeFile}.lock`
      // Fibers of this process queue here instead of polling the lock file against each other.
      const inProcess = yield* Semaphore.make(1)
      const self = yield* currentOwner

      const statusDir = path.join(paths.stateDir, statusDirName)
      const cleanUp = (dir: string) =>
        removeLeftovers(dir, self).pipe(
          Effect.tap((removed) =>
            removed.length === 0
              ? Effect.void
              : Effect.logInfo(`Removed what crashed processes left in ${dir}: ${removed.join(", ")}`)
          ),
          Effect.catch((error) =>
            Effect.logWarning(`Could not clean up ${dir}: ${error.message}`).pipe(Effect.as<ReadonlyArray<string>>([]))
          )
        )
      // Off the start-up path: the state directory may hold thousands of session files. Disposing waits for it
      // (milliseconds) rather than leaving the clean-up half done. Status files are written the same atomic way, and
      // more often, so a killed process leaves temporaries there too.
      const sweep = yield* Effect.all([cleanUp(paths.stateDir), cleanUp(statusDir)]).pipe(
        Effect.map(([state, status]) => [...state, ...status.map((name) => path.join(statusDirName, name))]),
        Effect.forkScoped
      )
      yield* Effect.addFinalizer(() => Fiber.await(sweep))

      const fail = (operation: PersistenceError["operation"], file: string) => (cause: unknown) =>
        new PersistenceError({ operation, path: file, cause })

      /** None when the file does not exist; a failure says what is wrong with its content. */
      const read = Effect.fnUntraced(function*<A>(
        file: string,
        decode: (text: string) => Effect.Effect<A, Schema.SchemaError>
      ) {
        const text = yield* readFileIfExists(file).pipe(Effect.mapError(fail("read", file)))
        if (Option.isNone(text)) return Option.none<Result.Result<A, string>>()
        const decoded = yield* Effect.result(decode(text.value))
        return Option.some(Result.mapError(decoded, (error) => describeIssue(error.message)))
      })

      const moveAside = Effect.fnUntraced(function*(file: string, problem: string) {
        const aside = yield* quarantine(file).pipe(Effect.mapError(fail("quarantine", file)))
        if (Option.isSome(aside)) {
          yield* Effect.logWarning(`State file ${file} is invalid and was moved to ${aside.value}: ${problem}`)
        }
      })

      const write = (file: string, text: Effect.Effect<string, Schema.SchemaError>) =>
        text.pipe(
          Effect.flatMap((content) => writeFileAtomic(file, content, self)),
          Effect.mapError(fail("write", file))
        )

      const sessionPath = (sessionID: string) => path.join(paths.stateDir, sessionFileName(sessionID))
      const journalPath = (sessionID: string) => path.join(paths.stateDir, journalFileName(sessionID))
      const statusPath = (sessionID: string) => path.join(statusDir, statusFileName(sessionID))

      const load = Effect.fn("Persistence.load")(function*(sessionID: string) {
        yield* validate(sessionID)
        const file = sessionPath(sessionID)
        const journal = journalPath(sessionID)
        const found = yield* read(file, decodeSession)
        const changes = yield* readFileIfExists(journal).pipe(Effect.mapError(fail("read", journal)))
        if (Option.isNone(found)) {
          if (Option.isSome(changes)) yield* moveAside(journal, "there is no session file to replay it over")
          return Option.none<SessionFile>()
        }
        const result = found.value
        if (Result.isFailure(result) || result.success.sessionID !== sessionID) {
          const problem = Result.isFailure(result)
            ? result.failure
            : `it holds session ${JSON.stringify(result.success.sessionID)}`
          yield* moveAside(file, problem)
          if (Option.isSome(changes)) yield* moveAside(journal, `its session file was invalid: ${problem}`)
          return Option.none<SessionFile>()
        }
        const { generation, ...stored } = result.success
        if (Option.isNone(changes)) return Option.some<SessionFile>(stored)
        const replayed = readJournal(changes.value, generation)
        if (replayed.invalid !== undefined) {
          yield* moveAside(
            journal,
            `line ${replayed.invalid.line}: ${describeIssue(replayed.invalid.issue)}; ` +
              `the ${replayed.changes.length} changes before it are kept`
          )
        } else if (replayed.torn) {
          yield* Effect.logInfo(`The last change in ${journal} was cut short and is not replayed`)
        }
        return Option.some(replay(stored, replayed.changes))
      }, Effect.provideContext(platform))

      const save = Effect.fn("Persistence.save")(function*(state: SessionFile) {
        yield* validate(state.sessionID)
        const generation = `${(yield* Random.nextIntBetween(0, 0x7fffffff)).toString(36)}${
          (yield* Random.nextIntBetween(0, 0x7fffffff)).toString(36)
        }`
        yield* write(sessionPath(state.sessionID), encodeSession({ ...state, generation }))
        // What the journal held is in the file now; a journal left by a failure here is of an older generation.
        const journal = journalPath(state.sessionID)
        yield* fs.remove(journal, { force: true }).pipe(Effect.mapError(fail("remove", journal)))
        return generation
      }, Effect.provideContext(platform))

      const append = Effect.fn("Persistence.append")(function*(
        sessionID: string,
        generation: string,
        change: SessionChange
      ) {
        yield* validate(sessionID)
        const journal = journalPath(sessionID)
        yield* appendFile(journal, journalLine(generation, change)).pipe(Effect.mapError(fail("write", journal)))
      }, Effect.provideContext(platform))

      /** Under the lock only: a reader outside it could quarantine the good file a writer just renamed in. */
      const readLifetimeOrReset = Effect.gen(function*() {
        const found = yield* read(lifetimeFile, decodeLifetime)
        if (Option.isNone(found)) return emptyLifetime
        if (Result.isFailure(found.value)) {
          yield* moveAside(lifetimeFile, found.value.failure)
          return emptyLifetime
        }
        const stored = found.value.success
        if (stored.version === 2) return stored
        const migrated = migrateV1(stored, yield* sessionsOnDisk, yield* Clock.currentTimeMillis)
        yield* write(lifetimeFile, encodeLifetime(migrated))
        yield* Effect.logInfo(`Lifetime totals in ${lifetimeFile} migrated to version 2`)
        return migrated
      })

      /** The totals of every session whose state file is on disk, for a migration; a file that does not decode is skipped. */
      const sessionsOnDisk = Effect.gen(function*() {
        const names = yield* fs.readDirectory(paths.stateDir).pipe(Effect.orElseSucceed(() => []))
        const found = new Map<string, SessionTotals>()
        for (const name of names) {
          if (!name.endsWith(".json") || name === lifetimeFileName) continue
          const file = yield* read(path.join(paths.stateDir, name), decodeSession).pipe(Effect.option)
          const decoded = Option.flatMap(Option.flatten(file), Option.liftPredicate(Result.isSuccess))
          if (Option.isSome(decoded)) {
            const session = decoded.value.success
            if (session.stats.calls > 0 || session.stats.tokens > 0) {
              found.set(session.sessionID, sessionTotals(session.stats))
            }
          }
        }
        return found
      })

      const locked = <A, E>(effect: Effect.Effect<A, E, FileSystem.FileSystem | Path.Path>) =>
        Effect.scoped(
          Effect.gen(function*() {
            yield* fs.makeDirectory(paths.stateDir, { recursive: true, mode: 0o700 }).pipe(
              Effect.mapError(fail("write", paths.stateDir))
            )
            yield* acquireFileLock(lockFile, self).pipe(Effect.mapError(fail("lock", lockFile)))
            return yield* effect
          })
        ).pipe(inProcess.withPermit)

      /** Replaces the lifetime file with `change` of it, under the lock. */
      const updateLifetime = (change: (file: LifetimeFile, now: number) => LifetimeFile) =>
        locked(Effect.gen(function*() {
          const current = yield* readLifetimeOrReset
          const next = change(current, yield* Clock.currentTimeMillis)
          if (next !== current) yield* write(lifetimeFile, encodeLifetime(next))
          return next
        }))

      const remove = Effect.fn("Persistence.remove")(function*(sessionID: string) {
        yield* validate(sessionID)
        for (const file of [sessionPath(sessionID), journalPath(sessionID)]) {
          yield* fs.remove(file, { force: true }).pipe(Effect.mapError(fail("remove", file)))
        }
        // A deleted session is never written again: its totals leave the per-session records, not the totals.
        const stored = yield* read(lifetimeFile, decodeLifetime)
        const known = Option.isSome(stored) && Result.isSuccess(stored.value) && stored.value.success.version === 2
          ? Object.hasOwn(stored.value.success.sessions, sessionID)
          : Option.isSome(stored)
        if (known) yield* updateLifetime((current, now) => retireSession(current, sessionID, now))
      }, Effect.provideContext(platform))

      const lifetime = Effect.gen(function*() {
        const found = yield* read(lifetimeFile, decodeLifetime)
        if (Option.isNone(found)) return emptyLifetime
        if (Result.isSuccess(found.value) && found.value.success.version === 2) return found.value.success
        return yield* locked(readLifetimeOrReset)
      }).pipe(Effect.provideContext(platform), Effect.withSpan("Persistence.lifetime"))

      const recordLifetime = Effect.fn("Persistence.recordLifetime")(function*(
        sessions: ReadonlyMap<string, SessionTotals>
      ) {
        return yield* updateLifetime((current, now) => recordSessions(current, sessions, now))
      }, Effect.provideContext(platform))

      const saveStatus = Effect.fn("Persistence.saveStatus")(function*(status: SessionStatus) {
        yield* validate(status.sessionID)
        yield* write(statusPath(status.sessionID), encodeStatus(status))
      }, Effect.provideContext(platform))

      const removeStatus = Effect.fn("Persistence.removeStatus")(function*(sessionID: string) {
        yield* validate(sessionID)
        const file = statusPath(sessionID)
        yield* fs.remove(file, { force: true }).pipe(Effect.mapError(fail("remove", file)))
      })

      return Persistence.of({
        load,
        save,
        append,
        remove,
        lifetime,
        recordLifetime,
        leftoversRemoved: Fiber.join(sweep),
        saveStatus,
        removeStatus
      })
    })
  )
}

const validate = (sessionID: string): Effect.Effect<void, InvalidSessionId> => {
  const problem = sessionIdProblem(sessionID)
  return problem === undefined ? Effect.void : Effect.fail(new InvalidSessionId({ sessionID, problem }))
}

/** A schema issue on one log line, bounded: a file can be far off the schema. */
const describeIssue = (message: string) => {
  const line = message.replace(/\s*\n\s*/g, " ")
  return line.length > 300 ? `${line.slice(0, 300)}...` : line
}

const decodeSession = Schema.decodeUnknownEffect(Schema.fromJsonString(StoredSession))
const encodeSession = Schema.encodeEffect(Schema.fromJsonString(StoredSession))
const decodeLifetime = Schema.decodeUnknownEffect(Schema.fromJsonString(Schema.Union([LifetimeFile, LifetimeFileV1])))
const encodeLifetime = Schema.encodeEffect(Schema.fromJsonString(LifetimeFile))
