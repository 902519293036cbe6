import { Option, Predicate, Schema } from "effect"

/**
 * OpenCode's own hidden agents also pass through the plugin hooks. Their system prompt starts with their fixed
 * instructions (as shipped in OpenCode 1.18): the compaction summariser, the title generator and the session
 * summariser. Their requests are left exactly as they are. A plugin that runs before this one may have put a text of
 * its own before those instructions: as a system text of its own (`unshift`), or as a paragraph in front of
 * OpenCode's text (what Anthropic OAuth plugins do with Claude Code's identity line), so every text is looked at,
 * from its start and from after its first paragraph.
 */
const internalPromptStarts = [
  "You are a context summarization agent",
  "You are a title generator",
  "Summarize what was done in this conversation"
]

const startsInternal = (text: string): boolean => {
  const trimmed = text.trimStart()
  return internalPromptStarts.some((start) => trimmed.startsWith(start))
}

export const isInternalAgent = (system: ReadonlyArray<string>): boolean =>
  system.some((text) => {
    if (startsInternal(text)) return true
    const paragraph = text.indexOf("\n\n")
    return paragraph >= 0 && startsInternal(text.slice(paragraph + 2))
  })

const AgentConfig = Schema.Struct({ prompt: Schema.optional(Schema.String) })
const decodeAgent = Schema.decodeUnknownOption(AgentConfig)

/**
 * The system prompts of the agents OpenCode's config defines (its `agent` key, handed to the `config` hook, with the
 * agents of `agent/*.md` files): an agent with a `prompt` is sent it in place of the model's own, which OpenCode's
 * built-in primary agents, build and plan, are not. An agent whose entry does not decode counts as one without.
 */
export const agentPrompts = (agents: unknown): ReadonlyMap<string, string> => {
  const prompts = new Map<string, string>()
  if (!Predicate.isObject(agents)) return prompts
  for (const [name, entry] of Object.entries(agents)) {
    const prompt = Option.getOrUndefined(decodeAgent(entry))?.prompt
    if (prompt !== undefined) prompts.set(name, prompt)
  }
  return prompts
}
