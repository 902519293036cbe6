import { Clock, Context, Effect, Fiber, FileSystem, Layer, Option, Path, Ref, Result, Schema, Semaphore } from "effect"
import { acquireFileLock, quarantine, readFileIfExists, removeLeftovers, writeFileAtomic } from "../state/disk.ts"
import { currentOwner } from "../state/owner.ts"
import {
  type LifetimeDelta,
  LifetimeFile,
  SessionFile,
  sessionIdProblem,
  sessionIdRule,
  type Tally
} from "../state/schema.ts"
import { encodeStatus, type SessionStatus, statusDirName, statusFileName } from "../state/status.ts"
import { Paths } from "./Paths.ts"

export class InvalidSessionId extends Schema.TaggedError<InvalidSessionId>()("InvalidSessionId", {
  sessionID: Schema.String,
  problem: Schema.String
}) {
  override get message() {
    const shown = this.sessionID.length > 80
      ? `${JSON.stringify(this.sessionID.slice(0, 80))}...`
      : JSON.stringify(this.sessionID)
    return `Invalid session ID ${shown}: ${this.problem}. A session ID is ${sessionIdRule}.`
  }
}

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

/**
 * Lifetime totals live beside the session files under a name no session file can have: a session file is
 * `<sessionID>.json` and a session ID never contains ".".
 */
export const lifetimeFileName = "lifetime.stats.json"
const sessionFileName = (sessionID: string) => `${sessionID}.json`

export const emptyLifetime: LifetimeFile = { version: 1, updatedAt: 0, sessions: 0, calls: 0, tokens: 0, byReason: {} }

/** Durable per-session state and lifetime statistics, and the status files the terminal UI reads. */
export class Persistence extends Context.Service<Persistence, {
  /** None when there is no state; a corrupt or invalid file is moved aside (with a warning) and None returned. */
  readonly load: (sessionID: string) => Effect.Effect<Option.Option<SessionFile>, InvalidSessionId | PersistenceError>
  /** Replaces the session's state atomically. */
  readonly save: (file: SessionFile) => Effect.Effect<void, InvalidSessionId | PersistenceError>
  /** Deletes the session's state; nothing to delete is fine. */
  readonly remove: (sessionID: string) => Effect.Effect<void, InvalidSessionId | PersistenceError>
  /** Totals across all sessions; zero when nothing was recorded yet or the file was corrupt. */
  readonly lifetime: Effect.Effect<LifetimeFile, PersistenceError>
  /** Adds to the totals without losing a concurrent update from another OpenCode process; returns the new totals. */
  readonly addToLifetime: (delta: LifetimeDelta) => Effect.Effect<LifetimeFile, PersistenceError>
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
  static readonly layer = Layer.effect(
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
      const statusPath = (sessionID: string) => path.join(statusDir, statusFileName(sessionID))

      const load = Effect.fn("Persistence.load")(function*(sessionID: string) {
        yield* validate(sessionID)
        const file = sessionPath(sessionID)
        const found = yield* read(file, decodeSession)
        if (Option.isNone(found)) return Option.none<SessionFile>()
        const result = found.value
        if (Result.isSuccess(result) && result.success.sessionID === sessionID) return Option.some(result.success)
        yield* moveAside(
          file,
          Result.isFailure(result) ? result.failure : `it holds session ${JSON.stringify(result.success.sessionID)}`
        )
        return Option.none<SessionFile>()
      }, Effect.provideContext(platform))

      const save = Effect.fn("Persistence.save")(function*(state: SessionFile) {
        yield* validate(state.sessionID)
        yield* write(sessionPath(state.sessionID), encodeSession(state))
      }, Effect.provideContext(platform))

      const remove = Effect.fn("Persistence.remove")(function*(sessionID: string) {
        yield* validate(sessionID)
        const file = sessionPath(sessionID)
        yield* fs.remove(file, { force: true }).pipe(Effect.mapError(fail("remove", file)))
      })

      /** Under the lock only: a reader outside it could quarantine the good file a writer just renamed in. */
      const readLifetimeOrReset = Effect.gen(function*() {
        const found = yield* read(lifetimeFile, decodeLifetime)
        if (Option.isNone(found)) return emptyLifetime
        if (Result.isSuccess(found.value)) return found.value.success
        yield* moveAside(lifetimeFile, found.value.failure)
        return emptyLifetime
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

      const lifetime = Effect.gen(function*() {
        const found = yield* read(lifetimeFile, decodeLifetime)
        if (Option.isNone(found)) return emptyLifetime
        if (Result.isSuccess(found.value)) return found.value.success
        return yield* locked(readLifetimeOrReset)
      }).pipe(Effect.provideContext(platform), Effect.withSpan("Persistence.lifetime"))

      const addToLifetime = Effect.fn("Persistence.addToLifetime")(function*(delta: LifetimeDelta) {
        return yield* locked(Effect.gen(function*() {
          const current = yield* readLifetimeOrReset
          const next = addLifetimeDelta(current, delta, yield* Clock.currentTimeMillis)
          yield* write(lifetimeFile, encodeLifetime(next))
          return next
        }))
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
        remove,
        lifetime,
        addToLifetime,
        leftoversRemoved: Fiber.join(sweep),
        saveStatus,
        removeStatus
      })
    })
  )

  /** The same contract in memory: for tests of services that do not care about the disk. */
  static readonly layerMemory = Layer.effect(
    Persistence,
    Effect.gen(function*() {
      const sessions = yield* Ref.make(new Map<string, SessionFile>())
      const totals = yield* Ref.make(emptyLifetime)
      const statuses = yield* Ref.make(new Map<string, SessionStatus>())
      // A round trip through the encoded form, so what comes back is exactly what a disk load would return.
      const roundTrip = (state: SessionFile) =>
        encodeSession(state).pipe(
          Effect.flatMap(decodeSession),
          Effect.mapError((cause) =>
            new PersistenceError({ operation: "write", path: sessionFileName(state.sessionID), cause })
          )
        )
      return Persistence.of({
        load: Effect.fn("Persistence.load")(function*(sessionID: string) {
          yield* validate(sessionID)
          return Option.fromNullishOr((yield* Ref.get(sessions)).get(sessionID))
        }),
        save: Effect.fn("Persistence.save")(function*(state: SessionFile) {
          yield* validate(state.sessionID)
          const stored = yield* roundTrip(state)
          yield* Ref.update(sessions, (all) => new Map(all).set(state.sessionID, stored))
        }),
        remove: Effect.fn("Persistence.remove")(function*(sessionID: string) {
          yield* validate(sessionID)
          yield* Ref.update(sessions, (all) => {
            const next = new Map(all)
            next.delete(sessionID)
            return next
          })
        }),
        lifetime: Ref.get(totals),
        addToLifetime: Effect.fn("Persistence.addToLifetime")(function*(delta: LifetimeDelta) {
          const now = yield* Clock.currentTimeMillis
          return yield* Ref.updateAndGet(totals, (current) => addLifetimeDelta(current, delta, now))
        }),
        leftoversRemoved: Effect.succeed([]),
        saveStatus: Effect.fn("Persistence.saveStatus")(function*(status: SessionStatus) {
          yield* validate(status.sessionID)
          yield* Ref.update(statuses, (all) => new Map(all).set(status.sessionID, status))
        }),
        removeStatus: Effect.fn("Persistence.removeStatus")(function*(sessionID: string) {
          yield* validate(sessionID)
          yield* Ref.update(statuses, (all) => {
            const next = new Map(all)
            next.delete(sessionID)
            return next
          })
        })
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

const decodeSession = Schema.decodeUnknownEffect(Schema.fromJsonString(SessionFile))
const encodeSession = Schema.encodeEffect(Schema.fromJsonString(SessionFile))
const decodeLifetime = Schema.decodeUnknownEffect(Schema.fromJsonString(LifetimeFile))
const encodeLifetime = Schema.encodeEffect(Schema.fromJsonString(LifetimeFile))

/** Token figures may be estimates: counts are rounded and clamped, so one odd delta cannot make the file invalid. */
const count = (n: number) => (Number.isFinite(n) && n > 0 ? Math.round(n) : 0)

const addLifetimeDelta = (current: LifetimeFile, delta: LifetimeDelta, now: number): LifetimeFile => {
  const byReason: Record<string, Tally> = { ...current.byReason }
  for (const [reason, tally] of Object.entries(delta.byReason)) {
    const before = byReason[reason] ?? { calls: 0, tokens: 0 }
    byReason[reason] = { calls: before.calls + count(tally.calls), tokens: before.tokens + count(tally.tokens) }
  }
  return {
    version: 1,
    updatedAt: now,
    sessions: current.sessions + count(delta.sessions),
    calls: current.calls + count(delta.calls),
    tokens: current.tokens + count(delta.tokens),
    byReason
  }
}
