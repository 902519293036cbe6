/**
 * OpenCode's own hidden agents also pass through the plugin hooks. Their system prompt starts with their fixed
 * instructions (as shipped in OpenCode 1.18): the compaction summariser, the title generator and the session
 * summariser. Their requests are left exactly as they are.
 */
const internalPromptStarts = [
  "You are a context summarization agent",
  "You are a title generator",
  "Summarize what was done in this conversation"
]

export const isInternalAgent = (system: ReadonlyArray<string>): boolean => {
  const first = system[0]?.trimStart() ?? ""
  return internalPromptStarts.some((start) => first.startsWith(start))
}
