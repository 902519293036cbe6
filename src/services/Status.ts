import { Clock, Context, Effect, Layer, Option } from "effect"
import { writeBehind } from "../data/writeBehind.ts"
import type { Waiting } from "../engine/schedule.ts"
import { callsInEffect, contextParts, figuresOf } from "../engine/figures.ts"
import type { SessionId } from "../host/sessionId.ts"
import type { SessionState } from "../engine/session.ts"
import { type SessionStatus, type StatusProblem, type StatusPrune, statusVersion } from "../state/status.ts"
import { Config, currentProblems } from "./Config.ts"
import { Persistence } from "./Persistence.ts"
import type { ToolIndex } from "../engine/calls.ts"
import { SessionStore } from "./SessionStore.ts"
import { ToolCache } from "./ToolCache.ts"

/**
 * How many calls in effect a status lists for the dialog's restore choices: the newest; "restore all" and
 * `/dcp restore <id>` cover the rest. A bound on what is written after every request of a long session.
 */
const recentLimit = 100

/**
 * The status the terminal UI shows for each session (src/state/status.ts): asked for when the request path, a pruning
 * tool or a command is done with the session, and both derived and written behind, so no request waits for the
 * figures (a walk over the session's prunes and folds) or the disk; a session asked for again before its write
 * is written once, as it is then.
 */
export class Status extends Context.Service<Status, {
  /** The session's status is to be written: it follows shortly. Never fails: the UI is a bystander. */
  readonly publish: (state: SessionState) => Effect.Effect<void>
  /** The session was deleted: its status goes with it. */
  readonly remove: (sessionID: SessionId) => Effect.Effect<void>
  /** Writes every taken status now. */
  readonly flush: Effect.Effect<void>
}>()("opencode-context-pruner/Status") {
  static readonly layer = Layer.effect(
    Status,
    Effect.gen(function*() {
      const persistence = yield* Persistence
      const cache = yield* ToolCache
      const config = yield* Config
      const store = yield* SessionStore
      const asked = new Map<string, SessionState>()
      const prunes = new WeakMap<SessionState, PrunedSummary>()

      /** The state's status as it is now; under its session's lock, which the request path may hold meanwhile. */
      const take = Effect.fnUntraced(function*(state: SessionState) {
        const index = Option.getOrUndefined(yield* cache.latest(state.sessionID))
        const now = yield* Clock.currentTimeMillis
        return yield* store.inspect(state, (state) => {
          let summary = prunes.get(state)
          if (
            summary === undefined || summary.revision !== state.revision || summary.indexed !== (index !== undefined)
          ) {
            summary = summarisePrunes(state, index)
            prunes.set(state, summary)
          }
          return statusOf(state, index, summary, {
            now,
            commands: config.current.commands.enabled,
            ttlSeconds: config.current.cache.ttlSeconds,
            problems: currentProblems(config.reports)
          })
        })
      })

      const writer = yield* writeBehind(
        Effect.gen(function*() {
          const batch = [...asked.values()]
          asked.clear()
          for (const state of batch) {
            const status = yield* take(state)
            yield* persistence.saveStatus(status).pipe(
              Effect.catch((error) => Effect.logDebug(`status of ${status.sessionID} not written`, error))
            )
          }
        }),
        // Short: the panel should follow the request it describes, not lag a whole second behind.
        { spacing: "200 millis" }
      )

      const publish = Effect.fn("Status.publish")(function*(state: SessionState) {
        if (state.isSubAgent) return
        asked.set(state.sessionID, state)
        yield* writer.request
      })

      const remove = Effect.fn("Status.remove")(function*(sessionID: SessionId) {
        asked.delete(sessionID)
        // A write of this session may be under way: let it finish, then remove what it wrote.
        yield* writer.drain
        yield* persistence.removeStatus(sessionID).pipe(
          Effect.catch((error) => Effect.logDebug(`status of ${sessionID} not removed`, error))
        )
      })

      return Status.of({ publish, remove, flush: writer.drain })
    })
  )
}

/** The calls in effect, listed again only when they changed (the session's revision moved). */
interface PrunedSummary {
  readonly revision: number
  /** Whether tool names were known (the session's calls indexed) when it was derived. */
  readonly indexed: boolean
  readonly recent: ReadonlyArray<StatusPrune>
}

const summarisePrunes = (state: SessionState, index: ToolIndex | undefined): PrunedSummary => ({
  revision: state.revision,
  indexed: index !== undefined,
  recent: callsInEffect(state, index).slice(0, recentLimit).map((call) => ({
    id: call.id,
    tool: call.tool,
    target: call.target,
    tokens: call.tokens,
    reason: call.reason,
    ...(call.folded ? { folded: true } : {})
  }))
})

/** The status of a session from its state and its latest request's index (src/engine/figures.ts: what it counts). */
const statusOf = (
  state: SessionState,
  index: ToolIndex | undefined,
  summary: PrunedSummary,
  options: {
    readonly now: number
    readonly commands: boolean
    readonly ttlSeconds: number
    readonly problems: ReadonlyArray<StatusProblem>
  }
): SessionStatus => {
  const figures = figuresOf(state, index, options.ttlSeconds)
  const { context, folded, queued, waiting } = figures
  const cost = state.stats.cost
  const limit = state.model?.contextLimit
  return {
    version: statusVersion,
    sessionID: state.sessionID,
    updatedAt: options.now,
    pruned: figures.inEffect,
    session: { calls: state.stats.calls, tokens: state.stats.tokens, byReason: state.stats.byReason },
    recent: summary.recent,
    commands: options.commands,
    ...(context === undefined ? {} : {
      context: {
        tokens: context.tokens,
        ...contextParts(context, { limit, changed: figures.changedSinceSent }),
        at: state.lastRequestAt ?? options.now,
        ...(context.leftAtLatest === undefined ? {} : { leftAtLatest: context.leftAtLatest })
      }
    }),
    ...(folded.turns === 0 ? {} : { folded }),
    ...(figures.restored === 0 ? {} : { restored: figures.restored }),
    ...(queued.calls === 0 && queued.tokens === 0 ? {} : { queued }),
    pending: waiting === undefined ? { calls: 0, tokens: 0, reason: "" } : {
      calls: waiting.calls,
      tokens: waiting.tokens,
      reason: waitingReason(waiting.why),
      ...(waiting.expiresAt === undefined ? {} : { expiresAt: waiting.expiresAt })
    },
    ...(cost.requests > 0 && (cost.saved > 0 || cost.rebuilt > 0)
      ? { cost: { profile: cost.profile, saved: cost.saved, rebuilt: cost.rebuilt, reRead: cost.reRead } }
      : {}),
    ...(options.problems.length === 0 ? {} : { problems: options.problems })
  }
}

/** Why automatic prunes wait, in a few words for the sidebar (`/dcp context` says it at length). */
const waitingReason = (why: Waiting): string =>
  why.reason === "below-minimum"
    ? "too few tokens for a cache rebuild"
    : why.reason === "gathering"
    ? `gathering a batch, applies in ~${why.appliesAfter ?? 1} requests`
    : `warm cache, pays back after ~${Math.ceil(why.paysBackAfter)} requests`
