import { Effect, Predicate, Result, Schema } from "effect"
import { findingsForSummary } from "../engine/prompts.ts"
import { Compactor } from "../services/Compactor.ts"
import { Config, formatReport } from "../services/Config.ts"
import { agentPrompts } from "../host/agents.ts"
import { HostEvent } from "../host/schema.ts"
import type { NoteOrigin } from "../host/schema.ts"
import type { SessionId } from "../host/sessionId.ts"
import { Host } from "../services/Host.ts"
import { Ledger } from "../services/Ledger.ts"
import { Notifier } from "../services/Notifier.ts"
import { Scheduler } from "../services/Scheduler.ts"
import { SessionStore } from "../services/SessionStore.ts"
import { Status } from "../services/Status.ts"
import { ToolCache } from "../services/ToolCache.ts"

/** `chat.message`: remembers the agent and model of the user's turn, so notes sent later do not switch them. */
export const userMessage = Effect.fn("hooks.userMessage")(function*(sessionID: SessionId, origin: NoteOrigin) {
  const store = yield* SessionStore
  yield* store.use(sessionID, (state) => Effect.sync(() => void (state.origin = origin)))
})

/**
 * `config`: the agents OpenCode's config defines, whose own system prompts make a switch to them a cold cache; and
 * its `compaction.auto`, which the plugin's compaction between turns follows.
 */
export const hostConfig = Effect.fn("hooks.config")(function*(agents: unknown, compaction?: unknown) {
  const scheduler = yield* Scheduler
  yield* scheduler.agentsConfigured(agentPrompts(agents))
  const auto = Predicate.isObject(compaction) && typeof compaction.auto === "boolean" ? compaction.auto : undefined
  yield* Compactor.use((compactor) => compactor.hostConfigured(auto))
})

/**
 * `experimental.session.compacting`: the next transform for this session is OpenCode's summariser's. The findings
 * the model distilled with `extract` are handed to the summariser, so they survive the compaction. They are kept
 * until OpenCode reports the compaction done (`session.compacted`): one that fails hands them to the next.
 */
export const compacting = Effect.fn("hooks.compacting")(function*(sessionID: SessionId, context: Array<string>) {
  const store = yield* SessionStore
  yield* store.use(sessionID, (state) =>
    Effect.sync(() => {
      if (state.isSubAgent) return
      state.compacting = true
      const handover = findingsForSummary(state.findings)
      if (handover === undefined) return
      context.push(handover)
    }))
})

/**
 * `event`: a session deleted in OpenCode takes its state and status files with it; a finished compaction has the findings it
 * was handed in its summary; a session that went idle gets the note about what was pruned during its last run
 * (sending it earlier would start an extra model turn), and is compacted when its context grew large (`Compactor`);
 * a change of the MCP tools makes every session's next request
 * one that writes the prompt cache again anyway.
 */
export const event = Effect.fn("hooks.event")(function*(input: unknown) {
  // Most events (streamed part updates among them) are not for the plugin: they are passed over before decoding.
  if (!Predicate.isObject(input) || !handledEvents.has(input.type)) return
  const decoded = decodeEvent(input)
  if (Result.isFailure(decoded)) {
    return yield* Effect.logWarning(`event ${String(input.type)} skipped: it does not have the expected shape`, {
      issue: decoded.failure.message
    })
  }
  yield* HostEvent.match(decoded.success, {
    "session.deleted": (event) => forget(event.properties.info.id),
    "session.compacted": (event) => compacted(event.properties.sessionID),
    "session.idle": (event) => idle(event.properties.sessionID),
    "session.status": (event) =>
      event.properties.status.type === "idle" ? idle(event.properties.sessionID) : Effect.void,
    "mcp.tools.changed": () => Scheduler.use((scheduler) => scheduler.toolsChanged)
  })
})

const handledEvents: ReadonlySet<unknown> = new Set(HostEvent.discriminants)
const decodeEvent = Schema.decodeUnknownResult(HostEvent)

const forget = Effect.fnUntraced(function*(sessionID: SessionId) {
  const store = yield* SessionStore
  const cache = yield* ToolCache
  yield* cache.forget(sessionID)
  yield* store.forget(sessionID)
  yield* Status.use((status) => status.remove(sessionID))
})

const compacted = Effect.fnUntraced(function*(sessionID: SessionId) {
  const store = yield* SessionStore
  yield* store.use(sessionID, (state) =>
    Effect.sync(() => {
      if (state.findings.length === 0) return
      state.findings = []
      state.dirty = true
    }))
  yield* Compactor.use((compactor) => compactor.compacted(sessionID))
})

const idle = Effect.fnUntraced(function*(sessionID: SessionId) {
  const store = yield* SessionStore
  const ledger = yield* Ledger
  const notifier = yield* Notifier
  // Writes are spaced out during a run; at its end everything goes to disk, since OpenCode may now be quit
  // without disposing its plugins.
  yield* store.flush
  yield* ledger.flush
  // A compaction that ended (or failed) without its summariser's request must not leave the next one unpruned.
  yield* store.ifLoaded(sessionID, (state) => void (state.compacting = false))
  yield* notifier.idle(sessionID).pipe(Effect.ensuring(Compactor.use((compactor) => compactor.turnEnded(sessionID))))
})

/**
 * Problems found in config files are shown once per file, on the first interaction (a model request or a `/dcp`
 * command) rather than at start-up, when the terminal UI may not be listening yet; so is what a reload found
 * (`refreshConfig`). Returns the reports shown, for a command to repeat in its note: a toast never reaches
 * `opencode run`.
 */
export const reportConfigProblems = Effect.gen(function*() {
  const host = yield* Host
  const reports = yield* (yield* Config).takeReports
  for (const report of reports) {
    const { message, title } = formatReport(report)
    yield* host.toast({ title, message, variant: "warning" }).pipe(
      Effect.catchTag(
        "HostError",
        (error) => Effect.logWarning(`config problem not shown: ${title}\n${message}`, error)
      )
    )
  }
  return reports
})

/**
 * Reads the config files again when one changed, then shows what that found: on the user's message and on a `/dcp`
 * command, so that an edit applies from the user's next message on. Not on each model request: checking the files
 * awaits the file system, and the request would wait for whatever else the process does meanwhile (a few ms a request
 * on a busy machine, the benchmark's median transform tripled).
 */
export const refreshConfig = Effect.gen(function*() {
  yield* (yield* Config).refresh
  return yield* reportConfigProblems
})
