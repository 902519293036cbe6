import { Clock, Effect, Option, Predicate } from "effect"
import { contentsOf, reportedCacheUsage, reportedContext } from "../commands/breakdown.ts"
import { formatContext, formatHelp, formatStats } from "../commands/format.ts"
import { type DcpCommand, parseCommand } from "../commands/parse.ts"
import { sweepSelection } from "../commands/select.ts"
import { reasonName } from "../engine/reasons.ts"
import { idColumn } from "../engine/notes.ts"
import { formatTokens } from "../engine/placeholders.ts"
import { partsOf, roleOf } from "../host/messages.ts"
import type { SessionId } from "../host/sessionId.ts"
import { visibleHistory } from "../host/view.ts"
import { Config, reportNote } from "../services/Config.ts"
import { Host } from "../services/Host.ts"
import { Ledger } from "../services/Ledger.ts"
import { Notifier } from "../services/Notifier.ts"
import { Paths } from "../services/Paths.ts"
import { Pruner } from "../services/Pruner.ts"
import { Scheduler } from "../services/Scheduler.ts"
import { SessionStore } from "../services/SessionStore.ts"
import { Tokenizer } from "../services/Tokenizer.ts"
import { ToolCache } from "../services/ToolCache.ts"
import { figuresOf, reportedNext } from "../engine/figures.ts"
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
  const text = [...problems.map(reportNote), reply.text].join("\n\n")
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
  const ranges: Array<string> = []
  for (let i = 0; i < ids.length; i++) {
    let j = i
    while (j + 1 < ids.length && ids[j + 1] === ids[j]! + 1) j++
    ranges.push(j === i ? `${ids[i]}` : j === i + 1 ? `${ids[i]}, ${ids[j]}` : `${ids[i]}-${ids[j]}`)
    i = j
  }
  return `Pruned now: ${ranges.join(", ")} (the number before each call in the pruning notes).`
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
  const { current: config } = yield* Config
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
  const scheduler = yield* Scheduler
  const figures = figuresOf(state, yield* indexOf(state))
  return formatStats({
    session: state.stats,
    figures,
    lifetime,
    now,
    cache,
    reasonName,
    ttlSeconds: config.cache.ttlSeconds,
    pressure: config.cache.pressure,
    profile: scheduler.profile(state).name
  })
})

const context = Effect.fnUntraced(function*(state: SessionState) {
  const host = yield* Host
  const tokenizer = yield* Tokenizer
  const view = visibleHistory(yield* host.messages(state.sessionID))
  const contents = contentsOf(view)
  if (contents.user.length + contents.assistant.length + contents.tools.length === 0) return nothingYet
  const sum = (texts: ReadonlyArray<string>) =>
    Effect.map(Effect.forEach(texts, tokenizer.count), (counts) => counts.reduce((a, b) => a + b, 0))
  let tools = 0
  for (const call of contents.tools) tools += yield* sum(call.texts)
  const figures = figuresOf(state, yield* indexOf(state))
  // The system prompt of the latest request, counted exactly when this process saw one.
  const system = state.systemTexts === undefined ? state.systemTokens : yield* sum(state.systemTexts)
  const { current: config } = yield* Config
  return formatContext({
    system,
    user: yield* sum(contents.user),
    assistant: yield* sum(contents.assistant),
    tools: Math.max(0, tools - figures.inEffect.tokens - figures.folded.tokens),
    toolCalls: contents.tools.length,
    prunedCalls: figures.inEffect.calls,
    prunedTokens: figures.inEffect.tokens,
    folded: figures.folded,
    // The provider's count describes the latest request: for the next one, less what was pruned or restored since.
    reported: reportedNext(reportedContext(view), figures.context, figures.changedSinceSent),
    reportedChanged: figures.changedSinceSent,
    pending: figures.queued,
    waiting: figures.waiting,
    ttlSeconds: config.cache.ttlSeconds,
    pressure: config.cache.pressure
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
  const scope = count === undefined ? "since your last message" : `among the last ${count}`
  if (recorded.length === 0) {
    const any = count === undefined
      ? index.calls.some((call) => call.messageIndex > index.lastUserMessage)
      : index.calls.length > 0
    return any
      ? `Nothing to sweep ${scope}: every call there is already pruned, protected or empty.`
      : `Nothing to sweep ${scope}: no tool was called there.`
  }
  const tokens = recorded.reduce((total, entry) => total + entry.tokens, 0)
  const id = idColumn(recorded.map((entry) => entry.id))
  const lines = recorded.map((entry) => `  ${id(entry.id)}  ${entry.tool} ${entry.keyParameter}`.trimEnd())
  return [
    `Swept ${recorded.length} call${recorded.length === 1 ? "" : "s"} ${scope}: ${
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
  const tokens = pruner.restore(state, chosen.map(([, callID]) => callID))
  const what = target !== "all"
    ? `id ${target}`
    : chosen.length === 1
    ? "the 1 pruned call"
    : `all ${chosen.length} pruned calls`
  return done(`Restored ${what}: ${formatTokens(tokens)} tokens are sent to the model again from the next request on.`)
})
