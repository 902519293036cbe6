import { Clock, Context, Effect, Layer, Option, Result, Semaphore } from "effect"
import { LruMap } from "../data/LruMap.ts"
import { writeBehind } from "../data/writeBehind.ts"
import { fromFile, persistedEntries, type SessionState, takeChange, takeFile } from "../engine/session.ts"
import { changeEntries, journalFull } from "../state/journal.ts"
import { emptySessionFile, type SessionChange, type SessionFile } from "../state/schema.ts"
import { Host, type HostError } from "./Host.ts"
import type { InvalidSessionId } from "../host/sessionId.ts"
import { Paths } from "./Paths.ts"
import { Persistence, type PersistenceError, reasonOf } from "./Persistence.ts"

/** State that could not be written: the state folder, and why. */
export interface Unsaved {
  readonly folder: string
  readonly reason: string
}

/** A state's journal on disk: the generation of its last whole write in this process, and what was appended since. */
interface Journal {
  readonly generation: string
  /** Entries of the changes appended (`changeEntries`). */
  entries: number
}

interface Entry {
  readonly lock: Semaphore.Semaphore
  state: SessionState | undefined
  /** Fibers using or waiting for this entry: an entry in use is never evicted, so a session has one state. */
  users: number
}

/**
 * Per-session state, keyed by session ID: never one state shared by all sessions. A session is loaded from disk
 * and checked for being a sub-agent the first time this process sees it; changes are written behind the request,
 * coalesced, so the request path never waits for the disk.
 */
export class SessionStore extends Context.Service<SessionStore, {
  /** Runs `f` with exclusive access to the session's state. */
  readonly use: <A, E, R>(
    sessionID: string,
    f: (state: SessionState) => Effect.Effect<A, E, R>
  ) => Effect.Effect<A, E | InvalidSessionId | PersistenceError | HostError, R>
  /**
   * `f` of a state taken earlier, once no fiber is changing it: under its session's lock while the session holds it,
   * as it is otherwise (no one changes a state its session no longer holds).
   */
  readonly inspect: <A>(state: SessionState, f: (state: SessionState) => A) => Effect.Effect<A>
  /** Runs `f` on the session's state only if this process holds it in memory; nothing is loaded. */
  readonly ifLoaded: (sessionID: string, f: (state: SessionState) => void) => Effect.Effect<void>
  /** The session was deleted in OpenCode: drop it from memory and disk. */
  readonly forget: (sessionID: string) => Effect.Effect<void, InvalidSessionId | PersistenceError>
  /** Writes every changed session now. */
  readonly flush: Effect.Effect<void>
  /**
   * Writes the session's state now, for a change the model or the user is told is made (a discard, an extract, a
   * restore): none when it is on disk, else the folder that could not be written and why. The first such failure
   * since the folder was last written to is shown in a toast naming it. The change holds in memory for the rest of the
   * process either way, and is written once the folder can be written again.
   */
  readonly persist: (sessionID: string) => Effect.Effect<Option.Option<Unsaved>>
}>()("opencode-context-pruner/SessionStore") {
  static readonly layer: Layer.Layer<SessionStore, never, Host | Paths | Persistence> = Layer.effect(
    SessionStore,
    Effect.gen(function*() {
      const persistence = yield* Persistence
      const host = yield* Host
      const { stateDir } = yield* Paths
      // The user was shown that the state folder cannot be written, and no write has worked since.
      let told = false
      const entries = new LruMap<string, Entry>(maxSessions, (entry) => entry.users === 0)
      const unsaved = new Map<string, SessionState>()
      // A state being written is in neither map nor (yet) on disk: it must stay reachable until the write ends,
      // or a session evicted meanwhile would be reloaded empty and then overwrite its own file.
      const saving = new Map<string, SessionState>()
      // None for a state not yet written whole by this process: its first write is, whatever the journal on disk
      // holds (a line cut short, lines of another generation), and so is the write after any that failed.
      const journals = new WeakMap<SessionState, Journal>()

      const load = Effect.fnUntraced(function*(sessionID: string) {
        const stored = yield* persistence.load(sessionID)
        const info = yield* host.session(sessionID)
        const file = Option.getOrElse(stored, () => emptySessionFile(sessionID, 0))
        return fromFile(file, info.parentID !== undefined)
      })

      /** The change since the last write, to append, until the journal is full (`journalFull`); then the whole state. */
      const take = (state: SessionState): { readonly change: SessionChange; readonly journal: Journal } | {
        readonly file: SessionFile
      } => {
        state.dirty = false
        const journal = journals.get(state)
        if (journal !== undefined) {
          const change = takeChange(state)
          journal.entries += changeEntries(change)
          if (!journalFull(journal.entries, persistedEntries(state))) return { change, journal }
        }
        return { file: takeFile(state) }
      }

      const write = (state: SessionState) =>
        Effect.gen(function*() {
          const lock = entries.get(state.sessionID)?.lock
          const snapshot = Effect.sync(() => take(state))
          const next = lock === undefined ? yield* snapshot : yield* lock.withPermits(1)(snapshot)
          if ("file" in next) {
            journals.set(state, { generation: yield* persistence.save(next.file), entries: 0 })
          } else {
            yield* persistence.append(state.sessionID, next.journal.generation, next.change)
          }
          told = false
        }).pipe(
          Effect.tapError(() =>
            Effect.sync(() => {
              // Kept for the next write rather than retried now: a disk that fails now likely fails again. That write
              // is whole: the change taken is not in the journal, and an append may have left half a line.
              journals.delete(state)
              state.dirty = true
              if (!unsaved.has(state.sessionID)) unsaved.set(state.sessionID, state)
            })
          )
        )

      const save = (state: SessionState) =>
        write(state).pipe(Effect.catch((error) => Effect.logWarning("could not save session state", error)))

      const writer = yield* writeBehind(
        Effect.gen(function*() {
          const batch = [...unsaved.values()]
          unsaved.clear()
          for (const state of batch) {
            saving.set(state.sessionID, state)
            yield* save(state)
            if (saving.get(state.sessionID) === state) saving.delete(state.sessionID)
          }
        }),
        { spacing: "1 second" }
      )

      // Defined once, not per call: a generator function created per request would keep what that request's
      // callback references (the whole history sent) alive through V8's young-generation collections.
      const useLocked = Effect.fnUntraced(function*<A, E, R>(
        current: Entry,
        sessionID: string,
        f: (state: SessionState) => Effect.Effect<A, E, R>
      ) {
        const state = current.state ?? unsaved.get(sessionID) ?? saving.get(sessionID) ?? (yield* load(sessionID))
        current.state = state
        const result = yield* f(state)
        if (state.dirty) {
          state.updatedAt = yield* Clock.currentTimeMillis
          unsaved.set(sessionID, state)
          yield* writer.request
        }
        return result
      })

      const use = <A, E, R>(sessionID: string, f: (state: SessionState) => Effect.Effect<A, E, R>) =>
        Effect.suspend(() => {
          let entry = entries.get(sessionID)
          if (entry === undefined) {
            entry = { lock: Semaphore.makeUnsafe(1), state: undefined, users: 0 }
            entries.set(sessionID, entry)
          }
          const current = entry
          current.users++
          return current.lock.withPermits(1)(useLocked(current, sessionID, f)).pipe(
            Effect.ensuring(Effect.sync(() => void current.users--))
          )
        })

      const forget = (sessionID: string) =>
        Effect.suspend(() => {
          entries.delete(sessionID)
          unsaved.delete(sessionID)
          saving.delete(sessionID)
          return persistence.remove(sessionID)
        })

      const ifLoaded = (sessionID: string, f: (state: SessionState) => void) =>
        Effect.sync(() => {
          const state = entries.get(sessionID)?.state
          if (state !== undefined) f(state)
        })

      const inspect = <A>(state: SessionState, f: (state: SessionState) => A) =>
        Effect.suspend(() => {
          const entry = entries.get(state.sessionID)
          const read = Effect.sync(() => f(state))
          return entry?.state === state ? entry.lock.withPermits(1)(read) : read
        })

      const persist = Effect.fnUntraced(function*(sessionID: string) {
        const state = entries.get(sessionID)?.state ?? unsaved.get(sessionID) ?? saving.get(sessionID)
        if (state === undefined) return Option.none<Unsaved>()
        // After a background write of the same state, which may have failed and left it changed.
        const written = yield* writer.exclusive(Effect.suspend(() => state.dirty ? write(state) : Effect.void)).pipe(
          Effect.result
        )
        if (Result.isSuccess(written)) {
          if (!state.dirty && unsaved.get(sessionID) === state) unsaved.delete(sessionID)
          return Option.none<Unsaved>()
        }
        const error = written.failure
        const reason = error._tag === "PersistenceError" ? reasonOf(error) : error.message
        yield* Effect.logWarning(`could not save the state of session ${sessionID}`, error)
        if (!told) {
          told = true
          yield* host.toast({
            title: "DCP: session state not saved",
            message: `${stateDir}\n${reason}\nWhat is pruned or restored now holds until OpenCode restarts.`,
            variant: "warning"
          }).pipe(Effect.ignore)
        }
        return Option.some<Unsaved>({ folder: stateDir, reason })
      })

      return SessionStore.of({ use, inspect, ifLoaded, forget, flush: writer.drain, persist })
    })
  )
}

/** Sessions held in memory; an evicted one is reloaded from disk when seen again. */
const maxSessions = 32
