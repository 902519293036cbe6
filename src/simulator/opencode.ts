/**
 * Small facts of how OpenCode 1.18.33 treats a session, which the replay follows: which messages are prompts and
 * summaries, how much a request may hold before OpenCode compacts, how it estimates tokens, how it sends the system
 * prompt a plugin hands back, and the tool definitions it sends for a plugin's tools.
 */
import type { Hooks } from "@opencode-ai/plugin"
import { tool } from "@opencode-ai/plugin"
import { hostArgumentsSchema } from "../host/toolSchema.ts"
import type { Msg } from "../host/schema.ts"

export interface DriveModel {
  readonly providerID: string
  readonly modelID: string
  readonly context: number
  readonly output: number
}

/** The most a request can hold before OpenCode compacts: the context less its output reserve (32,000 at most). */
export const usableWindow = (model: DriveModel) => model.context - Math.min(model.output, 32_000)

/** OpenCode's own estimate, four characters a token. */
export const estimate = (text: string) => Math.round(text.length / 4)

export const isSummary = (message: Msg) => message.info.role === "assistant" && message.info.summary === true

/**
 * A user message someone typed. Not: notes (ignored text, such as the plugin's own prune notes), OpenCode's own
 * messages (synthetic text, such as "continue" after a compaction), and compaction requests.
 */
export const isPrompt = (message: Msg): boolean =>
  !message.parts.some((part) => part.type === "compaction") &&
  message.parts.some((part) =>
    part.type === "file" || (part.type === "text" && part.ignored !== true && part.synthetic !== true)
  )

/**
 * OpenCode keeps its system prompt in two parts for caching: when a plugin leaves more than two strings and the first
 * unchanged, the rest are joined into the second.
 */
export const rejoin = (system: ReadonlyArray<string>, header: string | undefined): Array<string> =>
  system.length > 2 && system[0] === header ? [system[0]!, system.slice(1).join("\n")] : [...system]

/**
 * The definitions (name, JSON) OpenCode sends for a plugin's tools, after its own: as OpenCode 1.18 does, the
 * `tool.definition` hook may set the JSON Schema sent for the arguments.
 */
export const pluginToolDefinitions = async (hooks: Hooks | undefined): Promise<Array<readonly [string, string]>> => {
  const definitions: Array<readonly [string, string]> = []
  for (const [name, definition] of Object.entries(hooks?.tool ?? {})) {
    const output: { description: string; parameters: unknown; jsonSchema?: unknown } = {
      description: definition.description,
      parameters: tool.schema.object(definition.args)
    }
    await hooks?.["tool.definition"]?.({ toolID: name }, output as { description: string; parameters: unknown })
    definitions.push([
      name,
      JSON.stringify({
        description: output.description,
        input_schema: output.jsonSchema ?? hostArgumentsSchema(definition.args)
      })
    ])
  }
  return definitions
}
