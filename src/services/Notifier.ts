import { Context, Effect, Layer } from "effect"
import { formatNote, layoutNote, type PrunedCall } from "../engine/notes.ts"
import { Config } from "./Config.ts"
import type { NoteOrigin } from "../host/schema.ts"
import { Host, type HostError } from "./Host.ts"

interface Pending {
  readonly calls: Array<PrunedCall>
  origin: NoteOrigin
  sessionTokens: number
}

/**
 * Notes to the user about what was pruned. OpenCode's agent loop treats the newest user message as the turn's
 * prompt, so a note stored while the loop runs would start one extra model turn (verified with OpenCode 1.18.33).
 * Prunes are therefore collected per session and reported in one note when the session goes idle.
 */
export class Notifier extends Context.Service<Notifier, {
  /** Adds prunes to the session's next note. */
  readonly record: (
    sessionID: string,
    calls: ReadonlyArray<PrunedCall>,
    context: { readonly origin: NoteOrigin; readonly sessionTokens: number }
  ) => Effect.Effect<void>
  /** The session is idle: sends its collected note, if any. */
  readonly idle: (sessionID: string) => Effect.Effect<void, HostError>
  /**
   * A note for a command's output: sent now when the session is idle (returning the stored message), held until
   * idle when its agent loop is running.
   */
  readonly post: (sessionID: string, text: string, origin: NoteOrigin) => Effect.Effect<unknown, HostError>
}>()("opencode-context-pruner/Notifier") {
  static readonly layer: Layer.Layer<Notifier, never, Config | Host> = Layer.effect(
    Notifier,
    Effect.gen(function*() {
      const host = yield* Host
      const config = yield* Config
      const pending = new Map<string, Pending>()
      const held = new Map<string, Array<{ readonly text: string; readonly origin: NoteOrigin }>>()

      const send = (sessionID: string, text: string, origin: NoteOrigin) =>
        host.notify({ sessionID, text: layoutNote(text), ...origin })

      return Notifier.of({
        record: (sessionID, calls, context) =>
          Effect.sync(() => {
            if (config.current.pruneNotification === "off" || calls.length === 0) return
            const entry = pending.get(sessionID) ?? { calls: [], origin: context.origin, sessionTokens: 0 }
            entry.calls.push(...calls)
            entry.origin = context.origin
            entry.sessionTokens = context.sessionTokens
            pending.set(sessionID, entry)
          }),
        idle: (sessionID) =>
          Effect.gen(function*() {
            const notes = held.get(sessionID) ?? []
            const entry = pending.get(sessionID)
            const text = entry === undefined
              ? undefined
              : formatNote(entry.calls, {
                mode: config.current.pruneNotification,
                sessionTokens: entry.sessionTokens,
                showDistillation: config.current.tools.extract.showDistillation
              })
            const all = [
              ...notes,
              ...(text === undefined || entry === undefined ? [] : [{ text, origin: entry.origin }])
            ]
            held.delete(sessionID)
            pending.delete(sessionID)
            for (const [i, note] of all.entries()) {
              // A note the host did not take waits for the next idle instead of being lost.
              yield* send(sessionID, note.text, note.origin).pipe(
                Effect.tapError(() =>
                  Effect.sync(() => held.set(sessionID, [...all.slice(i), ...(held.get(sessionID) ?? [])]))
                )
              )
            }
          }),
        post: (sessionID, text, origin) =>
          Effect.gen(function*() {
            if (yield* host.busy(sessionID)) {
              held.set(sessionID, [...(held.get(sessionID) ?? []), { text, origin }])
              return undefined
            }
            return yield* send(sessionID, text, origin)
          })
      })
    })
  )
}
