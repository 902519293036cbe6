import { Context, Effect, Layer, Ref } from "effect"
import { compactionAtTurnEnd, thresholdFor, type Verdict } from "../engine/compaction.ts"
import { Config } from "./Config.ts"
import { Host } from "./Host.ts"
import { Scheduler } from "./Scheduler.ts"
import { SessionStore } from "./SessionStore.ts"

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
}>()("opencode-context-pruner/Compactor") {
  static readonly layer: Layer.Layer<Compactor, never, Config | Host | Scheduler | SessionStore> = Layer.effect(
    Compactor,
    Effect.gen(function*() {
      const store = yield* SessionStore
      const host = yield* Host
      const scheduler = yield* Scheduler
      const config = yield* Config
      const hostAuto = yield* Ref.make<boolean | undefined>(undefined)
      const ask = Effect.fnUntraced(function*(sessionID: string) {
        const auto = yield* Ref.get(hostAuto)
        const turn: { verdict: Verdict; tokens: number; threshold: number } = {
          verdict: { compact: false },
          tokens: 0,
          threshold: 0
        }
        const { current } = config
        yield* store.ifLoaded(sessionID, (state) => {
          turn.threshold = thresholdFor(current.compaction.atTokens, state.model)
          turn.verdict = compactionAtTurnEnd({
            enabled: current.compaction.enabled,
            pricing: scheduler.profile(state).kind,
            atTokens: turn.threshold,
            hostAuto: auto,
            isSubAgent: state.isSubAgent,
            lastContext: state.lastContext,
            model: state.model
          })
          turn.tokens = state.lastContext ?? 0
          if (turn.verdict.compact) state.lastContext = undefined
        })
        const { threshold, tokens, verdict } = turn
        if (!verdict.compact) return
        const session = yield* host.session(sessionID)
        if (session.createdByRun === true || session.reverting === true) return
        if (yield* host.busy(sessionID)) return
        yield* Effect.logInfo(
          `compacting session ${sessionID} between turns: its context reached ~${tokens} tokens (compaction.atTokens: ${threshold})`
        )
        // Told in a toast, not a note: a message stored now would sit in the history the compaction summarises.
        yield* host.toast({
          title: "Context pruning",
          message: `Compacting the session: its context reached ~${
            Math.round(tokens / 1000)
          }k tokens (compaction.atTokens in dcp.jsonc; compaction.enabled: false turns this off).`,
          variant: "info"
        }).pipe(Effect.ignore)
        yield* host.compact(sessionID, verdict.model)
      })
      return Compactor.of({
        hostConfigured: (auto) => Ref.set(hostAuto, auto),
        turnEnded: Effect.fn("Compactor.turnEnded")(function*(sessionID: string) {
          yield* ask(sessionID).pipe(
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
