/**
 * Everything here is sent on every request, so it is kept short: the system section stays well under 250 tokens
 * and is byte-identical for a given set of enabled tools.
 */

export interface EnabledTools {
  readonly discard: boolean
  readonly extract: boolean
  readonly recall: boolean
  /** Old turns are folded (src/engine/fold.ts). */
  readonly fold: boolean
}

export const systemSection = (tools: EnabledTools): string | undefined => {
  const prunes = tools.discard || tools.extract
  if (!prunes && !tools.fold) return undefined
  const verbs = [tools.discard ? "`discard`" : undefined, tools.extract ? "`extract`" : undefined].filter((verb) =>
    verb !== undefined
  )
  return [
    "## Context pruning",
    ...(prunes
      ? [
        "Prunable tool outputs start with [id N]. Old ones may become placeholders like [pruned; " +
        (tools.recall ? "recall 17]: `recall` gets them back." : "id 17]: read the file again if you need it."),
        `With ${verbs.join(" or ")} you can drop large outputs you will not need again. Each prune makes the ` +
        "provider re-read the conversation: prune rarely, in batches."
      ]
      : []),
    ...(tools.fold
      ? [
        "The tool calls of old turns may be folded into lines like `#17 read src/app.ts` (a failure ends in " +
        "`-> error: ...` or `-> exit N`)" + (tools.recall ? "; `recall` gets their outputs back." : ".")
      ]
      : [])
  ].join("\n")
}

export const discardDescription =
  'Drop tool outputs you no longer need. ids: "completion" (their task is done) or "noise" (irrelevant), then [id N] numbers.'

export const recallDescription =
  'Get pruned or folded tool outputs back. ids: the numbers from "recall N" or "#N" (whole outputs); or query: words to find (the matching lines, with their ids).'

export const extractDescription =
  "Replace tool outputs with short findings you keep (paths, symbols, lines, errors, decisions). ids: [id N] numbers; distillation: one finding per id."

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
