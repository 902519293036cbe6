/**
 * OpenCode 1.18.33's compaction, as the replay simulates it: a summary request (its own system prompt, no tools, and
 * one user text: the prompt and the history before the most recent messages that fit in 15,000 tokens, written out
 * as OpenCode writes it for its summariser), then a compaction request and the summary in the stored history, after
 * which requests send the summary, those recent messages, and what follows.
 */
import type { Msg } from "../host/schema.ts"
import { estimate } from "./opencode.ts"
import { clearedResult } from "./wire.ts"

export const summarySystem =
  "You are a helpful assistant tasked with summarizing conversations for continuing them later."
const summaryPrompt =
  "Provide a detailed summary of the conversation so far, to continue it in a new session: what was done, what is being worked on, which files matter, and what comes next."

/** A summary of about `tokens` tokens: o200k counts English prose at about 1.3 tokens a word. */
export const summaryText = (tokens: number): string =>
  Array.from({ length: Math.round(tokens / 1.3) }, (_, i) => summaryPrompt.split(" ")[i % 24]).join(" ")

const tailBudget = 15_000

/** What OpenCode sends for a message that fits in a compaction tail, by its estimate. */
const messageSize = (message: Msg) => estimate(JSON.stringify(message.parts))

/**
 * Where the tail a compaction keeps starts in `visible`: the newest messages that fit OpenCode's budget (its length:
 * nothing kept).
 */
export const tailStart = (visible: ReadonlyArray<Msg>): number => {
  let size = 0
  let tail = visible.length
  while (tail > 0 && size + messageSize(visible[tail - 1]!) <= tailBudget) size += messageSize(visible[--tail]!)
  return tail
}

/** OpenCode 1.18.33 cuts each tool result it writes out for its summariser to this many characters. */
const summaryResultChars = 2000

/**
 * A message as OpenCode 1.18.33 writes it out for its compaction summariser: the user's text (not ignored) and
 * attachments; the assistant's text, reasoning, and each tool call with its whole input and its result (cut to
 * `summaryResultChars`; an output its `compaction.prune` cleared as such) or error.
 */
const summaryLines = (message: Msg): string => {
  if (message.info.role === "user") {
    const text = message.parts.filter((part) => part.type === "text" && part.ignored !== true).map((part) => part.text)
      .filter(Boolean).join("\n")
    const files = message.parts.flatMap((part) =>
      part.type === "file" ? [`[Attached ${part.mime}: ${part.filename ?? "file"}]`] : []
    )
    return [...(text ? [`[User]: ${text}`] : []), ...files].join("\n")
  }
  return message.parts.flatMap((part) => {
    if (part.type === "text") return part.text ? [`[Assistant]: ${part.text}`] : []
    if (part.type === "reasoning") return part.text ? [`[Assistant reasoning]: ${part.text}`] : []
    if (part.type !== "tool") return []
    const called = `[Assistant tool call]: ${part.tool}(${JSON.stringify(part.state.input)})`
    if (part.state.status === "completed") {
      const attached = ((part.state.attachments ?? []) as Array<{ mime: string; filename?: string }>).map((file) =>
        `[Attached ${file.mime}: ${file.filename ?? "file"}]`
      )
      const output = [part.state.output, ...attached].join("\n")
      const result = part.state.time?.compacted !== undefined
        ? clearedResult
        : output.length <= summaryResultChars
        ? output
        : `${output.slice(0, summaryResultChars)}\n[truncated]`
      return [called, `[Tool result]: ${result}`]
    }
    if (part.state.status === "error") return [called, `[Tool error]: ${part.state.error}`]
    return [called]
  }).join("\n")
}

/**
 * The summariser's one user message, for the `n`th compaction: the prompt, what plugins added
 * (`experimental.session.compacting`'s context), then `head` written out.
 */
export const summaryRequest = (n: number, context: ReadonlyArray<string>, head: ReadonlyArray<Msg>): Msg => ({
  info: { id: `msg_dcp_summary_prompt_${n}`, role: "user" },
  parts: [{ type: "text", text: [summaryPrompt, ...context, ...head.map(summaryLines)].filter(Boolean).join("\n") }]
})

/**
 * What the `n`th compaction leaves in the stored history: the compaction request, which names where the kept tail
 * starts, and the summary.
 */
export const compactionMessages = (
  n: number,
  sessionID: string,
  time: number,
  tailStartId: string | undefined,
  summary: string
): readonly [request: Msg, summary: Msg] => {
  const request: Msg = {
    info: { id: `msg_dcp_compaction_${n}`, sessionID, role: "user", time: { created: time } },
    parts: [{ id: `prt_dcp_compaction_${n}`, type: "compaction", auto: true, tail_start_id: tailStartId }]
  }
  return [request, {
    info: {
      id: `msg_dcp_summary_${n}`,
      sessionID,
      role: "assistant",
      summary: true,
      finish: "stop",
      parentID: request.info.id,
      time: { created: time, completed: time }
    },
    parts: [{ id: `prt_dcp_summary_${n}`, type: "text", text: summary }]
  }]
}
