import { Context, Effect, Layer, Option, Predicate } from "effect"
import {
  fileFieldsOf,
  keyParameterOf,
  sameInput,
  signatureOf,
  type ToolCall,
  type ToolIndex,
  type UserTurn
} from "../engine/calls.ts"
import { diagnosticsAt } from "../engine/diagnostics.ts"
import { linesShown } from "../engine/placeholders.ts"
import { changesFile } from "../engine/strategies/supersedeWrites.ts"
import { LruMap } from "../data/LruMap.ts"
import { safeJson } from "../data/boundedJson.ts"
import { decodeToolPart, isTypedByUser, messageIdOf } from "../host/messages.ts"
import type { ToolPart, ToolStatus } from "../host/schema.ts"
import { Paths } from "./Paths.ts"
import { Tokenizer } from "./Tokenizer.ts"

interface SessionIndex {
  readonly byCallId: Map<string, ToolCall>
  /**
   * Calls that left the view, the most recent: what a call under their ID is compared with when it comes back. The
   * session may still hold their numbers and prunes (a request without their message, for a host's glitch).
   */
  readonly gone: LruMap<string, ToolCall>
  latest: ToolIndex | undefined
  /** Where the latest pass's newest message was, and its ID. */
  newest: { readonly at: number; readonly id: string | undefined } | undefined
}

/** Per-session index of tool calls, updated incrementally: a call already indexed in its final state is not decoded or counted again. */
export class ToolCache extends Context.Service<ToolCache, {
  readonly sync: (sessionID: string, messages: ReadonlyArray<unknown>) => Effect.Effect<ToolIndex>
  /** The view of the session's latest request: the calls the model could see and name. */
  readonly latest: (sessionID: string) => Effect.Effect<Option.Option<ToolIndex>>
  readonly forget: (sessionID: string) => Effect.Effect<void>
}>()("opencode-context-pruner/ToolCache") {
  static readonly layer: Layer.Layer<ToolCache, never, Paths | Tokenizer> = Layer.effect(
    ToolCache,
    Effect.gen(function*() {
      const tokenizer = yield* Tokenizer
      const { projectDir, worktree } = yield* Paths
      const sessions = new LruMap<string, SessionIndex>(maxSessions)
      let passes = 0

      const count = (call: ToolCall, part: Record<string, unknown>) => {
        const state = part.state as Record<string, unknown>
        call.outputTokens = call.status === "completed" && call.hasTextOutput && !call.compacted
          ? tokenizer.estimate(state.output as string)
          : 0
        const at = call.outputTokens > 0 && changesFile(call.tool) ? diagnosticsAt(state.output as string) : -1
        call.diagnosticsTokens = at < 0 ? 0 : tokenizer.estimate((state.output as string).slice(at))
        const inputTokens: Record<string, number> = {}
        let totalTokens = call.outputTokens
        let frameTokens = frameOverhead + tokenizer.estimate(call.tool) + tokenizer.estimate(call.callID)
        for (const key in call.input) {
          const value = call.input[key]
          frameTokens += tokenizer.estimate(key)
          if (typeof value !== "string") {
            frameTokens += tokenizer.estimate(jsonOf(value))
            continue
          }
          if (value.length === 0) continue
          const tokens = tokenizer.estimate(value)
          inputTokens[key] = tokens
          totalTokens += tokens
        }
        call.inputTokens = inputTokens
        call.totalTokens = totalTokens
        call.frameTokens = frameTokens
      }

      // Runs on every request over the whole history, so it reads infos and parts by hand: a Schema decode costs
      // about 4 µs per info and more per part, milliseconds per request at a few thousand messages (the benchmark's
      // median transform). Only a tool part that is new or changed is decoded, with `decodeToolPart`.
      const index = (sessionID: string, messages: ReadonlyArray<unknown>): ToolIndex => {
        let session = sessions.get(sessionID)
        if (session === undefined) {
          session = { byCallId: new Map(), gone: new LruMap(maxGone), latest: undefined, newest: undefined }
          sessions.set(sessionID, session)
        }
        const byCallId = session.byCallId
        const previous = session.latest
        const previousCalls = previous?.calls
        const previousPass = previous?.pass
        const pass = ++passes
        const calls: Array<ToolCall> = []
        const changed: Array<ToolCall> = []
        const replaced: Array<string> = []
        let turns = 0
        let summaryId: string | undefined
        let lastUserMessage = -1
        const userTurns: Array<UserTurn> = []
        const reasoningMessages: Array<number> = []
        let textChars = 0
        let callTokens = 0
        const newest = session.newest
        const moved = newest !== undefined && messageIdOf(messages[newest.at]) !== newest.id
        // Looked for only once it moved: a request that lost a message in its middle still holds it.
        const shrank = moved &&
          (newest.id === undefined || !messages.some((message) => messageIdOf(message) === newest.id))
        session.newest = { at: messages.length - 1, id: messageIdOf(messages[messages.length - 1]) }
        let appendOnly = previous !== undefined && !moved
        let sawNew = false
        // A view whose calls are where they were can still have other turns (a user message missing, or back): what was
        // derived of the turns (a fold's place) no longer holds then.
        const previousTurns = previous?.userTurns
        const openTurn = (turn: UserTurn) => {
          const was = previousTurns?.[userTurns.length]
          if (was !== undefined && (was.key !== turn.key || was.firstCall !== turn.firstCall)) appendOnly = false
          userTurns.push(turn)
        }
        // What comes before the user's first message in the view (after a compaction: its summary) is a turn too.
        if (messages.length > 0 && !isTypedByUser(messages[0])) {
          openTurn({ key: messageIdOf(messages[0]) ?? "@0", messageIndex: 0, firstCall: 0, reasoningChars: 0 })
        }
        for (let m = 0; m < messages.length; m++) {
          const message = messages[m]
          if (!Predicate.isObject(message)) continue
          const info = message.info
          if (Predicate.isObject(info)) {
            if (info.role === "assistant") {
              if (info.summary === true) summaryId = typeof info.id === "string" ? info.id : undefined
            } else if (info.role === "user" && isTypedByUser(message)) {
              lastUserMessage = m
              openTurn({
                key: messageIdOf(message) ?? `@${m}`,
                messageIndex: m,
                firstCall: calls.length,
                reasoningChars: 0
              })
            }
          }
          const parts = message.parts
          if (!Array.isArray(parts)) continue
          for (let p = 0; p < parts.length; p++) {
            const part = parts[p]
            if (!Predicate.isObject(part)) continue
            const type = part.type
            if (type === "step-start") {
              turns++
              continue
            }
            if (type === "text") {
              if (typeof part.text === "string" && part.ignored !== true) textChars += part.text.length
              continue
            }
            if (type === "reasoning") {
              if (reasoningMessages[reasoningMessages.length - 1] !== m) reasoningMessages.push(m)
              // OpenCode sends reasoning only when it is signed (Claude's thinking blocks, src/analysis/wire.ts).
              if (typeof part.text === "string" && isSigned(part)) {
                textChars += part.text.length
                const turn = userTurns[userTurns.length - 1]
                if (turn !== undefined) turn.reasoningChars += part.text.length
              }
              continue
            }
            if (type !== "tool") continue
            const callID = part.callID
            // Most calls sit where the previous pass found them: comparing their ID there spares hashing the request's
            // fresh copy of it. A call decoded again in this pass is no longer that pass's (`seen` is reset).
            const guess = previousCalls?.[calls.length]
            let known = typeof callID !== "string"
              ? undefined
              : guess !== undefined && guess.seen === previousPass && guess.callID === callID
              ? guess
              : byCallId.get(callID)
            // A second part under a call ID this request already holds is left alone: the index holds a call once.
            if (known !== undefined && known.seen === pass) continue
            if (known === undefined && typeof callID === "string") {
              const left = session.gone.get(callID)
              if (left !== undefined) {
                session.gone.delete(callID)
                if (!sameContent(left, part)) replaced.push(callID)
              }
            }
            // A call is its ID and its content: an ID that comes back with another tool or input is a new call.
            if (known !== undefined && !sameContent(known, part)) {
              replaced.push(known.callID)
              known.seen = 0
              known = undefined
              appendOnly = false
            }
            let call = known
            if (known === undefined || !isFinalAndUnchanged(known, part)) {
              const decoded = decodeToolPart(part)
              if (Option.isNone(decoded)) continue
              call = fromPart(decoded.value, known, projectDir, worktree)
              if (known !== undefined) known.seen = 0
              if (call.finalPass === undefined && isFinal(call.status)) call.finalPass = pass
              count(call, part)
              byCallId.set(call.callID, call)
              changed.push(call)
              if (known === undefined) sawNew = true
              else appendOnly = false
            } else if (
              sawNew || known.position !== calls.length || known.turn !== turns || known.messageIndex !== m ||
              known.partIndex !== p
            ) {
              appendOnly = false
            }
            if (call === undefined) continue
            call.turn = turns
            call.userTurn = Math.max(0, userTurns.length - 1)
            call.position = calls.length
            call.messageIndex = m
            call.partIndex = p
            call.seen = pass
            calls.push(call)
            callTokens += call.totalTokens + call.frameTokens
          }
        }
        const vanished: Array<string> = []
        if (calls.length < byCallId.size) {
          for (const [callID, call] of byCallId) {
            if (call.seen !== pass) {
              vanished.push(callID)
              byCallId.delete(callID)
              // Kept whatever became of the session's records of it (an undo or a compaction forgets them): compared
              // with a call that comes back under its ID, it can only make that a new call, which it then is anyway.
              session.gone.set(callID, call)
            }
          }
        }
        const result: ToolIndex = {
          calls,
          byCallId,
          turns,
          userTurns,
          reasoningMessages,
          summaryId,
          lastUserMessage,
          textChars,
          callTokens,
          changed,
          vanished,
          replaced,
          shrank,
          pass,
          previousPass: previous?.pass,
          appendOnly: appendOnly && vanished.length === 0 && userTurns.length >= (previousTurns?.length ?? 0)
        }
        session.latest = result
        return result
      }

      return ToolCache.of({
        sync: (sessionID, messages) => Effect.sync(() => index(sessionID, messages)),
        latest: (sessionID) => Effect.sync(() => Option.fromNullishOr(sessions.get(sessionID)?.latest)),
        forget: (sessionID) => Effect.sync(() => void sessions.delete(sessionID))
      })
    })
  )
}

/**
 * The wrappers of a call and its result on the wire (a tool-use block and its ID, a result block naming that ID), and
 * a completed call's framing text, in tokens: a rough constant, the same for every call.
 */
const frameOverhead = 16

/** A value as the host serialises it into a request; one that cannot be serialised is counted as empty. */
const jsonOf = (value: unknown): string => {
  try {
    return JSON.stringify(value) ?? ""
  } catch {
    return ""
  }
}

/** Sessions kept indexed in memory; an evicted session is re-indexed from its next request. */
const maxSessions = 32

/** Calls kept to compare with after they left the view, per session: the most recent. */
const maxGone = 2_000

const isFinal = (status: ToolStatus) => status === "completed" || status === "error"

/** Whether a tool part is the call indexed under its ID: the same tool, the same input. */
const sameContent = (call: ToolCall, part: Record<string, unknown>): boolean =>
  part.tool === call.tool && sameInput(call.input, Predicate.isObject(part.state) ? part.state.input ?? {} : {})

/**
 * Whether a part is the call as indexed in its final state: the same status, compaction and result length. OpenCode
 * changes no result once a call is final but by clearing it (compaction); a host that rewrote one to the same length
 * would keep the counts of the first.
 */
const isFinalAndUnchanged = (call: ToolCall, part: Record<string, unknown>): boolean => {
  if (!isFinal(call.status)) return false
  const state = part.state
  if (!Predicate.isObject(state) || state.status !== call.status) return false
  return call.compacted === isCompacted(state) && call.resultLength === resultLengthOf(state)
}

/** The length of a call's result (a completed call's output, a failed call's error), -1 for one that is no text. */
const resultLengthOf = (state: Readonly<Record<string, unknown>>): number => {
  const result = state.status === "error" ? state.error : state.output
  return typeof result === "string" ? result.length : -1
}

const isCompacted = (state: Record<string, unknown>): boolean =>
  Predicate.isObject(state.time) && state.time.compacted !== undefined && state.time.compacted !== null

/**
 * Paths are resolved against the project directory, as OpenCode's tools resolve a relative path (a patch's are always
 * relative), and shown relative to the worktree.
 */
const fromPart = (part: ToolPart, previous: ToolCall | undefined, directory: string, worktree: string): ToolCall => {
  const input = part.state.input ?? {}
  const files = fileFieldsOf(part.tool, input, directory)
  return {
    callID: part.callID,
    tool: part.tool,
    input,
    status: part.state.status,
    error: part.state.status === "error" ? errorText(part.state.error) : undefined,
    hasTextOutput: typeof part.state.output === "string",
    compacted: isCompacted(part.state as Record<string, unknown>),
    resultLength: resultLengthOf(part.state),
    ...(isDirectoryListing(part) ? { ...files, contentFiles: [], copiedFiles: [] } : files),
    keyParameter: keyParameterOf(part.tool, input, worktree),
    signature: signatureOf(part.tool, input),
    outputTokens: 0,
    diagnosticsTokens: 0,
    inputTokens: {},
    totalTokens: 0,
    frameTokens: 0,
    exitCode: exitCodeOf(part.state.metadata),
    lines: part.tool === "read" && typeof part.state.output === "string" ? linesShown(part.state.output) : undefined,
    id: previous?.id,
    turn: previous?.turn ?? 0,
    userTurn: previous?.userTurn ?? 0,
    position: previous?.position ?? 0,
    messageIndex: previous?.messageIndex ?? 0,
    partIndex: previous?.partIndex ?? 0,
    seen: previous?.seen ?? 0,
    finalPass: previous?.finalPass
  }
}

/**
 * OpenCode 1.18's read tool also lists a directory (`<path>…</path>` then `<type>directory</type>`): such a read shows
 * no file's content, so it is no working file's copy and takes none of the `keepFiles` places.
 */
const isDirectoryListing = (part: ToolPart): boolean =>
  part.tool === "read" && typeof part.state.output === "string" &&
  /^<path>[^\n]*<\/path>\n<type>directory<\/type>/.test(part.state.output)

const isSigned = (part: Record<string, unknown>): boolean =>
  Predicate.isObject(part.metadata) && Predicate.isObject(part.metadata.anthropic) &&
  part.metadata.anthropic.signature !== undefined && part.metadata.anthropic.signature !== null

const exitCodeOf = (metadata: unknown): number | undefined =>
  Predicate.isObject(metadata) && typeof metadata.exit === "number" && Number.isInteger(metadata.exit)
    ? metadata.exit
    : undefined

const errorText = (error: unknown): string =>
  typeof error === "string" ? error : error === undefined ? "" : safeJson(error)
