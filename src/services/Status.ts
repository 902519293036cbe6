import { Clock, Context, Effect, Layer, Option } from "effect"
import { writeBehind } from "../data/writeBehind.ts"
import type { Waiting } from "../engine/schedule.ts"
import { figuresOf } from "../engine/figures.ts"
import type { Tally } from "../state/schema.ts"
import type { SessionId } from "../host/sessionId.ts"
import type { SessionState } from "../engine/session.ts"
import { type SessionStatus, type StatusPrune, statusVersion } from "../state/status.ts"
import { Config } from "./Config.ts"
import { Persistence } from "./Persistence.ts"
import type { ToolIndex } from "../engine/calls.ts"
import { ToolCache } from "./ToolCache.ts"

/** How many prunes a status lists for the dialog's restore choices: the newest; "restore all" covers the rest. */
const recentLimit = 10

/**
 * The status the terminal UI shows for each session (src/state/status.ts): taken when the request path, a pruning
 * tool or a command is done with the session, written behind so no request waits for the disk.
 */
export class Status extends Context.Service<Status, {
  /** Takes the session's status now; the file follows shortly. Never fails: the UI is a bystander. */
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
      const { current: config } = yield* Config
      const taken = new Map<string, SessionStatus>()
      const prunes = new WeakMap<SessionState, PrunedSummary>()

      const writer = yield* writeBehind(
        Effect.gen(function*() {
          const batch = [...taken.values()]
          taken.clear()
          for (const status of batch) {
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
        const index = Option.getOrUndefined(yield* cache.latest(state.sessionID))
        let summary = prunes.get(state)
        if (summary === undefined || summary.revision !== state.revision || summary.indexed !== (index !== undefined)) {
          summary = summarisePrunes(state, index)
          prunes.set(state, summary)
        }
        const now = yield* Clock.currentTimeMillis
        taken.set(state.sessionID, statusOf(state, index, summary, { now, commands: config.commands.enabled }))
        yield* writer.request
      })

      const remove = Effect.fn("Status.remove")(function*(sessionID: SessionId) {
        taken.delete(sessionID)
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

/** The prunes in effect, derived again only when they changed (the session's revision moved). */
interface PrunedSummary {
  readonly revision: number
  /** Whether tool names were known (the session's calls indexed) when it was derived. */
  readonly indexed: boolean
  readonly pruned: Tally
  readonly recent: ReadonlyArray<StatusPrune>
}

const summarisePrunes = (state: SessionState, index: ToolIndex | undefined): PrunedSummary => {
  let tokens = 0
  for (const record of state.pruned.values()) tokens += record.tokens
  // A Map iterates in insertion order, and a prune (re)inserts its call: the newest prunes are last.
  const recent: Array<StatusPrune> = []
  const entries = [...state.pruned]
  for (let i = entries.length - 1; i >= 0 && recent.length < recentLimit; i--) {
    const [callID, record] = entries[i]!
    const id = state.ids.get(callID)
    if (id === undefined) continue
    const call = index?.byCallId.get(callID)
    recent.push({
      id,
      tool: call?.tool ?? "call",
      target: call?.keyParameter ?? "",
      tokens: record.tokens,
      reason: record.reason
    })
  }
  return {
    revision: state.revision,
    indexed: index !== undefined,
    pruned: { calls: state.pruned.size, tokens },
    recent
  }
}

/** The status of a session from its state and its latest request's index (src/engine/figures.ts: what it counts). */
const statusOf = (
  state: SessionState,
  index: ToolIndex | undefined,
  summary: PrunedSummary,
  options: { readonly now: number; readonly commands: boolean }
): SessionStatus => {
  const figures = figuresOf(state, index)
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
        ...(limit === undefined ? {} : { limit }),
        system: context.system,
        text: context.text,
        tools: context.tools,
        calls: context.calls,
        pruned: context.left,
        at: state.lastRequestAt ?? options.now,
        changed: figures.changedSinceSent,
        ...(context.leftAtLatest === undefined ? {} : { leftAtLatest: context.leftAtLatest })
      }
    }),
    ...(folded.turns === 0 ? {} : { folded }),
    ...(queued.calls === 0 ? {} : { queued }),
    pending: waiting === undefined
      ? { calls: 0, tokens: 0, reason: "" }
      : { calls: waiting.calls, tokens: waiting.tokens, reason: waitingReason(waiting.why) },
    ...(cost.requests > 0 && (cost.saved > 0 || cost.rebuilt > 0)
      ? { cost: { profile: cost.profile, saved: cost.saved, rebuilt: cost.rebuilt, reRead: cost.reRead } }
      : {})
  }
}

/** Why automatic prunes wait, in a few words for the sidebar (`/dcp context` says it at length). */
const waitingReason = (why: Waiting): string =>
  why.reason === "below-minimum"
    ? "too few tokens for a cache rebuild"
    : why.reason === "gathering"
    ? `gathering a batch, applies in ~${why.appliesAfter ?? 1} requests`
    : `warm cache, pays back after ~${Math.ceil(why.paysBackAfter)} requests`
