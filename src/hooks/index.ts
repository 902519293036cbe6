import { type Hooks, tool } from "@opencode-ai/plugin"
import { Cause, Effect, type ManagedRuntime } from "effect"
import type { PluginConfig } from "../config/schema.ts"
import { discardDescription, extractDescription, recallDescription } from "../engine/prompts.ts"
import type { Services } from "../layers/main.ts"
import { handledResponse, refusedResponse } from "../host/commandResponse.ts"
import { hostArgumentsSchema } from "../host/toolSchema.ts"
import { dcp } from "./command.ts"
import { compacting, event, hostConfig, reportConfigProblems, userMessage } from "./session.ts"
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

/**
 * Every hook runs as an Effect program on the plugin's one runtime. A failure inside is logged and the hook
 * returns normally: whatever goes wrong in the plugin, the user's chat goes on, with messages unmodified.
 * The pruning tools are the exception by design: a refused call must reach the model as a failed tool call.
 */
export const makeHooks = (runtime: Runtime, config: PluginConfig): Hooks => {
  const run = (name: string, program: Effect.Effect<unknown, unknown, Services>): Promise<void> =>
    runtime.runPromise(
      program.pipe(
        Effect.asVoid,
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.logError(`${name} failed`, cause)
        )
      )
    ).catch(() => undefined)

  const runTool = (
    name: string,
    program: Effect.Effect<string, unknown, Services>,
    nothingDone = "nothing was pruned"
  ): Promise<string> =>
    runtime.runPromise(
      program.pipe(
        Effect.catchCause((cause) => {
          const error = Cause.squash(cause)
          if (error instanceof ToolRejected) return Effect.fail(new Error(error.message))
          return Effect.logError(`${name} failed`, cause).pipe(
            Effect.andThen(
              Effect.fail(new Error(`${name} could not run because of an internal error; ${nothingDone}.`))
            )
          )
        })
      )
    )

  const ids = tool.schema.array(tool.schema.coerce.string())
  const tools: NonNullable<Hooks["tool"]> = {}
  if (config.tools.discard.enabled) {
    tools.discard = tool({
      description: discardDescription,
      args: { ids },
      execute: (args, context) => runTool("discard", discard(context.sessionID, args.ids, context.messageID))
    })
  }
  if (config.tools.recall.enabled) {
    tools.recall = tool({
      description: recallDescription,
      args: { ids },
      execute: (args, context) => runTool("recall", recall(context.sessionID, args.ids), "nothing was recalled")
    })
  }
  if (config.tools.extract.enabled) {
    tools.extract = tool({
      description: extractDescription,
      args: { ids, distillation: tool.schema.array(tool.schema.string()) },
      execute: (args, context) =>
        runTool("extract", extract(context.sessionID, args.ids, args.distillation, context.messageID))
    })
  }

  // OpenCode 1.18 heads the schema it sends for a plugin tool's arguments with the dialect's URL (`$schema`, ~17
  // tokens a tool on every request) and sends a `jsonSchema` set by the `tool.definition` hook instead.
  const wireSchemas = new Map(
    Object.entries(tools).map(([name, definition]) => {
      const { $schema: _, ...schema } = hostArgumentsSchema(definition.args)
      return [name, schema] as const
    })
  )

  const commands = config.commands.enabled
  return {
    config: async (opencode) => {
      // `compaction` is in OpenCode's config, not in the plugin package's type of it.
      await run("config", hostConfig(opencode.agent, (opencode as { compaction?: unknown }).compaction))
      if (commands) {
        opencode.command = { ...opencode.command, dcp: { template: commandTemplate, description: commandDescription } }
      }
      const names = Object.keys(tools)
      if (names.length === 0) return
      const experimental = (opencode.experimental ?? {}) as { primary_tools?: Array<string> }
      const primary = new Set([...(experimental.primary_tools ?? []), ...names])
      opencode.experimental = { ...opencode.experimental, primary_tools: [...primary] } as never
    },
    ...(commands
      ? {
        "command.execute.before": async (input) => {
          if (input.command !== "dcp") return
          // Throwing is the only way to stop the model turn that follows a command in OpenCode 1.18.
          throw await runtime.runPromise(
            dcp(input.sessionID, input.arguments).pipe(
              Effect.map(({ refused, reply, stored }) => (refused ? refusedResponse(reply) : handledResponse(stored))),
              Effect.catchCause((cause) =>
                Effect.logError("/dcp failed", cause).pipe(Effect.as(handledResponse(undefined)))
              )
            )
          ).catch(() => handledResponse(undefined))
        }
      } satisfies Hooks
      : {}),
    tool: tools,
    "tool.definition": async (input, output) => {
      const schema = wireSchemas.get(input.toolID)
      if (schema === undefined) return
      await run("tool.definition", Effect.sync(() => Object.assign(output, { jsonSchema: schema })))
    },
    "experimental.chat.messages.transform": (_input, output) =>
      run("messages.transform", reportConfigProblems.pipe(Effect.andThen(transform(output.messages)))),
    "experimental.chat.system.transform": (input, output) =>
      run("system.transform", system(input.sessionID, output.system, input.model)),
    "chat.message": (input) =>
      run(
        "chat.message",
        userMessage(input.sessionID, { agent: input.agent, model: input.model, variant: input.variant })
      ),
    "experimental.session.compacting": (input, output) =>
      run("session.compacting", compacting(input.sessionID, output.context)),
    event: (input) => run("event", event(input.event)),
    dispose: () => runtime.dispose()
  }
}
