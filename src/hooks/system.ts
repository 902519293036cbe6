import { Effect } from "effect"
import { systemSection } from "../engine/prompts.ts"
import { isInternalAgent } from "../host/agents.ts"
import { Config } from "../services/Config.ts"
import { SessionStore } from "../services/SessionStore.ts"
import { Tokenizer } from "../services/Tokenizer.ts"

/**
 * `experimental.chat.system.transform`: adds the short section that tells the model about its pruning tools.
 * Not for sub-agents, not for OpenCode's internal agents, and not for requests outside a session.
 */
export const system = Effect.fn("hooks.system")(function*(sessionID: string | undefined, parts: Array<string>) {
  if (sessionID === undefined || isInternalAgent(parts)) return
  const { current } = yield* Config
  const section = systemSection({
    discard: current.tools.discard.enabled,
    extract: current.tools.extract.enabled,
    recall: false
  })
  if (section === undefined) return
  const store = yield* SessionStore
  const tokenizer = yield* Tokenizer
  yield* store.use(sessionID, (state) =>
    Effect.gen(function*() {
      if (state.isSubAgent) return
      parts.push(section)
      const counts = yield* Effect.forEach(parts, tokenizer.count)
      state.systemTokens = counts.reduce((sum, n) => sum + n, 0)
    }))
})
