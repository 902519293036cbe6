import { Clock, Context, Effect, Layer, Predicate, Ref, Schema } from "effect"
import type { NoteOrigin } from "../host/schema.ts"

/**
 * The part of OpenCode's SDK client this plugin uses. Declared structurally so the live layer takes the real
 * client and hook-level tests can hand the plugin a small fake.
 */
export interface HostClient {
  readonly session: {
    readonly get: (options: { path: { id: string } }) => Promise<{ data?: unknown; error?: unknown }>
    readonly messages: (options: { path: { id: string } }) => Promise<{ data?: unknown; error?: unknown }>
    readonly prompt: (options: { path: { id: string }; body: NoteBody }) => Promise<{ data?: unknown; error?: unknown }>
    readonly status: () => Promise<{ data?: unknown; error?: unknown }>
    readonly abort: (options: { path: { id: string } }) => Promise<{ data?: unknown; error?: unknown }>
    readonly delete: (options: { path: { id: string } }) => Promise<{ data?: unknown; error?: unknown }>
    readonly summarize: (
      options: { path: { id: string }; body: { providerID: string; modelID: string; auto: false } }
    ) => Promise<{ data?: unknown; error?: unknown }>
  }
  readonly tui: {
    readonly showToast: (options: { body: ToastBody }) => Promise<{ error?: unknown }>
  }
  readonly app: {
    readonly log: (options: { body: LogBody }) => Promise<unknown>
  }
}

interface NoteBody {
  readonly noReply: true
  readonly agent?: string
  readonly model?: { providerID: string; modelID: string }
  readonly variant?: string
  readonly parts: Array<{ type: "text"; text: string; ignored: true; time: { start: number; end: number } }>
}
interface ToastBody {
  readonly title?: string
  readonly message: string
  readonly variant: "info" | "success" | "warning" | "error"
  readonly duration?: number
}
interface LogBody {
  readonly service: string
  readonly level: "debug" | "info" | "warn" | "error"
  readonly message: string
  readonly extra?: Record<string, unknown>
}

export class HostError extends Schema.TaggedError<HostError>()("HostError", {
  operation: Schema.String,
  cause: Schema.Defect()
}) {}

/** The host fields we depend on; everything else the host sends is ignored. */
const SessionInfo = Schema.Struct({
  id: Schema.String,
  parentID: Schema.optional(Schema.NullOr(Schema.String)),
  permission: Schema.optional(Schema.NullOr(Schema.Array(Schema.Unknown))),
  revert: Schema.optional(Schema.NullOr(Schema.Unknown))
})
export interface SessionInfo {
  readonly id: string
  readonly parentID: string | undefined
  /**
   * Whether `opencode run` (without `--session`/`--continue`) created the session for its one invocation. OpenCode
   * 1.18.33 records no origin; its run command alone gives a new session exactly these rules (no questions, no plan
   * mode), while the terminal UI, the web UI and the API give none. A later version that changes them reads as
   * `false`: such a session is then kept, as any other.
   */
  readonly createdByRun?: boolean | undefined
  /**
   * The user undid messages and has not sent a prompt since: OpenCode removes them for good at the session's next
   * prompt or compaction, and brings them back on a redo until then.
   */
  readonly reverting?: boolean | undefined
}

const runModeRules = ["plan_enter", "plan_exit", "question"]

const isRunModeSession = (permission: ReadonlyArray<unknown> | null | undefined): boolean => {
  if (permission === undefined || permission === null || permission.length !== runModeRules.length) return false
  const denied = permission.flatMap((rule) =>
    Predicate.isObject(rule) && rule.action === "deny" && rule.pattern === "*" && typeof rule.permission === "string"
      ? [rule.permission]
      : []
  )
  return denied.sort().join(",") === runModeRules.join(",")
}

/** Agent and model of the user's current turn: a note sent without them would switch the session's agent. */
export interface Note extends NoteOrigin {
  readonly sessionID: string
  readonly text: string
}

export interface Toast {
  readonly title?: string
  readonly message: string
  readonly variant: "info" | "success" | "warning" | "error"
}

/** The running OpenCode instance, as far as this plugin talks to it. */
export class Host extends Context.Service<Host, {
  readonly session: (sessionID: string) => Effect.Effect<SessionInfo, HostError>
  /** The stored session, unmodified: what recall reads originals from. */
  readonly messages: (sessionID: string) => Effect.Effect<ReadonlyArray<unknown>, HostError>
  /** A user-visible message that never reaches the model and starts no model turn. Returns the stored message. */
  readonly notify: (note: Note) => Effect.Effect<unknown, HostError>
  /** Whether the session's agent loop is running. */
  readonly busy: (sessionID: string) => Effect.Effect<boolean, HostError>
  /**
   * Tells clients waiting on the session (`opencode run --command`, the web UI) that it is idle, which OpenCode
   * announces when a session without a running loop is aborted. Never called while the loop runs.
   */
  readonly announceIdle: (sessionID: string) => Effect.Effect<void, HostError>
  /** Deletes a session, as the user would in OpenCode. */
  readonly remove: (sessionID: string) => Effect.Effect<void, HostError>
  /**
   * Starts OpenCode's compaction of the session, as `/compact` does, and returns without waiting for it: OpenCode's
   * own loop runs the summariser, whose request passes through the plugin's transform. A compaction that fails is
   * logged.
   */
  readonly compact: (
    sessionID: string,
    model: { readonly providerID: string; readonly modelID: string }
  ) => Effect.Effect<void>
  readonly toast: (toast: Toast) => Effect.Effect<void, HostError>
  /** A line in OpenCode's own log. Never fails: logging must not become a new failure. */
  readonly log: (level: LogBody["level"], message: string, extra?: Record<string, unknown>) => Effect.Effect<void>
}>()("opencode-context-pruner/Host") {
  static readonly layer = (client: HostClient): Layer.Layer<Host> =>
    Layer.succeed(
      Host,
      Host.of({
        session: (sessionID) =>
          call("session.get", () => client.session.get({ path: { id: sessionID } })).pipe(
            Effect.flatMap((data) =>
              Schema.decodeUnknownEffect(SessionInfo)(data).pipe(
                Effect.mapError((cause) => new HostError({ operation: "session.get", cause }))
              )
            ),
            Effect.map((info) => ({
              id: info.id,
              parentID: info.parentID ?? undefined,
              createdByRun: isRunModeSession(info.permission),
              reverting: info.revert !== undefined && info.revert !== null
            }))
          ),
        messages: (sessionID) =>
          call("session.messages", () => client.session.messages({ path: { id: sessionID } })).pipe(
            Effect.map((data) => (Array.isArray(data) ? data : []))
          ),
        notify: (note) =>
          Effect.flatMap(Clock.currentTimeMillis, (now) =>
            call("session.prompt", () =>
              client.session.prompt({
                path: { id: note.sessionID },
                body: {
                  noReply: true,
                  ...(note.agent === undefined ? {} : { agent: note.agent }),
                  ...(note.model === undefined ? {} : { model: { ...note.model } }),
                  ...(note.variant === undefined ? {} : { variant: note.variant }),
                  // A finished text part is what `opencode run` prints (as text, or as a JSON "text" event).
                  parts: [{ type: "text", text: note.text, ignored: true, time: { start: now, end: now } }]
                }
              }))),
        busy: (sessionID) =>
          call("session.status", () => client.session.status()).pipe(
            Effect.map((statuses) => {
              const status = Predicate.isObject(statuses) ? statuses[sessionID] : undefined
              return Predicate.isObject(status) && status.type !== "idle"
            })
          ),
        announceIdle: (sessionID) =>
          call("session.abort", () => client.session.abort({ path: { id: sessionID } })).pipe(Effect.asVoid),
        remove: (sessionID) =>
          call("session.delete", () => client.session.delete({ path: { id: sessionID } })).pipe(Effect.asVoid),
        compact: (sessionID, model) =>
          call("session.summarize", () =>
            client.session.summarize({
              path: { id: sessionID },
              body: { providerID: model.providerID, modelID: model.modelID, auto: false }
            })).pipe(
              Effect.catchTag("HostError", (error) => Effect.logWarning(`compaction of ${sessionID} failed`, error)),
              Effect.forkDetach,
              Effect.asVoid
            ),
        toast: (toast) =>
          call("tui.showToast", () => client.tui.showToast({ body: { ...toast, duration: 10_000 } })).pipe(
            Effect.asVoid
          ),
        log: (level, message, extra) =>
          Effect.tryPromise(() =>
            client.app.log({ body: { service: "dcp", level, message, ...(extra === undefined ? {} : { extra }) } })
          ).pipe(Effect.ignore)
      })
    )

  /** A scripted host: sessions it knows, and a record of every note, toast and log line sent to it. */
  static readonly layerTest = (fixture: HostFixture = {}): Layer.Layer<Host | HostRecorder> =>
    Layer.effect(
      Host,
      Effect.gen(function*() {
        const recorder = yield* HostRecorder
        const fail = (operation: string) =>
          Effect.fail(new HostError({ operation, cause: new Error("host unavailable") }))
        return Host.of({
          session: (sessionID) =>
            Ref.update(recorder.sessionLookups, (n) => n + 1).pipe(
              Effect.andThen(
                fixture.failing ? fail("session.get") : Effect.succeed({
                  id: sessionID,
                  parentID: fixture.sessions?.[sessionID]?.parentID,
                  createdByRun: fixture.sessions?.[sessionID]?.createdByRun ?? false,
                  reverting: fixture.sessions?.[sessionID]?.reverting ?? false
                })
              )
            ),
          messages: (sessionID) =>
            fixture.failing ? fail("session.messages") : Effect.succeed(fixture.messages?.[sessionID] ?? []),
          notify: (note) =>
            fixture.failing ? fail("session.prompt") : Ref.update(recorder.notes, (all) => [...all, note]).pipe(
              Effect.as({ info: { id: `msg_note_${note.sessionID}`, role: "user" }, parts: [] })
            ),
          busy: (sessionID) =>
            fixture.failing ? fail("session.status") : Effect.succeed(fixture.busy?.includes(sessionID) ?? false),
          announceIdle: (sessionID) =>
            fixture.failing ? fail("session.abort") : Ref.update(recorder.idleAnnounced, (all) => [...all, sessionID]),
          remove: (sessionID) =>
            fixture.failing ? fail("session.delete") : Ref.update(recorder.removed, (all) => [...all, sessionID]),
          compact: (sessionID, model) =>
            Ref.update(recorder.compactions, (all) => [...all, { sessionID, model: { ...model } }]),
          toast: (toast) =>
            fixture.failing ? fail("tui.showToast") : Ref.update(recorder.toasts, (all) => [...all, toast]),
          log: (level, message, extra) => Ref.update(recorder.logs, (all) => [...all, { level, message, extra }])
        })
      })
    ).pipe(Layer.provideMerge(HostRecorder.layer))
}

export interface HostFixture {
  readonly sessions?: Readonly<
    Record<string, { readonly parentID?: string; readonly createdByRun?: boolean; readonly reverting?: boolean }>
  >
  readonly messages?: Readonly<Record<string, ReadonlyArray<unknown>>>
  /** Sessions whose agent loop is running. */
  readonly busy?: ReadonlyArray<string>
  /** Every call fails, as when the server is shutting down. */
  readonly failing?: boolean
}

export interface CompactionAsked {
  readonly sessionID: string
  readonly model: { readonly providerID: string; readonly modelID: string }
}

/** What a test host received. */
export class HostRecorder extends Context.Service<HostRecorder, {
  readonly notes: Ref.Ref<ReadonlyArray<Note>>
  readonly toasts: Ref.Ref<ReadonlyArray<Toast>>
  readonly logs: Ref.Ref<ReadonlyArray<{ level: string; message: string; extra: unknown }>>
  readonly sessionLookups: Ref.Ref<number>
  readonly idleAnnounced: Ref.Ref<ReadonlyArray<string>>
  /** Sessions deleted. */
  readonly removed: Ref.Ref<ReadonlyArray<string>>
  /** Compactions asked for, in order. */
  readonly compactions: Ref.Ref<ReadonlyArray<CompactionAsked>>
}>()("opencode-context-pruner/HostRecorder") {
  static readonly layer: Layer.Layer<HostRecorder> = Layer.effect(
    HostRecorder,
    Effect.gen(function*() {
      return HostRecorder.of({
        notes: yield* Ref.make<ReadonlyArray<Note>>([]),
        toasts: yield* Ref.make<ReadonlyArray<Toast>>([]),
        logs: yield* Ref.make<ReadonlyArray<{ level: string; message: string; extra: unknown }>>([]),
        sessionLookups: yield* Ref.make(0),
        idleAnnounced: yield* Ref.make<ReadonlyArray<string>>([]),
        removed: yield* Ref.make<ReadonlyArray<string>>([]),
        compactions: yield* Ref.make<ReadonlyArray<CompactionAsked>>([])
      })
    })
  )
}

const call = (operation: string, request: () => Promise<{ data?: unknown; error?: unknown }>) =>
  Effect.tryPromise({
    try: request,
    catch: (cause) => new HostError({ operation, cause })
  }).pipe(
    Effect.flatMap((response) =>
      response.error === undefined || response.error === null
        ? Effect.succeed(response.data)
        : Effect.fail(new HostError({ operation, cause: response.error }))
    )
  )
