import { Predicate } from "effect"
import { messageIdOf, partsOf, roleOf } from "./messages.ts"

// Read by hand, not decoded: the analyser computes the visible history on every request it replays (see
// `messages.ts`).
const fieldsOf = (message: unknown): Record<string, unknown> =>
  Predicate.isObject(message) && Predicate.isObject(message.info) ? message.info : {}

const compactionPart = (message: unknown): Record<string, unknown> | undefined =>
  partsOf(message).find((part): part is Record<string, unknown> =>
    Predicate.isObject(part) && part.type === "compaction"
  )

const isFinishedSummary = (message: unknown): boolean => {
  const info = fieldsOf(message)
  return roleOf(message) === "assistant" && info.summary === true && Boolean(info.finish) && !info.error
}

/**
 * The part of a stored session (oldest first, as `session.messages` returns it) that OpenCode 1.18 sends to the
 * model: after a compaction, the compaction request and its summary, then the kept tail of recent turns, then
 * everything after the summary. A port of OpenCode's own filter, so `/dcp context` counts what is really sent.
 */
export const visibleHistory = <M>(chronological: ReadonlyArray<M>): Array<M> => {
  const collected: Array<M> = []
  const summarised = new Set<string>()
  let tailStart: string | undefined
  for (let i = chronological.length - 1; i >= 0; i--) {
    const message = chronological[i]!
    collected.push(message)
    const id = messageIdOf(message)
    if (tailStart !== undefined) {
      if (id === tailStart) break
      continue
    }
    if (roleOf(message) === "user" && id !== undefined && summarised.has(id)) {
      const compaction = compactionPart(message)
      if (compaction === undefined) continue
      if (typeof compaction.tail_start_id !== "string") break
      tailStart = compaction.tail_start_id
      if (id === tailStart) break
      continue
    }
    if (isFinishedSummary(message) && typeof fieldsOf(message).parentID === "string") {
      summarised.add(fieldsOf(message).parentID as string)
    }
  }
  collected.reverse()
  const request = findLastIndex(
    collected,
    (message) => roleOf(message) === "user" && typeof compactionPart(message)?.tail_start_id === "string"
  )
  if (request < 0) return collected
  const requestId = messageIdOf(collected[request])
  const tail = collected.findIndex((message) =>
    messageIdOf(message) === compactionPart(collected[request])!.tail_start_id
  )
  const summary = collected.findIndex((message, i) =>
    i > request && roleOf(message) === "assistant" && fieldsOf(message).summary === true &&
    fieldsOf(message).parentID === requestId
  )
  if (tail >= 0 && tail < request && summary > request) {
    return [
      ...collected.slice(request, summary + 1),
      ...collected.slice(tail, request),
      ...collected.slice(summary + 1)
    ]
  }
  return collected
}

const findLastIndex = <M>(items: ReadonlyArray<M>, predicate: (item: M) => boolean): number => {
  for (let i = items.length - 1; i >= 0; i--) if (predicate(items[i]!)) return i
  return -1
}
