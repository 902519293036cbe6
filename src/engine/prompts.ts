/**
 * Everything here is sent on every request, so it is kept short: the system section stays well under 250 tokens
 * and is byte-identical for a given set of enabled tools.
 */

export interface EnabledTools {
  readonly discard: boolean
  readonly extract: boolean
  readonly recall: boolean
}

export const systemSection = (tools: EnabledTools): string | undefined => {
  if (!tools.discard && !tools.extract) return undefined
  const lines = [
    "## Context pruning",
    "To keep the context lean, stale tool output may be replaced by a placeholder such as `[pruned: read src/app.ts, ~4.2k tokens; " +
      (tools.recall ? "recall 17]`. Call `recall` with that number if you need the original again." : "id 17]`. Read the file again if you need it."),
    "The last message lists outputs you may remove as `id: tool, argument (tokens)` in a <prunable-tools> block."
  ]
  if (tools.discard) {
    lines.push('- `discard`: drop outputs you no longer need. First id is the reason: "completion" (the task they served is done) or "noise" (irrelevant).')
  }
  if (tools.extract) {
    lines.push("- `extract`: replace outputs with one short distilled finding each (paths, symbols, line numbers, errors, decisions you will need).")
  }
  lines.push("Prune in batches and only what you will not need for the next steps; it is rarely worth pruning small outputs.")
  return lines.join("\n")
}

export const discardDescription =
  'Remove tool outputs you no longer need from the context. `ids`: first the reason, "completion" or "noise", then the numeric ids from <prunable-tools>.'

export const recallDescription =
  'Get back the original content of pruned tool calls. `ids`: the numbers after "recall" in placeholders, e.g. ["17"].'

export const extractDescription =
  "Replace tool outputs with distilled findings you want to keep. `ids`: numeric ids from <prunable-tools>; `distillation`: one finding per id, in the same order."

/** What the compaction summariser is asked to keep: the model's own distilled findings. */
export const findingsForSummary = (
  findings: ReadonlyArray<{ readonly id: number; readonly tool: string; readonly text: string }>
): string | undefined =>
  findings.length === 0
    ? undefined
    : [
      "Findings the assistant distilled from tool outputs it pruned earlier. Keep them in the summary:",
      ...findings.map((finding) => `- (${finding.tool} ${finding.id}) ${finding.text}`)
    ].join("\n")
