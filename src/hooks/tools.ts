import { Effect, Option, Result, Schema } from "effect"
import type { ToolCall } from "../engine/calls.ts"
import { formatTokens } from "../engine/placeholders.ts"
import type { Reason } from "../engine/reasons.ts"
import { formatRecall, originalContent, searchPruned, storedToolParts } from "../engine/recall.ts"
import {
  type Selection,
  validateDiscard,
  validateExtract,
  validateRecall,
  type ValidationContext
} from "../engine/validate.ts"
import type { SessionId } from "../host/sessionId.ts"
import { Config } from "../services/Config.ts"
import { Host } from "../services/Host.ts"
import { Paths } from "../services/Paths.ts"
import { Pruner } from "../services/Pruner.ts"
import { SessionStore, type Unsaved } from "../services/SessionStore.ts"
import type { ToolIndex } from "../engine/calls.ts"
import { ToolCache } from "../services/ToolCache.ts"
import { changed, newestId, type SessionState, stableId } from "../engine/session.ts"
import { publishStatus } from "./status.ts"
import { protectionFor, recallHintFor } from "../engine/request.ts"

/** A tool call the plugin refuses, with the message the model gets back. */
export class ToolRejected extends Schema.TaggedError<ToolRejected>()("ToolRejected", {
  message: Schema.String
}) {}

/**
 * `discard`: prunes the outputs of the given calls, for a reason ("completion" or "noise"). `messageID` is the
 * assistant message holding the call (OpenCode's tool context gives it): an undo that removes it undoes the prune.
 */
export const discard = (sessionID: SessionId, ids: ReadonlyArray<unknown>, messageID?: string) =>
  prune(
    sessionID,
    messageID,
    "discard",
    (context) => validateDiscard(ids, context),
    (selection, pruned) =>
      `Discarded ${
        describe(selection, pruned)
      } (${selection.reason}). From the next request on, placeholders replace them. ${carryOn}`
  )

/**
 * `extract`: prunes the outputs of the given calls; the distilled findings stay as this call's own arguments.
 * `messageID` as for `discard`.
 */
export const extract = (
  sessionID: SessionId,
  ids: ReadonlyArray<unknown>,
  distillation: ReadonlyArray<unknown>,
  messageID?: string
) =>
  prune(
    sessionID,
    messageID,
    "extract",
    (context) => validateExtract(ids, distillation, context),
    (selection, pruned) =>
      `Extracted ${
        describe(selection, pruned)
      }. Your distilled findings stay in the conversation as the arguments of this call. ${carryOn}`,
    (state, selection) => {
      selection.calls.forEach(({ call, id }, i) => {
        state.findings.push({ id, tool: call.tool, text: selection.findings[i]! })
      })
    }
  )

/**
 * `recall`: from the stored session (which pruning never changes), the original content of the pruned or folded calls
 * named by `ids`, or the lines of all of them that hold the words of `query`.
 */
export const recall = Effect.fn("tools.recall")(function*(
  sessionID: SessionId,
  args: { readonly ids?: ReadonlyArray<unknown> | null | undefined; readonly query?: unknown }
) {
  const store = yield* SessionStore
  const host = yield* Host
  const cache = yield* ToolCache
  return yield* store.use(sessionID, (state) =>
    Effect.gen(function*() {
      if (state.isSubAgent) return yield* new ToolRejected({ message: "Nothing is pruned in sub-agent sessions." })
      const callOf = new Map([...state.ids].map(([callID, id]) => [id, callID] as const))
      const chosen = validateRecall(args, {
        callOf: (id) => callOf.get(id),
        pruned: state.pruned,
        folded: state.folded
      })
      if (Result.isFailure(chosen)) return yield* new ToolRejected({ message: chosen.failure })
      const request = chosen.success
      const calls = request.kind === "ids"
        ? request.calls
        : [...new Set([...state.pruned.keys(), ...state.folded.keys()])].flatMap((callID) => {
          const id = state.ids.get(callID)
          return id === undefined ? [] : [{ id, callID }]
        })
      if (calls.length === 0) {
        return yield* new ToolRejected({
          message:
            "Nothing was recalled.\nNo output is pruned or folded in this conversation: there is nothing to search."
        })
      }
      const stored = storedToolParts(yield* host.messages(sessionID))
      const index = Option.getOrUndefined(yield* cache.latest(sessionID))
      const originals = calls.map(({ callID, id }) => {
        const part = stored.get(callID)
        const call = index?.byCallId.get(callID)
        const tool = call?.tool ?? (typeof part?.tool === "string" ? part.tool : "tool")
        const label = call === undefined || call.keyParameter === "" ? tool : `${tool} ${call.keyParameter}`
        const reason = state.pruned.get(callID)?.reason ?? ""
        return { id, label, content: part === undefined ? undefined : originalContent(part, reason) }
      })
      if (request.kind === "ids") return formatRecall(originals)
      return searchPruned(
        request.query,
        originals.flatMap((original) =>
          original.content === undefined ? [] : [{ ...original, content: original.content }]
        )
      )
    }))
})

const prune = <S extends Selection>(
  sessionID: SessionId,
  messageID: string | undefined,
  reason: Reason,
  validate: (context: ValidationContext) => Result.Result<S, string>,
  reply: (selection: S, tokens: number) => string,
  keep?: (state: SessionState, selection: S) => void
) =>
  Effect.gen(function*() {
    const store = yield* SessionStore
    const cache = yield* ToolCache
    const pruner = yield* Pruner
    const { current: config } = yield* Config
    const paths = yield* Paths
    const answer = yield* store.use(sessionID, (state) =>
      Effect.gen(function*() {
        if (state.isSubAgent)
          return yield* new ToolRejected({ message: "Pruning is not available in sub-agent sessions." })
        const latest = yield* cache.latest(sessionID)
        if (Option.isNone(latest)) {
          return yield* new ToolRejected({
            message: "No tool calls are known in this conversation yet: there is nothing to prune."
          })
        }
        const index = latest.value
        const context: ValidationContext = {
          byId: byStableId(state, index),
          pruned: state.pruned,
          protection: protectionFor(config, paths, index),
          protectedTools: config.tools.settings.protectedTools,
          turnProtection: config.turnProtection.turns
        }
        const selection = validate(context)
        if (Result.isFailure(selection))
          return yield* new ToolRejected({ message: selection.failure })
        const chosen = selection.success
        const findings = "findings" in chosen ? (chosen.findings as ReadonlyArray<string>) : undefined
        const recorded = yield* pruner.apply(
          state,
          chosen.calls.map(({ call, id }, i) => ({
            call,
            reason,
            id,
            distillation: findings?.[i],
            message: messageID
          })),
          recallHintFor(config)
        )
        keep?.(state, chosen)
        state.nudgeAfter = newestId(state)
        changed(state)
        yield* publishStatus(state)
        return reply(chosen, recorded.reduce((sum, entry) => sum + entry.tokens, 0))
      }))
    return withUnsaved(answer, yield* store.persist(sessionID))
  })

/** `answer`, and when the change it reports could not be saved, a sentence saying so (the user gets a toast). */
export const withUnsaved = (answer: string, unsaved: Option.Option<Unsaved>): string =>
  Option.match(unsaved, { onNone: () => answer, onSome: (why) => `${answer}\n${unsavedNote(why)}` })

/** That a prune or restore could not be saved: it holds until OpenCode restarts, and is lost then. */
const unsavedNote = ({ folder, reason }: Unsaved): string =>
  `Not saved: the context pruning plugin cannot write its state folder ${folder} (${reason}). This holds until OpenCode restarts, and is undone then.`

/** What the model reads after a prune: back to its task, rather than on to more pruning. */
const carryOn = "Carry on with your task."

const byStableId = (state: SessionState, index: ToolIndex): Map<number, ToolCall> =>
  new Map(index.calls.map((call) => [stableId(state, call.callID), call]))

const describe = (selection: Selection, tokens: number): string => {
  const names = selection.calls.map(({ call, id }) =>
    `${id} ${call.tool}${call.keyParameter === "" ? "" : ` ${call.keyParameter}`}`
  )
  const count = selection.calls.length
  return `${count} output${count === 1 ? "" : "s"}, ${formatTokens(tokens)} tokens: ${names.join(", ")}`
}
