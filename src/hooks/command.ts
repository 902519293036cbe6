import { Clock, Effect, Option, Predicate } from "effect"
import { reportedCacheUsage, reportedContext } from "../commands/breakdown.ts"
import { formatContext, formatHelp, formatStats, problemLines } from "../commands/format.ts"
import { type DcpCommand, parseCommand } from "../commands/parse.ts"
import { sweepSelection } from "../commands/select.ts"
import { reasonName } from "../engine/reasons.ts"
import { idColumn, idRanges } from "../engine/notes.ts"
import { formatTokens } from "../engine/placeholders.ts"
import { partsOf, roleOf } from "../host/messages.ts"
import type { SessionId } from "../host/sessionId.ts"
import { visibleHistory } from "../host/view.ts"
import { Config, currentProblems, reportNote } from "../services/Config.ts"
import { Host } from "../services/Host.ts"
import { Ledger } from "../services/Ledger.ts"
import { Notifier } from "../services/Notifier.ts"
import { Paths } from "../services/Paths.ts"
import { Pruner } from "../services/Pruner.ts"
import { SessionStore } from "../services/SessionStore.ts"
import { ToolCache } from "../services/ToolCache.ts"
import { callsInEffect, contextParts, figuresOf, reportedNext } from "../engine/figures.ts"
import { type SessionState, stableId } from "../engine/session.ts"
import { refreshConfig } from "./session.ts"
import { withUnsaved } from "./tools.ts"
import { protectionFor, recallHintFor } from "../engine/request.ts"
import { publishStatus } from "./status.ts"

const subAgentReply =
  "This is a sub-agent session: context pruning leaves it untouched, so there is nothing to show or change here."

/** What a subcommand answers; `refused`: its arguments were wrong, so it did nothing (a failed command for clients). */
interface Reply {
  readonly text: string
  readonly refused?: boolean
}

const done = (text: string): Reply => ({ text })
const refused = (text: string): Reply => ({ text, refused: true })

/**
 * `/dcp <subcommand>`: computes the reply, then delivers it as a note the model never sees. Returns the stored
 * note (when it could be stored now) for the command's HTTP response, and whether the command was refused.
 */
export const dcp = Effect.fn("hooks.dcp")(function*(sessionID: SessionId, args: string) {
  const store = yield* SessionStore
  const notifier = yield* Notifier
  const host = yield* Host
  const command = parseCommand(args)
  // A command can be the user's first contact with the plugin: the config's problems come first, in the note too.
  const problems = yield* refreshConfig
  const computed = yield* store.use(
    sessionID,
    (state) =>
      state.isSubAgent && command._tag !== "help" && command._tag !== "invalid"
        ? Effect.succeed(done(subAgentReply))
        : Effect.tap(run(command, state), () => publishStatus(state))
  )
  // A restore or sweep is made at once: the note says when it will not outlast the process.
  const changes = (command._tag === "restore" || command._tag === "sweep") && computed.refused !== true
  const reply = changes ? { ...computed, text: withUnsaved(computed.text, yield* store.persist(sessionID)) } : computed
  const origin = yield* store.use(sessionID, (state) => Effect.succeed(state.origin))
  // `/dcp stats` and `/dcp context` name the problems of the files in effect themselves, as long as they last.
  const { reports } = yield* Config
  const shown = command._tag === "stats" || command._tag === "context"
    ? problems.filter((report) =>
      report.problems.length === 0 || !reports.some((current) => current.file === report.file)
    )
    : problems
  const text = [...shown.map(reportNote), reply.text].join("\n\n")
  const stored = yield* notifier.post(sessionID, text, origin)
  if (!(yield* host.busy(sessionID))) {
    yield* host.announceIdle(sessionID)
    yield* removeIfThrowaway(sessionID).pipe(
      Effect.catchTag(
        "HostError",
        (error) => Effect.logWarning("/dcp: a session made for the command was not removed", error)
      )
    )
  }
  return { stored, refused: reply.refused === true, reply: reply.text }
})

const isNote = (message: unknown): boolean =>
  roleOf(message) === "user" &&
  partsOf(message).every((part) => Predicate.isObject(part) && part.type === "text" && part.ignored === true)

/**
 * `opencode run --command dcp ...` without `--session` makes a new session for the one command, and prints the note
 * as it is stored. Left there, each such run would add an empty "New session" to the user's list; a session that
 * `opencode run` made and that holds nothing but notes is deleted once its note is out.
 */
const removeIfThrowaway = Effect.fnUntraced(function*(sessionID: SessionId) {
  const host = yield* Host
  if ((yield* host.session(sessionID)).createdByRun !== true) return
  if ((yield* host.messages(sessionID)).every(isNote)) yield* host.remove(sessionID)
})

const run = Effect.fnUntraced(function*(command: DcpCommand, state: SessionState) {
  switch (command._tag) {
    case "help":
      return done(formatHelp())
    case "invalid":
      // What was wrong and what is valid, in a line or two: the whole help is one `/dcp help` away.
      return refused(
        command.restore === true
          ? `${command.problem} ${restorable(state) ?? "No call is pruned now."}`
          : command.problem
      )
    case "stats":
      return done(yield* stats(state))
    case "context":
      return done(yield* context(state))
    case "sweep":
      return done(yield* sweep(state, command.count))
    case "restore":
      return yield* restore(state, command.target)
  }
})

/** The IDs of the calls pruned now, in order; a folded call is restored with its turn, pruned of its own or not. */
const prunedIds = (state: SessionState): ReadonlyArray<readonly [number, string]> =>
  [...new Set([...state.pruned.keys(), ...state.folded.keys()])].flatMap((callID) => {
    const id = state.ids.get(callID)
    return id === undefined ? [] : [[id, callID] as const]
  }).sort((a, b) => a[0] - b[0])

/**
 * Which IDs `/dcp restore` takes now, as ranges (`1-12, 15`), and where the user sees them; undefined when none is
 * pruned.
 */
const restorable = (state: SessionState): string | undefined => {
  const ids = prunedIds(state).map(([id]) => id)
  if (ids.length === 0) return undefined
  return `Pruned now: ${idRanges(ids)} (the number before each call in the pruning notes).`
}

/**
 * The session's calls as its latest request showed them; in a process that has not sent a request of the session yet
 * (OpenCode started again), as the stored session shows them, so that every command works as it did before the
 * restart.
 */
const indexOf = Effect.fnUntraced(function*(state: SessionState) {
  const cache = yield* ToolCache
  const latest = yield* cache.latest(state.sessionID)
  if (Option.isSome(latest)) return latest.value
  const host = yield* Host
  const stored = visibleHistory(yield* host.messages(state.sessionID))
  const index = yield* cache.sync(state.sessionID, stored)
  for (const call of index.calls) call.id ??= stableId(state, call.callID)
  return index
})

const stats = Effect.fnUntraced(function*(state: SessionState) {
  const ledger = yield* Ledger
  const host = yield* Host
  const config = yield* Config
  const lifetime = yield* ledger.lifetime
  const now = yield* Clock.currentTimeMillis
  // The provider's figures are a bonus: without the stored session, the plugin's own statistics still answer.
  const cache = yield* host.messages(state.sessionID).pipe(
    Effect.map(reportedCacheUsage),
    Effect.catchTag(
      "HostError",
      (error) => Effect.as(Effect.logWarning("/dcp stats: the stored session could not be read", error), undefined)
    )
  )
  const { ttlSeconds, pressure } = config.current.cache
  return formatStats({
    session: state.stats,
    figures: figuresOf(state, yield* indexOf(state), ttlSeconds),
    lifetime,
    now,
    cache,
    reasonName,
    ttlSeconds,
    pressure,
    problems: currentProblems(config.reports)
  })
})

/**
 * `/dcp context`: the figures of the next request (src/engine/figures.ts), broken down as the dialog breaks them down,
 * the provider's count of the latest request taken as its size as the panel takes it.
 */
const context = Effect.fnUntraced(function*(state: SessionState) {
  const host = yield* Host
  const config = yield* Config
  const index = yield* indexOf(state)
  if (index.calls.length === 0 && index.textChars === 0) {
    const problems = problemLines(currentProblems(config.reports))
    return [...problems, ...(problems.length === 0 ? [] : [""]), nothingYet].join("\n")
  }
  const view = visibleHistory(yield* host.messages(state.sessionID))
  const { ttlSeconds, pressure } = config.current.cache
  const figures = figuresOf(state, index, ttlSeconds)
  const cost = state.stats.cost
  return formatContext({
    context: contextParts(figures.context!, {
      limit: state.model?.contextLimit,
      changed: figures.changedSinceSent
    }),
    // The provider's count describes the latest request: for the next one, less what was pruned or restored since.
    reported: reportedNext(reportedContext(view), figures.context, figures.changedSinceSent),
    figures,
    session: state.stats,
    ...(cost.requests > 0 && (cost.saved > 0 || cost.rebuilt > 0) ? { cost } : {}),
    problems: currentProblems(config.reports),
    now: yield* Clock.currentTimeMillis,
    ttlSeconds,
    pressure
  })
})

const nothingYet =
  "Nothing to show yet: no message has been sent to the model in this session. After the first one, /dcp context shows where the tokens of each request go."

const sweep = Effect.fnUntraced(function*(state: SessionState, count: number | undefined) {
  const pruner = yield* Pruner
  const { current: config } = yield* Config
  const paths = yield* Paths
  const index = yield* indexOf(state)
  if (index.calls.length === 0) return "Nothing to sweep: no tool has been called in this session yet."
  const selected = sweepSelection({
    calls: index.calls,
    lastUserMessage: index.lastUserMessage,
    count,
    pruned: state.pruned,
    protection: protectionFor(config, paths, index),
    protectedTools: config.commands.protectedTools
  })
  const recorded = yield* pruner.apply(
    state,
    selected.map((call) => ({ call, reason: "sweep" as const, id: stableId(state, call.callID) })),
    recallHintFor(config)
  )
  const plural = (n: number) => `${n} call${n === 1 ? "" : "s"}`
  if (recorded.length === 0) {
    if (count !== undefined) return "Nothing to sweep: every call is already pruned, protected or empty."
    return index.calls.some((call) => call.messageIndex > index.lastUserMessage)
      ? "Nothing to sweep since your last message: every call there is already pruned, protected or empty."
      : "Nothing to sweep since your last message: no tool was called there."
  }
  const tokens = recorded.reduce((total, entry) => total + entry.tokens, 0)
  const id = idColumn(recorded.map((entry) => entry.id))
  const lines = recorded.map((entry) => `  ${id(entry.id)}  ${entry.tool} ${entry.keyParameter}`.trimEnd())
  // Which calls `/dcp sweep n` takes: the newest n that are not pruned, protected or empty, wherever they are.
  const what = count === undefined
    ? `${plural(recorded.length)} since your last message`
    : recorded.length === count
    ? `${plural(recorded.length)}, the ${
      count === 1 ? "newest" : `${count} newest`
    } not already pruned, protected or empty`
    : `${plural(recorded.length)}, every call not already pruned, protected or empty (of the ${count} asked for)`
  return [
    `Swept ${what} (${idRanges(recorded.map((entry) => entry.id))}): ${
      formatTokens(tokens)
    } tokens out of every request from the next one on.`,
    ...lines
  ].join("\n")
})

const restore = Effect.fnUntraced(function*(state: SessionState, target: "all" | number) {
  const pruner = yield* Pruner
  const pruned = prunedIds(state)
  if (pruned.length === 0) return done("Nothing to restore: no call is pruned in this session.")
  const chosen = target === "all" ? pruned : pruned.filter(([id]) => id === target)
  if (chosen.length === 0) {
    const known = [...state.ids.values()].includes(target as number)
    return refused(
      `${known ? `id ${target} is not pruned` : `There is no call with id ${target} in this session`}. ${
        restorable(state)
      }`
    )
  }
  // Described before the restore: what the call takes out of every request (its share of a fold included), and the
  // calls its turn's fold stands for, which unfold with it.
  const firstCallID = chosen[0]![1]
  const own = target === "all"
    ? undefined
    : callsInEffect(state, yield* indexOf(state)).find((call) => call.callID === firstCallID)
  const fold = target === "all" ? undefined : state.folds.get(state.folded.get(firstCallID) ?? "")
  const foldedIds = fold?.calls.flatMap((callID) => {
    const id = state.ids.get(callID)
    return id === undefined ? [] : [id]
  }) ?? []
  const stayPruned = fold?.calls.filter((callID) => callID !== firstCallID && state.pruned.has(callID)) ?? []
  const tokens = pruner.restore(state, chosen.map(([, callID]) => callID))
  const again = `${formatTokens(tokens)} tokens are sent to the model again from the next request on`
  if (target === "all") {
    return done(
      `Restored ${chosen.length === 1 ? "the 1 pruned call" : `all ${chosen.length} pruned calls`}: ${again}.`
    )
  }
  if (fold === undefined) return done(`Restored id ${target}: ${again}.`)
  const kept = stayPruned.flatMap((callID) => {
    const id = state.ids.get(callID)
    return id === undefined ? [] : [id]
  })
  return done(
    `Restored id ${target} (${formatTokens(own?.tokens ?? 0)} tokens of its own) and unfolded its old turn (${
      idRanges(foldedIds)
    }): ${again}${kept.length === 0 ? "" : `; ${idRanges(kept)} stay${kept.length === 1 ? "s" : ""} pruned`}.`
  )
})
