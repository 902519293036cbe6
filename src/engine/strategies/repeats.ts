import { canonicalJson, type ToolCall } from "../calls.ts"
import { addedContents } from "../patch.ts"
import { changesFile } from "./supersedeWrites.ts"

/**
 * Repeats, pruned at their first send. A call whose output the model already has in full earlier in the context is
 * sent as a pointer to that copy instead: replacing content that was never sent costs no prompt-cache rebuild, so
 * this is the one saving that is free under every provider's rules. Four kinds:
 *
 * - `same`: the same call (tool and input) returned the same output as an earlier call still sent in full: an
 *   unchanged re-read, the same command with the same output;
 * - `written`: a whole-file read returned exactly the content the latest write of that file sent (or the patch that
 *   added it), with no change since;
 * - `contained`: a partial read returned lines that appear, numbered the same, in the latest whole read of that file,
 *   with no write or edit since;
 * - `input`: the output is the call's own input read back: OpenCode's todowrite returns the list it was given,
 *   pretty-printed, so every list would go out twice. The tool stays protected: its input, the list the model
 *   wrote, is never touched, and the earlier copy the placeholder points to is that input, in the same call.
 *
 * Outputs are compared exactly (a read-back as parsed JSON, whatever the order of its keys); nothing is guessed.
 * Only completed calls with a text output take part.
 */
type CopyKind = "same" | "written" | "contained" | "input"

export interface Copy {
  /** Position of the earlier copy in the view. */
  readonly source: number
  readonly kind: CopyKind
}

/** What the rule knows about a view, built call by call in view order. */
export interface Repeating {
  /** Signature -> position of the newest call with that signature whose output is sent in full. */
  readonly newest: Map<string, number>
  /**
   * Absolute path -> the latest write of the file (or patch that added it) and the latest whole read, with no change
   * to the file since.
   */
  readonly files: Map<string, { write: number | undefined; read: number | undefined }>
}

export const repeating = (): Repeating => ({ newest: new Map(), files: new Map() })

const isWholeRead = (call: ToolCall) =>
  call.tool === "read" && call.input.offset === undefined && call.input.limit === undefined

const hasOutput = (call: ToolCall) => call.status === "completed" && call.hasTextOutput && !call.compacted

/**
 * A numbered listing's lines, as OpenCode's read tool (`12: text`) and `cat -n` (`    12\ttext`) print them: the
 * numbers and texts of the lines in the order they appear.
 */
const numberedLine = /^(?: *(\d+)\t|(\d+): )(.*)$/

const numberedLines = (
  output: string
): { numbers: Array<number>; texts: Array<string>; first: number; last: number } => {
  const numbers: Array<number> = []
  const texts: Array<string> = []
  let first = -1
  let last = -1
  let offset = 0
  for (const line of output.split("\n")) {
    const match = numberedLine.exec(line)
    if (match !== null) {
      const n = Number(match[1] ?? match[2])
      if (numbers.length === 0 || n === numbers[numbers.length - 1]! + 1) {
        if (numbers.length === 0) first = offset
        numbers.push(n)
        texts.push(match[3]!)
        last = offset + line.length
      } else if (numbers.length > 0) {
        break
      }
    } else if (numbers.length > 0) {
      break
    }
    offset += line.length + 1
  }
  return { numbers, texts, first, last }
}

/** Whether a whole-file read shows exactly `content`, line for line from line 1. */
const showsContent = (output: string, content: string): boolean => {
  const lines = content.split("\n")
  if (lines.length > 1 && lines[lines.length - 1] === "") lines.pop()
  const { numbers, texts } = numberedLines(output)
  if (numbers[0] !== 1 || texts.length !== lines.length) return false
  for (let i = 0; i < lines.length; i++) if (texts[i] !== lines[i]) return false
  return true
}

/** The numbered lines of a partial read, as one block of its output, when they all appear in `earlier` as they are. */
const containedIn = (output: string, earlier: string): boolean => {
  const { first, last, numbers } = numberedLines(output)
  return numbers.length > 0 && earlier.includes(output.slice(first, last))
}

/**
 * Adds the call at `position` (positions come in ascending order) and returns the earlier copy it repeats, when it is
 * sent for the first time (`firstSend`) and is a repeat. `sent(position)`: whether a call's output or content is
 * sent in full (not pruned); `outputOf(call)`: a call's output in the request being built (the index keeps counts, not
 * texts). A repeat does not become the newest copy: the earlier one stays the one to point to.
 */
export interface RepeatOptions {
  readonly firstSend: boolean
  readonly prunable: (call: ToolCall) => boolean
  readonly sent: (position: number) => boolean
  readonly outputOf: (call: ToolCall) => string | undefined
}

export const repeat = (
  state: Repeating,
  calls: ReadonlyArray<ToolCall>,
  position: number,
  options: RepeatOptions
): Copy | undefined => {
  const call = calls[position]!
  const file = call.absolutePath
  if (changesFile(call.tool)) {
    const copies = call.status === "completed" ? call.copiedFiles : []
    for (const changed of call.files) {
      state.files.set(changed, { write: copies.includes(changed) ? position : undefined, read: undefined })
    }
    return undefined
  }
  if (!hasOutput(call) || !options.sent(position)) return undefined
  if (options.firstSend && readsBackInput(call, options.outputOf)) return { source: position, kind: "input" }
  const found = options.firstSend && options.prunable(call) ? copyOf(state, calls, call, options) : undefined
  if (found !== undefined) return found
  state.newest.set(call.signature, position)
  if (file !== undefined && isWholeRead(call)) {
    const entry = state.files.get(file)
    state.files.set(file, { write: entry?.write, read: position })
  }
  return undefined
}

/**
 * Tools whose output is their input read back, and the input it reads back. OpenCode's todowrite returns the list
 * pretty-printed after decoding it, which puts each item's keys in its schema's order.
 */
const inputReadBack: Readonly<Record<string, (input: Readonly<Record<string, unknown>>) => unknown>> = {
  todowrite: (input) => input.todos
}

const readsBackInput = (call: ToolCall, outputOf: RepeatOptions["outputOf"]): boolean => {
  const readBack = inputReadBack[call.tool]
  if (readBack === undefined) return false
  const output = outputOf(call)
  const input = readBack(call.input)
  if (output === undefined || input === undefined) return false
  const parsed = parseJson(output)
  const expected = canonicalJson(input)
  return parsed !== undefined && expected !== undefined && canonicalJson(parsed) === expected
}

const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The whole content a file change gave `file`: a write's content, or the content a patch added the file with. */
const writtenContent = (change: ToolCall, file: string): string | undefined => {
  if (change.tool === "apply_patch") {
    const text = change.input.patchText
    return typeof text === "string" ? addedContents(text)[change.copiedFiles.indexOf(file)] : undefined
  }
  const content = change.input.content
  return typeof content === "string" ? content : undefined
}

const copyOf = (
  state: Repeating,
  calls: ReadonlyArray<ToolCall>,
  call: ToolCall,
  options: RepeatOptions
): Copy | undefined => {
  const { outputOf, sent } = options
  const output = outputOf(call)
  if (output === undefined) return undefined
  const same = state.newest.get(call.signature)
  if (
    same !== undefined && sent(same) && calls[same]!.outputTokens === call.outputTokens &&
    outputOf(calls[same]!) === output
  ) {
    return { source: same, kind: "same" }
  }
  if (call.tool !== "read" || call.absolutePath === undefined) return undefined
  const file = state.files.get(call.absolutePath)
  if (file === undefined) return undefined
  if (isWholeRead(call)) {
    const write = file.write
    if (write === undefined || file.read !== undefined || !sent(write)) return undefined
    const content = writtenContent(calls[write]!, call.absolutePath)
    return content !== undefined && showsContent(output, content) ? { source: write, kind: "written" } : undefined
  }
  const read = file.read
  if (read === undefined || !sent(read)) return undefined
  const earlier = outputOf(calls[read]!)
  return earlier !== undefined && containedIn(output, earlier) ? { source: read, kind: "contained" } : undefined
}
