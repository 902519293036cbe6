import { Clock, Context, Effect, Layer, Predicate, Ref, Semaphore } from "effect"
import { reportedContext } from "../commands/breakdown.ts"
import { roleOf } from "../host/messages.ts"
import { compactionAtTurnEnd, compactionReason, thresholdFor } from "../engine/compaction.ts"
import type { SessionState } from "../engine/session.ts"
import { Config } from "./Config.ts"
import { Host } from "./Host.ts"
import { Notifier } from "./Notifier.ts"
import { Scheduler } from "./Scheduler.ts"
import { SessionStore } from "./SessionStore.ts"

/** What the plugin's estimate of a request leaves out at most, as far as reading OpenCode's count is worth it. */
const estimateMisses = 20_000

/**
 * Compaction between turns (src/engine/compaction.ts): at the end of a turn whose context reached
 * `compaction.atTokens`, asks OpenCode to compact the session before the user's next prompt.
 */
export class Compactor extends Context.Service<Compactor, {
  /** OpenCode's own `compaction.auto`, from its config: false keeps the plugin from compacting too. */
  readonly hostConfigured: (auto: boolean | undefined) => Effect.Effect<void>
  /**
   * The session went idle. Asks for its compaction once per crossing of the threshold: the summariser's request and
   * the idle that follows it do not ask again. Not for a session `opencode run` made for one prompt (it exits at
   * idle), nor one with an undo pending (a compaction would make it final), nor one whose loop already runs again.
   * Never fails: what the host cannot tell leaves the session as it is.
   */
  readonly turnEnded: (sessionID: string) => Effect.Effect<void>
  /**
   * OpenCode reports a compaction of the session done. When it is one the plugin asked for, it is counted in the
   * session's statistics and a note says so, with the figure OpenCode showed: the note comes after the compaction, so
   * it is not in the history the compaction summarised.
   */
  readonly compacted: (sessionID: string) => Effect.Effect<void>
}>()("opencode-context-pruner/Compactor") {
  static readonly layer: Layer.Layer<Compactor, never, Config | Host | Notifier | Scheduler | SessionStore> = Layer
    .effect(
      Compactor,
      Effect.gen(function*() {
        const store = yield* SessionStore
        const host = yield* Host
        const notifier = yield* Notifier
        const scheduler = yield* Scheduler
        const config = yield* Config
        const hostAuto = yield* Ref.make<boolean | undefined>(undefined)
        // OpenCode reports a turn's end twice (`session.idle`, and `session.status` idle): one question at a time, so
        // that the second finds the first's compaction asked (its context forgotten) instead of asking again beside it.
        const oneAtATime = yield* Semaphore.make(1)
        const ask = Effect.fnUntraced(function*(sessionID: string) {
          const auto = yield* Ref.get(hostAuto)
          const { current } = config
          const turn: { state: SessionState | undefined; threshold: number } = { state: undefined, threshold: 0 }
          yield* store.ifLoaded(sessionID, (state) => {
            turn.state = state
            turn.threshold = thresholdFor(current.compaction.atTokens, state.model)
          })
          const { state, threshold } = turn
          if (state === undefined || state.lastContext === undefined || !current.compaction.enabled) return
          // OpenCode's count exceeds the plugin's estimate by what the estimate leaves out, mostly the tool definitions
          // (5,000 tokens of OpenCode's own, more with MCP servers): far below the threshold, the stored session is not
          // worth reading for it.
          if (state.lastContext + estimateMisses < threshold) return
          // The threshold is crossed by the context as OpenCode counts and shows it (the provider's figure for the
          // latest request and its reply, tool definitions included), else by the plugin's own estimate.
          const messages = yield* host.messages(sessionID)
          // Right after a compaction the newest reply is its summary, whose count is what the summariser was sent (the
          // history before it), not what the session sends now: nothing to compact until a request reports again.
          if (endsInSummary(messages)) return
          const tokens = reportedContext(messages) ?? state.lastContext
          const verdict = compactionAtTurnEnd({
            enabled: current.compaction.enabled,
            pricing: scheduler.profile(state).kind,
            atTokens: threshold,
            hostAuto: auto,
            isSubAgent: state.isSubAgent,
            lastContext: tokens,
            model: state.model
          })
          if (!verdict.compact) return
          const session = yield* host.session(sessionID)
          if (session.createdByRun === true || session.reverting === true) return
          if (yield* host.busy(sessionID)) return
          state.lastContext = undefined
          state.compactionAsked = { tokens, threshold }
          yield* Effect.logInfo(
            `compacting session ${sessionID} between turns: its context reached ${tokens} tokens (compaction.atTokens: ${threshold})`
          )
          // A toast now; the note waits until the compaction is done (`compacted`): a message stored now would sit in
          // the history the compaction summarises.
          yield* host.toast({
            title: "Context pruning",
            message: `Compacting the session: ${compactionReason(tokens, threshold)}.`,
            variant: "info"
          }).pipe(Effect.ignore)
          yield* host.compact(sessionID, verdict.model)
        })

        const compacted = Effect.fnUntraced(function*(sessionID: string) {
          const now = yield* Clock.currentTimeMillis
          const done: { asked?: { tokens: number; threshold: number }; origin?: SessionState["origin"] } = {}
          yield* store.ifLoaded(sessionID, (state) => {
            const asked = state.compactionAsked
            if (asked === undefined) return
            state.compactionAsked = undefined
            state.stats = {
              ...state.stats,
              compactions: { count: state.stats.compactions.count + 1, last: { at: now, ...asked } }
            }
            state.dirty = true
            done.asked = asked
            done.origin = state.origin
          })
          if (done.asked === undefined) return
          yield* notifier.post(
            sessionID,
            `Compacted the session between turns: ${compactionReason(done.asked.tokens, done.asked.threshold)}.`,
            done.origin ?? {}
          )
        })

        return Compactor.of({
          hostConfigured: (auto) => Ref.set(hostAuto, auto),
          compacted: Effect.fn("Compactor.compacted")(function*(sessionID: string) {
            yield* compacted(sessionID).pipe(
              Effect.catchTag(
                "HostError",
                (error) => Effect.logWarning("the note of a compaction was not posted", error)
              )
            )
          }),
          turnEnded: Effect.fn("Compactor.turnEnded")(function*(sessionID: string) {
            yield* ask(sessionID).pipe(
              oneAtATime.withPermit,
              Effect.catchTag(
                "HostError",
                (error) => Effect.logWarning(`session ${sessionID} not compacted: the host did not answer`, error)
              )
            )
          })
        })
      })
    )
}

/** The newest assistant message is a compaction's summary. */
const endsInSummary = (messages: ReadonlyArray<unknown>): boolean => {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]
    if (roleOf(message) !== "assistant") continue
    return Predicate.isObject(message) && Predicate.isObject(message.info) && message.info.summary === true
  }
  return false
}
