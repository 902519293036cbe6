import { Effect, Predicate } from "effect"
import { systemSection } from "../engine/prompts.ts"
import { isInternalAgent } from "../host/agents.ts"
import type { SessionId } from "../host/sessionId.ts"
import { Config } from "../services/Config.ts"
import { SessionStore } from "../services/SessionStore.ts"
import { Tokenizer } from "../services/Tokenizer.ts"
import type { SessionModel } from "../engine/session.ts"

/**
 * `experimental.chat.system.transform`: adds the short section that tells the model about its pruning tools, and
 * notes the request's model and system size, which the scheduler and `/dcp context` use. OpenCode calls it after
 * `messages.transform` for the same request, so the scheduler decides with those of the request before. Not for
 * sub-agents, not for OpenCode's internal agents, and not for requests outside a session.
 */
export const system = Effect.fn("hooks.system")(function*(
  sessionID: SessionId | undefined,
  parts: Array<string>,
  model: unknown
) {
  if (sessionID === undefined || isInternalAgent(parts)) return
  const { current } = yield* Config
  const section = systemSection({
    discard: current.tools.discard.enabled,
    extract: current.tools.extract.enabled,
    recall: current.tools.recall.enabled,
    fold: current.strategies.fold.enabled
  })
  const store = yield* SessionStore
  const tokenizer = yield* Tokenizer
  yield* store.use(sessionID, (state) =>
    Effect.sync(() => {
      if (state.isSubAgent) return
      const described = modelOf(model)
      if (described !== undefined && JSON.stringify(described) !== JSON.stringify(state.model)) {
        state.model = described
        // Kept with the session: a restarted OpenCode prices its first request under this model.
        state.dirty = true
      }
      state.systemParts = parts
      // Into OpenCode's last system text, not a new one: OpenCode marks each of the first two system messages as a
      // cache breakpoint, and Anthropic allows four, one of which the plugin keeps for itself (src/engine/anchor.ts).
      if (section !== undefined) {
        if (parts.length === 0) parts.push(section)
        else parts[parts.length - 1] = `${parts[parts.length - 1]}\n\n${section}`
      }
      const known = state.systemTexts
      if (known !== undefined && known.length === parts.length && known.every((text, i) => text === parts[i])) return
      let tokens = 0
      for (const text of parts) tokens += tokenizer.estimate(text)
      state.systemTexts = [...parts]
      state.systemTokens = tokens
    }))
})

/** The provider, model and context window of the request's model, as far as the host says. */
const modelOf = (model: unknown): SessionModel | undefined => {
  if (!Predicate.isObject(model) || typeof model.providerID !== "string") return undefined
  const limit = Predicate.isObject(model.limit) ? model.limit.context : undefined
  const output = Predicate.isObject(model.limit) ? model.limit.output : undefined
  const api = Predicate.isObject(model.api) ? model.api : {}
  const id = typeof api.id === "string" ? api.id : typeof model.id === "string" ? model.id : ""
  return {
    providerID: model.providerID,
    modelID: id,
    npm: typeof api.npm === "string" ? api.npm : undefined,
    contextLimit: typeof limit === "number" && limit > 0 ? limit : undefined,
    outputLimit: typeof output === "number" && output > 0 ? output : undefined
  }
}
