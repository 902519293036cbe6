import type { Reply } from "./model-server.ts"
import type { Scenario } from "./scenario.ts"

/** A TypeScript file of `lines` distinct lines (~12 tokens each): big enough to be listed and worth pruning. */
export const sourceFile = (name: string, lines = 60): string =>
  Array.from({ length: lines }, (_, i) => `export const ${name}${i} = "${name} line ${i}"\n`).join("")

/** A scripted reply calling one tool, with a call ID chosen by the test so it can find the call in the requests. */
export const call = (name: string, args: Record<string, unknown>, id: string): Reply => ({
  toolCalls: [{ name, args, id }]
})

export const read = (scenario: Scenario, file: string, id: string): Reply =>
  call("read", { filePath: scenario.path(file) }, id)

export const done: Reply = { text: "Done." }

/** The project's `.opencode/dcp.jsonc` holding `settings`, read over the tier's global file (`globalConfig`). */
export const dcpConfig = (settings: object): Record<string, string> => ({
  ".opencode/dcp.jsonc": `${JSON.stringify(settings, null, 2)}\n`
})

/**
 * Matches a placeholder written as it reads, e.g. `[pruned content of an old change; id 1]`, where `id 1` also matches
 * `recall 1` (the handle placeholders use when the recall tool is on).
 */
export const placeholder = (text: string): RegExp => {
  const escaped = text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  return new RegExp(`^${escaped.replace(/id (\d+)\\\]$/, "(?:id|recall) $1\\]")}$`)
}

/**
 * Whether a text holds a placeholder: a bracketed note that ends with the pruned call's handle (`; recall 3]`, or
 * `; id 3]` when the recall tool is off). Every placeholder the plugin writes does.
 */
export const holdsPlaceholder = (text: string): boolean => /\[[^\]]*; (?:recall|id) \d+\]/.test(text)

/**
 * Whether an output went out whole as the plugin sends it: headed by the `[id N]` tag it gives every output it may
 * prune, with no placeholder. A prune found and waiting (for the prompt cache) reads this way; without the plugin
 * there is no tag, so a test of "the duplicate waits" fails with the plugin off, as a test of a prune does.
 */
export const sentWhole = (text: string | undefined): boolean =>
  text !== undefined && /^\[id \d+\]\n/.test(text) && !holdsPlaceholder(text)
