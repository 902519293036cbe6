import { type Hooks, tool } from "@opencode-ai/plugin"
import { Cause, Effect, type ManagedRuntime, Predicate, Result } from "effect"
import type { PluginConfig } from "../config/schema.ts"
import { discardDescription, extractDescription, recallDescription } from "../engine/prompts.ts"
import { capAnswer } from "../engine/validate.ts"
import type { Services } from "../layers/main.ts"
import { handledResponse, refusedResponse } from "../host/commandResponse.ts"
import { findSessionId } from "../host/messages.ts"
import { decodeSessionId } from "../host/sessionId.ts"
import { hostArgumentsSchema } from "../host/toolSchema.ts"
import { Host, HostError } from "../services/Host.ts"
import { PersistenceError, reasonOf } from "../services/Persistence.ts"
import { dcp } from "./command.ts"
import {
  ChatMessageInput,
  CommandInput,
  CompactingInput,
  CompactingOutput,
  decodeOr,
  EventInput,
  Experimental,
  ExtractArguments,
  IdsArguments,
  InPlaceObject,
  MessagesOutput,
  RecallArguments,
  SystemInput,
  SystemOutput,
  ToolContext,
  ToolDefinitionInput
} from "./inputs.ts"
import { compacting, event, hostConfig, refreshConfig, reportConfigProblems, userMessage } from "./session.ts"
import { system } from "./system.ts"
import { discard, extract, recall, ToolRejected } from "./tools.ts"
import { transform } from "./transform.ts"

type Runtime = ManagedRuntime.ManagedRuntime<Services, never>

/**
 * Shown beside `/dcp` in the terminal UI's autocomplete, where it is the plugin's one entry (see src/tui.ts): short
 * enough to stay whole in an 80-column terminal.
 */
const commandDescription = "Context pruning: context, stats, sweep, restore, help"
/** Only reaches the model if the plugin failed to intercept the command: then it asks for a short, harmless reply. */
const commandTemplate =
  "The /dcp $ARGUMENTS command of the context pruning plugin could not be handled. Reply in one sentence that it is unavailable right now."

const decodeMessagesOutput = decodeOr(MessagesOutput)
const decodeSystemInput = decodeOr(SystemInput)
const decodeSystemOutput = decodeOr(SystemOutput)
const decodeChatMessage = decodeOr(ChatMessageInput)
const decodeCompacting = decodeOr(CompactingInput)
const decodeCompactingOutput = decodeOr(CompactingOutput)
const decodeCommand = decodeOr(CommandInput)
const decodeToolDefinition = decodeOr(ToolDefinitionInput)
const decodeInPlace = decodeOr(InPlaceObject)
const decodeEvent = decodeOr(EventInput)
const decodeExperimental = decodeOr(Experimental)
const decodeIds = decodeOr(IdsArguments)
const decodeRecall = decodeOr(RecallArguments)
const decodeExtract = decodeOr(ExtractArguments)
const decodeToolContext = decodeOr(ToolContext)

/** Both results, or the first failure. */
const both = <A, B>(a: Result.Result<A, string>, b: Result.Result<B, string>): Result.Result<[A, B], string> =>
  Result.isFailure(a) ? Result.fail(a.failure) : Result.map(b, (second) => [a.success, second])

/** Whether a command is `/dcp`; never throws, whatever the host passed. */
const isDcp = (input: unknown): boolean => {
  try {
    return Predicate.isObject(input) && input.command === "dcp"
  } catch {
    return false
  }
}

/**
 * Every hook runs as an Effect program on the plugin's one runtime, built inside the runner from what OpenCode passed:
 * reading the input is part of the program, decoded with a Schema for the parts the plugin reads, so no input (null,
 * a number for a session ID) throws out of a hook. A failure inside is logged and the hook returns normally: whatever
 * goes wrong in the plugin, the user's chat goes on, with messages unmodified. The pruning tools are the exception by
 * design: a refused call must reach the model as a failed tool call, with a sentence that says what was wrong.
 */
export const makeHooks = (runtime: Runtime, config: PluginConfig): Hooks => {
  // State files already named in a toast: each is named once, however many requests fail on it.
  const named = new Set<string>()

  /** A state file the plugin cannot read: a warning, and a toast naming it the first time. */
  const stateUnreadable = (error: PersistenceError) =>
    Effect.gen(function*() {
      yield* Effect.logWarning(error.message)
      if (named.has(error.path)) return
      named.add(error.path)
      const host = yield* Host
      yield* host.toast({
        title: "DCP: session state unreadable",
        message: `${error.path}\n${
          reasonOf(error)
        }\nThis session's requests go out unpruned until the file can be read or is removed.`,
        variant: "warning"
      }).pipe(Effect.ignore)
    })

  const failed = (name: string) => (cause: Cause.Cause<unknown>) => {
    if (Cause.hasInterruptsOnly(cause)) return Effect.void
    const error = Cause.squash(cause)
    return error instanceof PersistenceError ? stateUnreadable(error) : Effect.logError(`${name} failed`, cause)
  }

  const run = (name: string, program: () => Effect.Effect<unknown, unknown, Services>): Promise<void> =>
    runtime.runPromise(Effect.suspend(program).pipe(Effect.asVoid, Effect.catchCause(failed(name)))).catch(() =>
      undefined
    )

  /** `body` with the decoded input; an input that does not decode is left alone, with one line in the log. */
  const decoded = <A>(
    name: string,
    input: () => Result.Result<A, string>,
    body: (input: A) => Effect.Effect<unknown, unknown, Services>
  ) =>
    run(name, () => {
      const result = input()
      return Result.isSuccess(result)
        ? body(result.success)
        : Effect.logWarning(`${name}: left as it came, its input is not what OpenCode sends: ${result.failure}`)
    })

  const runTool = (
    name: string,
    nothingDone: string,
    program: () => Effect.Effect<string, unknown, Services>
  ): Promise<string> =>
    runtime.runPromise(
      Effect.suspend(program).pipe(
        Effect.catchCause((cause) => {
          const error = Cause.squash(cause)
          const refused = (message: string) => Effect.fail(new Error(capAnswer(message)))
          if (error instanceof ToolRejected) return refused(error.message)
          if (error instanceof PersistenceError) {
            return stateUnreadable(error).pipe(
              Effect.andThen(
                refused(
                  `${nothingDone}\nThe context pruning plugin cannot read its state for this session (${error.path}: ${
                    reasonOf(error)
                  }).`
                )
              )
            )
          }
          if (error instanceof HostError) {
            return Effect.logWarning(`${name}: OpenCode did not answer`, error).pipe(
              Effect.andThen(
                refused(`${nothingDone}\nOpenCode did not answer the context pruning plugin (${error.operation}).`)
              )
            )
          }
          return Effect.logError(`${name} failed`, cause).pipe(
            Effect.andThen(
              Effect.fail(new Error(`${name} could not run because of an internal error; ${nothingDone.toLowerCase()}`))
            )
          )
        })
      )
    )

  /** A tool's arguments and OpenCode's context for the call, decoded; refused with what was wrong otherwise. */
  const toolCall = <A>(
    nothingDone: string,
    args: Result.Result<A, string>,
    context: unknown
  ) =>
    Effect.gen(function*() {
      if (Result.isFailure(args)) {
        return yield* new ToolRejected({ message: `${nothingDone}\nThe arguments are not usable: ${args.failure}.` })
      }
      const call = decodeToolContext(context, "the call's context")
      if (Result.isFailure(call)) {
        return yield* new ToolRejected({
          message: `${nothingDone}\nThe call's context is not usable: ${call.failure}.`
        })
      }
      const sessionID = decodeSessionId(call.success.sessionID)
      if (Result.isFailure(sessionID)) {
        return yield* new ToolRejected({
          message:
            `${nothingDone}\nThe context pruning plugin cannot work in this session. ${sessionID.failure.message}`
        })
      }
      return { args: args.success, sessionID: sessionID.success, messageID: call.success.messageID }
    })

  // OpenCode validates a tool's arguments against these (zod) before `execute`: entries of any type pass, so that the
  // tool's own validation names each bad one as the model wrote it. The model is shown `advertised` (below).
  const anyList = tool.schema.array(tool.schema.unknown())
  const textList = tool.schema.array(tool.schema.string())
  const advertised: Record<string, Parameters<typeof hostArgumentsSchema>[0]> = {}
  const tools: NonNullable<Hooks["tool"]> = {}
  if (config.tools.discard.enabled) {
    advertised.discard = { ids: textList }
    tools.discard = tool({
      description: discardDescription,
      args: { ids: anyList },
      execute: (args, context) =>
        runTool("discard", "Nothing was pruned.", () =>
          Effect.flatMap(
            toolCall("Nothing was pruned.", decodeIds(args, "the arguments"), context),
            (call) => discard(call.sessionID, call.args.ids, call.messageID)
          ))
    })
  }
  if (config.tools.recall.enabled) {
    advertised.recall = { ids: textList.optional(), query: tool.schema.string().optional() }
    tools.recall = tool({
      description: recallDescription,
      args: { ids: anyList.nullable().optional(), query: tool.schema.unknown() },
      execute: (args, context) =>
        runTool("recall", "Nothing was recalled.", () =>
          Effect.flatMap(
            toolCall("Nothing was recalled.", decodeRecall(args, "the arguments"), context),
            (call) => recall(call.sessionID, call.args)
          ))
    })
  }
  if (config.tools.extract.enabled) {
    advertised.extract = { ids: textList, distillation: textList }
    tools.extract = tool({
      description: extractDescription,
      args: { ids: anyList, distillation: anyList },
      execute: (args, context) =>
        runTool("extract", "Nothing was pruned.", () =>
          Effect.flatMap(
            toolCall("Nothing was pruned.", decodeExtract(args, "the arguments"), context),
            (call) => extract(call.sessionID, call.args.ids, call.args.distillation, call.messageID)
          ))
    })
  }

  // OpenCode 1.18 heads the schema it sends for a plugin tool's arguments with the dialect's URL (`$schema`, ~17
  // tokens a tool on every request) and sends a `jsonSchema` set by the `tool.definition` hook instead.
  const wireSchemas = new Map(
    Object.entries(advertised).map(([name, args]) => {
      const { $schema: _, ...schema } = hostArgumentsSchema(args)
      return [name, schema] as const
    })
  )

  const commands = config.commands.enabled

  /** `/dcp`: the response to throw (stopping the model turn), or undefined for a command that is not the plugin's. */
  const command = (input: unknown): Promise<object | undefined> =>
    runtime.runPromise(Effect.suspend(() => {
      if (!isDcp(input)) return Effect.succeed(undefined)
      const decodedInput = decodeCommand(input)
      if (Result.isFailure(decodedInput)) {
        return Effect.as(
          Effect.logWarning(`/dcp: not run, its input is not what OpenCode sends: ${decodedInput.failure}`),
          handledResponse(undefined)
        )
      }
      return dcp(decodedInput.success.sessionID, decodedInput.success.arguments ?? "").pipe(
        Effect.map(({ refused, reply, stored }) => (refused ? refusedResponse(reply) : handledResponse(stored))),
        Effect.catchCause((cause) => Effect.logError("/dcp failed", cause).pipe(Effect.as(handledResponse(undefined))))
      )
    })).catch(() => isDcp(input) ? handledResponse(undefined) : undefined)

  return {
    config: (opencode) =>
      decoded("config", () => decodeInPlace(opencode, "the config"), (opencode) =>
        Effect.gen(function*() {
          if (commands) {
            const existing = Predicate.isObject(opencode.command) ? opencode.command : {}
            opencode.command = { ...existing, dcp: { template: commandTemplate, description: commandDescription } }
          }
          const names = Object.keys(tools)
          if (names.length > 0) {
            const experimental = Predicate.isObject(opencode.experimental) ? opencode.experimental : {}
            const listed = Result.getOrElse(decodeExperimental(experimental), () => ({ primary_tools: undefined }))
            const primary = new Set([...(listed.primary_tools ?? []), ...names])
            opencode.experimental = { ...experimental, primary_tools: [...primary] }
          }
          // `compaction` is in OpenCode's config, not in the plugin package's type of it.
          yield* hostConfig(opencode.agent, opencode.compaction)
        })),
    ...(commands
      ? {
        "command.execute.before": async (input) => {
          // Throwing is the only way to stop the model turn that follows a command in OpenCode 1.18.
          const response = await command(input)
          if (response !== undefined) throw response
        }
      } satisfies Hooks
      : {}),
    tool: tools,
    "tool.definition": (input, output) =>
      decoded(
        "tool.definition",
        () => both(decodeToolDefinition(input), decodeInPlace(output, "the output")),
        ([{ toolID }, output]) =>
          Effect.sync(() => {
            const schema = wireSchemas.get(toolID)
            if (schema !== undefined) Object.assign(output, { jsonSchema: schema })
          })
      ),
    "experimental.chat.messages.transform": (_input, output) =>
      decoded(
        "messages.transform",
        () => decodeMessagesOutput(output, "the output"),
        ({ messages }) => messagesTransform(messages)
      ),
    "experimental.chat.system.transform": (input, output) =>
      decoded(
        "system.transform",
        () => both(decodeSystemInput(input), decodeSystemOutput(output, "the output")),
        ([input, output]) => system(input.sessionID, output.system, input.model)
      ),
    "chat.message": (input) =>
      decoded(
        "chat.message",
        () => decodeChatMessage(input),
        (input) =>
          Effect.andThen(
            refreshConfig,
            userMessage(input.sessionID, { agent: input.agent, model: input.model, variant: input.variant })
          )
      ),
    "experimental.session.compacting": (input, output) =>
      decoded(
        "session.compacting",
        () => both(decodeCompacting(input), decodeCompactingOutput(output, "the output")),
        ([input, output]) => compacting(input.sessionID, output.context)
      ),
    event: (input) => decoded("event", () => decodeEvent(input), (input) => event(input.event)),
    dispose: () => runtime.dispose()
  }
}

/**
 * `experimental.chat.messages.transform` once its output is decoded: the session the messages are in, then the
 * transform. A generator function defined once, not per request: one created per request (`Effect.gen(function*()
 * {...})` in the hook) gets its own hidden class in V8, which points back at it from the old generation, so the
 * request's copy of the history it references (megabytes in a long session) would survive young-generation
 * collections and be promoted, until a full collection (`npm run bench`, 3,000 calls: 171 MB peak RSS over no plugin,
 * 37 MB with this defined once).
 */
const messagesTransform = Effect.fnUntraced(function*(messages: Array<unknown>) {
  yield* reportConfigProblems
  const found = findSessionId(messages)
  if (found === undefined) {
    if (messages.length === 0) return
    return yield* Effect.logWarning(
      "messages.transform: no message says which session it is in; the request goes out as it came"
    )
  }
  const sessionID = decodeSessionId(found)
  if (Result.isFailure(sessionID)) {
    return yield* Effect.logWarning(`messages.transform: the request goes out as it came. ${sessionID.failure.message}`)
  }
  yield* transform(sessionID.success, messages)
})
