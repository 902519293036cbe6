import { Clock, Context, Effect, Layer, Option, Semaphore } from "effect"
import { LruMap } from "../data/LruMap.ts"
import { writeBehind } from "../data/writeBehind.ts"
import { emptySessionFile } from "../state/schema.ts"
import { fromFile, type SessionState, toFile } from "../engine/session.ts"
import { Host, type HostError } from "./Host.ts"
import type { InvalidSessionId } from "../host/sessionId.ts"
import { Persistence, type PersistenceError } from "./Persistence.ts"

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
  /** Runs `f` on the session's state only if this process holds it in memory; nothing is loaded. */
  readonly ifLoaded: (sessionID: string, f: (state: SessionState) => void) => Effect.Effect<void>
  /** The session was deleted in OpenCode: drop it from memory and disk. */
  readonly forget: (sessionID: string) => Effect.Effect<void, InvalidSessionId | PersistenceError>
  /** Writes every changed session now. */
  readonly flush: Effect.Effect<void>
}>()("opencode-context-pruner/SessionStore") {
  static readonly layer: Layer.Layer<SessionStore, never, Host | Persistence> = Layer.effect(
    SessionStore,
    Effect.gen(function*() {
      const persistence = yield* Persistence
      const host = yield* Host
      const entries = new LruMap<string, Entry>(maxSessions, (entry) => entry.users === 0)
      const unsaved = new Map<string, SessionState>()
      // A state being written is in neither map nor (yet) on disk: it must stay reachable until the write ends,
      // or a session evicted meanwhile would be reloaded empty and then overwrite its own file.
      const saving = new Map<string, SessionState>()

      const load = Effect.fnUntraced(function*(sessionID: string) {
        const stored = yield* persistence.load(sessionID)
        const info = yield* host.session(sessionID)
        const file = Option.getOrElse(stored, () => emptySessionFile(sessionID, 0))
        return fromFile(file, info.parentID !== undefined)
      })

      const save = (state: SessionState) =>
        Effect.gen(function*() {
          const lock = entries.get(state.sessionID)?.lock
          const snapshot = Effect.sync(() => {
            state.dirty = false
            return toFile(state)
          })
          const file = lock === undefined ? yield* snapshot : yield* lock.withPermits(1)(snapshot)
          yield* persistence.save(file)
        }).pipe(
          Effect.catch((error) =>
            Effect.sync(() => {
              // Kept for the next write rather than retried now: a disk that fails now likely fails again.
              state.dirty = true
              if (!unsaved.has(state.sessionID)) unsaved.set(state.sessionID, state)
            }).pipe(Effect.andThen(Effect.logWarning("could not save session state", error)))
          )
        )

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

      return SessionStore.of({ use, ifLoaded, forget, flush: writer.drain })
    })
  )
}

/** Sessions held in memory; an evicted one is reloaded from disk when seen again. */
const maxSessions = 32
