import { Effect } from "effect"
import { findSessionId } from "../host/messages.ts"
import { SessionStore } from "../services/SessionStore.ts"
import { type ToolIndex, ToolCache } from "../services/ToolCache.ts"
import { type SessionState, stableId } from "../state/session.ts"

/**
 * `experimental.chat.messages.transform`: runs before every model request on a fresh copy of the history, which
 * is mutated in place (OpenCode ignores a replaced array). Sub-agent sessions and OpenCode's compaction
 * summariser are left exactly as they came.
 */
export const transform = Effect.fn("hooks.transform")(function*(messages: Array<unknown>) {
  const sessionID = findSessionId(messages)
  if (sessionID === undefined) return
  const store = yield* SessionStore
  const cache = yield* ToolCache
  yield* store.use(sessionID, (state) =>
    Effect.gen(function*() {
      if (state.isSubAgent) return
      if (state.compacting) {
        state.compacting = false
        return
      }
      const index = yield* cache.sync(sessionID, messages)
      followCompaction(state, index)
      for (const call of index.changed) stableId(state, call.callID)
    }))
})

/**
 * After a compaction OpenCode sends only the summary and what followed it (plus a tail of recent turns), so the
 * calls that vanished are forgotten. Numbering is not restarted: an ID, once given, is never given again.
 */
const followCompaction = (state: SessionState, index: ToolIndex) => {
  if (index.summaryId === undefined || index.summaryId === state.summaryId) return
  state.summaryId = index.summaryId
  for (const callID of state.ids.keys()) {
    if (!index.byCallId.has(callID)) {
      state.ids.delete(callID)
      state.pruned.delete(callID)
    }
  }
  state.dirty = true
}
