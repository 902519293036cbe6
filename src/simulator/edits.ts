/**
 * The model's edits of files it had seen, against what each request showed of them: the figure that tells what
 * masking costs the model (an edit made without the file's content in view), and the reads it makes first when it
 * is taken to see the file again before editing it (`DriveOptions.reReadMasked`).
 */
import { fileFieldsOf } from "../engine/calls.ts"
import { patchFiles } from "../engine/patch.ts"
import { fileKeyOf } from "../engine/pathRules.ts"
import type { Msg } from "../host/schema.ts"

type Part = Msg["parts"][number]

export interface Edits {
  /**
   * Edits the model made to a file whose content (a read's output, a write's content) is in the session's history,
   * before a compaction too.
   */
  readonly made: number
  /**
   * Of those, the edits made while no such copy was in what the request sent: pruned, cleared, or summarised away by
   * a compaction.
   */
  readonly masked: number
}

/** Tools that edit a file in place. */
const editTools: ReadonlySet<string> = new Set(["edit", "insert"])

const filePathOf = (part: Part): string | undefined =>
  part.type === "tool" && typeof part.state?.input?.filePath === "string" ? part.state.input.filePath : undefined

/**
 * The files a tool part edits in place, resolved against the session's directory as OpenCode resolves them: an edit's
 * file, each file an `apply_patch` (GPT models' edit tool) updates.
 */
const editedFiles = (part: Part, directory: string): ReadonlyArray<string> => {
  if (part.type !== "tool") return []
  if (part.tool === "apply_patch") {
    const text = part.state?.input?.patchText
    return typeof text === "string" ? patchFiles(text).updated.map((path) => fileKeyOf(directory, path)) : []
  }
  const path = editTools.has(part.tool) ? filePathOf(part) : undefined
  return path === undefined ? [] : [fileKeyOf(directory, path)]
}

/**
 * What a completed tool part holding a copy of files (`ToolCall.copiedFiles`) shows of them: a read's output unless
 * cleared, a write's content, the text of a patch that adds them.
 */
const contentOf = (part: Part): string | undefined => {
  if (part.type !== "tool" || part.state?.status !== "completed") return undefined
  const copy = part.tool === "read"
    ? part.state.time?.compacted === undefined ? part.state.output : undefined
    : part.tool === "apply_patch"
    ? part.state.input?.patchText
    : part.state.input?.content
  return typeof copy === "string" ? copy : undefined
}

const copiedFiles = (part: Part, directory: string) =>
  fileFieldsOf(part.tool, part.state.input ?? {}, directory).copiedFiles

/**
 * The files whose content `sent` shows in full, of those `original` (the history it was made from, before any pruning
 * or compaction) shows:
 * a copy (a read's output, a write's content, a patch that adds the file) counts when what was sent still contains it
 * (the plugin's ID tag at the head of an output does not hide it).
 */
const seenIn = (original: ReadonlyArray<Msg>, sent: ReadonlyArray<Msg>, directory: string) => {
  const sentByCall = new Map<string, Part>()
  for (const message of sent) {
    for (const part of message.parts) {
      if (part.type === "tool") sentByCall.set(part.callID, part)
    }
  }
  const shown = new Set<string>()
  const seen = new Set<string>()
  for (const message of original) {
    for (const part of message.parts) {
      const copy = contentOf(part)
      if (copy === undefined) continue
      const as = sentByCall.get(part.callID)
      const kept = as !== undefined && contentOf(as)?.includes(copy) === true
      for (const path of copiedFiles(part, directory)) {
        shown.add(path)
        if (kept) seen.add(path)
      }
    }
  }
  return { shown, seen }
}

/**
 * The edits `response` makes, against what the session's history so far (`before`, compacted or not) and its request
 * (`sent`) showed of each file; `maskedFiles`: the files it edits that the request did not show.
 */
export const editsIn = (
  response: Msg,
  before: ReadonlyArray<Msg>,
  sent: ReadonlyArray<Msg>,
  directory: string
): Edits & { readonly maskedFiles: ReadonlyArray<string> } => {
  const paths = response.parts.flatMap((part) => editedFiles(part, directory))
  if (paths.length === 0) return { made: 0, masked: 0, maskedFiles: [] }
  const { shown, seen } = seenIn(before, sent, directory)
  let made = 0
  let masked = 0
  const maskedFiles: Array<string> = []
  for (const path of new Set(paths)) {
    if (!shown.has(path)) continue
    const times = paths.filter((edited) => edited === path).length
    made += times
    if (!seen.has(path)) {
      masked += times
      maskedFiles.push(path)
    }
  }
  return { made, masked, maskedFiles }
}

/** A whole file as OpenCode 1.18.33's read tool returns it. */
const wholeRead = (path: string, content: string): string => {
  const lines = content.split("\n")
  return `<path>${path}</path>\n<type>file</type>\n<content>\n${
    lines.map((line, i) => `${i + 1}: ${line}`).join("\n")
  }` +
    `\n\n(End of file - total ${lines.length} lines)\n</content>`
}

/**
 * The model's reading of `paths` again: an assistant message with a read of each, as the latest copy in the
 * session's `history` shows it (that read again, or a whole read of what a write or a patch wrote), sent as
 * `response` (the edit's message) is.
 */
export const reReadOf = (
  paths: ReadonlyArray<string>,
  history: ReadonlyArray<Msg>,
  directory: string,
  id: string,
  response: Msg["info"]
): Msg => {
  const time = response.time?.created ?? 0
  const latest = new Map<string, Part>()
  for (const message of history) {
    for (const part of message.parts) {
      if (contentOf(part) === undefined) continue
      for (const path of copiedFiles(part, directory)) latest.set(path, part)
    }
  }
  const parts = paths.flatMap((path, n): Array<Part> => {
    const copy = latest.get(path)
    if (copy === undefined) return []
    const read = copy.tool === "read"
      ? { input: copy.state.input, output: contentOf(copy)! }
      : { input: { filePath: path }, output: wholeRead(path, contentOf(copy)!) }
    return [{
      id: `prt_dcp_reread_${id}_${n}`,
      messageID: `msg_dcp_reread_${id}`,
      type: "tool",
      callID: `toolu_dcp_reread_${id}_${n}`,
      tool: "read",
      state: { status: "completed", ...read, title: path, metadata: {}, time: { start: time, end: time } }
    }]
  })
  return {
    info: { ...response, id: `msg_dcp_reread_${id}`, finish: "tool-calls", time: { created: time, completed: time } },
    parts
  }
}

/** A message's tool calls as the model writes them: what its output tokens are counted on. */
export const writtenCalls = (message: Msg): string =>
  JSON.stringify(message.parts.map((part) => part.type === "tool" ? { tool: part.tool, input: part.state?.input } : {}))
