import { posix } from "node:path"
import type { ToolStatus } from "../host/schema.ts"
import { patchFiles } from "./patch.ts"
import { fileKeyOf, pathRulesOf } from "./pathRules.ts"

/** One tool call as the model sees it in the current request. */
export interface ToolCall {
  readonly callID: string
  readonly tool: string
  input: Readonly<Record<string, unknown>>
  status: ToolStatus
  error: string | undefined
  /** Whether `state.output` is a string: only then can it be replaced by a placeholder. */
  hasTextOutput: boolean
  /** OpenCode cleared the output itself (its own pruning): there is nothing left to remove. */
  compacted: boolean
  /**
   * The length of the call's result as indexed (a completed call's output, a failed call's error; -1 for none): a call
   * whose result comes back with another length is indexed again, its tokens counted afresh.
   */
  resultLength: number
  filePath: string | undefined
  /**
   * `filePath` resolved against the project directory, once, when the call is indexed: the key of its file, compared,
   * never shown (`fileKeyOf`; on Windows in lower case).
   */
  absolutePath: string | undefined
  /** Every file the call names, resolved against the project directory (all those an `apply_patch` names). */
  files: ReadonlyArray<string>
  /**
   * The files whose content the call shows or sets, resolved: a read's or a file change's file, each file an
   * `apply_patch` adds or updates.
   */
  contentFiles: ReadonlyArray<string>
  /**
   * The files the call holds a copy of, resolved: a read's file (its output), a write's file (its content), each file
   * an `apply_patch` adds (the patch holds it whole). An edit or a patch's update holds only a piece.
   */
  copiedFiles: ReadonlyArray<string>
  keyParameter: string
  signature: string
  /** Tokens in the output of a completed call. */
  outputTokens: number
  /** Of those, in the language server's errors OpenCode appended to a file change's output (engine/diagnostics.ts). */
  diagnosticsTokens: number
  /** Tokens per string input, for the inputs that supersede-writes and purge-errors replace. */
  inputTokens: Readonly<Record<string, number>>
  /** Output and string inputs together: the call's weight in the request. */
  totalTokens: number
  /**
   * What the call sends besides its output and string inputs, which no content rule removes: its tool name and ID,
   * its input's keys and other values, the wrappers of the call and its result (estimated).
   */
  frameTokens: number
  /** A command's exit code, as the tool reported it (OpenCode's `bash`, in its metadata). */
  exitCode: number | undefined
  /** The first and last numbered line a read's output shows (engine/placeholders.ts, `linesShown`). */
  lines: readonly [number, number] | undefined
  /** The session's stable ID for the call, once looked up. */
  id: number | undefined
  /** Step-start parts before this call in the current view. */
  turn: number
  /**
   * The user turn the call is in: how many messages the user typed precede it in the current view (0 for the calls
   * before the first, after a compaction).
   */
  userTurn: number
  /** Position among the tool calls of the current view, oldest first. */
  position: number
  /** Where the part sits in the current request's `messages` array. */
  messageIndex: number
  partIndex: number
  /** The sync pass that last saw the call. */
  seen: number
  /** The sync pass in which the call was first seen finished (completed or failed): its output's first send. */
  finalPass: number | undefined
}

/** The tool calls of one request, oldest first, with what changed since the previous request. */
export interface ToolIndex {
  readonly calls: ReadonlyArray<ToolCall>
  readonly byCallId: ReadonlyMap<string, ToolCall>
  /** Step-start parts in the view: the current turn. */
  readonly turns: number
  /**
   * The user turns of the view, oldest first (see `ToolCall.userTurn`): each turn's key (the ID of the message that
   * opens it, stable while the turn is in the view), the index of that message, and the position of its first call
   * (the position of the next turn's first call, or the call count, when it has none). The last is the turn in
   * progress.
   */
  readonly userTurns: ReadonlyArray<UserTurn>
  /** The indexes of the messages that hold reasoning parts, ascending: a fold takes those of its turn out. */
  readonly reasoningMessages: ReadonlyArray<number>
  /** The newest compaction summary in the view. */
  readonly summaryId: string | undefined
  /** Where the newest message the user typed sits in the view (-1 if none): what `/dcp sweep` sweeps after. */
  readonly lastUserMessage: number
  /**
   * Characters of the text and the signed reasoning in the view (OpenCode sends no other reasoning): their length is
   * free to read, their tokens are not.
   */
  readonly textChars: number
  /** What the calls send unpruned, content and framing (`totalTokens` + `frameTokens`), summed as they are indexed. */
  readonly callTokens: number
  /** Calls indexed for the first time, or whose status changed, in this pass. */
  readonly changed: ReadonlyArray<ToolCall>
  /** Calls the previous pass saw that are gone from this view (compaction or revert). */
  readonly vanished: ReadonlyArray<string>
  /**
   * Call IDs that came back with another tool or input than the call indexed under them: a new call, which inherits
   * nothing recorded for the old one (its stable ID, prune, fold).
   */
  readonly replaced: ReadonlyArray<string>
  /**
   * The previous pass's newest message is gone: an undo took the newest messages out (tool calls among them or not).
   * A request that lost a message in its middle (a host's glitch, for one request) still holds it, and has not shrunk.
   */
  readonly shrank: boolean
  /** This pass, unique across sessions. */
  readonly pass: number
  /** The session's previous pass, if this index continues one. */
  readonly previousPass: number | undefined
  /**
   * Every call of the previous pass is still here, unchanged, at the same position and turn, and the calls new in
   * this pass all come after them: what was derived from the previous view still holds, and only the new calls
   * need looking at.
   */
  readonly appendOnly: boolean
}

export interface UserTurn {
  readonly key: string
  readonly messageIndex: number
  readonly firstCall: number
  /** Characters of the signed reasoning in the turn (what OpenCode sends of it), which leaves with a fold. */
  reasoningChars: number
}

/**
 * The call's stable ID. Every call of a request gets its ID before anything reads it (`beginRequest`,
 * src/engine/request.ts), and keeps it for as long as the session's state holds it.
 */
export const idOf = (call: ToolCall): number => call.id!

/**
 * How a tool call is named to people and to the model: the one argument that identifies it (a path, a command, a
 * pattern), kept short. Unknown tools fall back to their first short string argument.
 */
const keyArguments: Readonly<Record<string, ReadonlyArray<string>>> = {
  read: ["filePath"],
  write: ["filePath"],
  edit: ["filePath"],
  multiedit: ["filePath"],
  list: ["path"],
  glob: ["pattern", "path"],
  grep: ["pattern", "path"],
  bash: ["command"],
  webfetch: ["url"],
  websearch: ["query"],
  codesearch: ["query"],
  task: ["description"],
  skill: ["name"],
  lsp: ["filePath"]
}

/** Tools whose main argument is a file on disk, which protected file patterns apply to. */
const fileArguments: Readonly<Record<string, string>> = {
  read: "filePath",
  write: "filePath",
  edit: "filePath",
  multiedit: "filePath",
  lsp: "filePath",
  list: "path"
}

const maxLength = 80

const shorten = (text: string): string => {
  const oneLine = text.replace(/\s+/g, " ").trim()
  return oneLine.length <= maxLength ? oneLine : `${oneLine.slice(0, maxLength - 1)}…`
}

const filePathOf = (tool: string, input: Readonly<Record<string, unknown>>): string | undefined => {
  const key = fileArguments[tool]
  const value = key === undefined ? undefined : input[key]
  return typeof value === "string" && value.length > 0 ? value : undefined
}

/** Tools whose calls show or change the content of their one file. */
const contentTools: ReadonlySet<string> = new Set(["read", "write", "edit", "multiedit"])

/** Tools whose calls hold a copy of their one file: a read's output, a write's content. */
const copyTools: ReadonlySet<string> = new Set(["read", "write"])

const none: ReadonlyArray<string> = []

/**
 * The file fields of a call, computed once when indexed; paths resolved against `directory`, as OpenCode does, each
 * the key of its file (`fileKeyOf`: on Windows `src/a.ts` and `C:/App/src/a.ts` are one file with `c:\app\src\a.ts`).
 */
export const fileFieldsOf = (
  tool: string,
  input: Readonly<Record<string, unknown>>,
  directory: string
): Pick<ToolCall, "filePath" | "absolutePath" | "files" | "contentFiles" | "copiedFiles"> => {
  if (tool === "apply_patch") {
    const text = input.patchText
    if (typeof text !== "string")
      return { filePath: undefined, absolutePath: undefined, files: none, contentFiles: none, copiedFiles: none }
    const { added, changed, named } = patchFiles(text)
    const resolve = (path: string) => fileKeyOf(directory, path)
    return {
      filePath: undefined,
      absolutePath: undefined,
      files: named.map(resolve),
      contentFiles: changed.map(resolve),
      copiedFiles: added.map(resolve)
    }
  }
  const filePath = filePathOf(tool, input)
  if (filePath === undefined)
    return { filePath, absolutePath: undefined, files: none, contentFiles: none, copiedFiles: none }
  const absolutePath = fileKeyOf(directory, filePath)
  const files = [absolutePath]
  return {
    filePath,
    absolutePath,
    files,
    contentFiles: contentTools.has(tool) ? files : none,
    copiedFiles: copyTools.has(tool) ? files : none
  }
}

/** Paths inside the project are shown relative to it: shorter for the model, clearer for people. */
const relativePath = (filePath: string, worktree: string): string => {
  const rules = pathRulesOf(worktree)
  if (rules === posix) {
    const root = worktree.endsWith("/") ? worktree : `${worktree}/`
    return filePath.startsWith(root) ? filePath.slice(root.length) : filePath
  }
  if (!rules.isAbsolute(filePath)) return filePath
  const relative = rules.relative(worktree, filePath)
  return relative === "" || relative === ".." || relative.startsWith("..\\") || rules.isAbsolute(relative)
    ? filePath
    : relative
}

const pathArguments = new Set(["filePath", "path"])

export const keyParameterOf = (tool: string, input: Readonly<Record<string, unknown>>, worktree: string): string => {
  if (tool === "apply_patch" && typeof input.patchText === "string") {
    return shorten(patchFiles(input.patchText).named.map((path) => relativePath(path, worktree)).join(", "))
  }
  const known = keyArguments[tool]
  if (known !== undefined) {
    const values = known.flatMap((key) => {
      const value = input[key]
      if (typeof value !== "string") return []
      return [pathArguments.has(key) ? relativePath(value, worktree) : value]
    })
    if (values.length > 0) return shorten(values.join(" in "))
  }
  for (const value of Object.values(input)) {
    if (typeof value === "string" && value.length > 0 && value.length <= 200) return shorten(value)
  }
  return ""
}

/**
 * Two calls are duplicates when the tool and the input are the same once null/undefined values are dropped and
 * object keys are sorted at every depth. An input with no such form (a cycle, a BigInt, nesting deeper than any tool's
 * arguments go) is never a duplicate: it gets a signature no other call has, and the rest of the request is pruned
 * as usual.
 */
export const signatureOf = (tool: string, input: unknown): string =>
  `${tool}\u0000${canonicalJson(input) ?? `\u0001${++unserialisableInputs}`}`

let unserialisableInputs = 0

/** Nesting deeper than this has no canonical form: no tool's arguments go this deep, and recursion stays bounded. */
const maxDepth = 100

const unserialisable = Symbol("unserialisable")

/**
 * Whether two inputs are the same once null/undefined values are dropped (the comparison `signatureOf` makes, without
 * serialising either): what tells the tool index that a call ID came back with another call's input. An input nested
 * deeper than any tool's arguments go is never the same.
 */
export const sameInput = (a: unknown, b: unknown, depth = 0): boolean => {
  if (a === b) return true
  if (a === null || a === undefined) return b === null || b === undefined
  if (typeof a !== "object" || typeof b !== "object" || b === null || depth >= maxDepth) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!sameInput(a[i], b[i], depth + 1)) return false
    return true
  }
  if (Array.isArray(b)) return false
  const left = a as Record<string, unknown>
  const right = b as Record<string, unknown>
  let keys = 0
  for (const key in left) {
    const value = left[key]
    if (value === null || value === undefined) continue
    keys++
    if (!sameInput(value, right[key], depth + 1)) return false
  }
  for (const key in right) {
    const value = right[key]
    if (value !== null && value !== undefined) keys--
  }
  return keys === 0
}

/**
 * `value` as JSON with null/undefined values dropped and object keys sorted at every depth, so that two values written
 * in another key order compare equal; undefined when it has no JSON form.
 */
export const canonicalJson = (value: unknown): string | undefined => {
  const path = new Set<object>()
  const write = (item: unknown, depth: number): string => {
    if (item === null || item === undefined) return "null"
    switch (typeof item) {
      case "string":
        return JSON.stringify(item)
      case "number":
        return Number.isFinite(item) ? String(item) : "null"
      case "boolean":
        return String(item)
      case "bigint":
      case "function":
      case "symbol":
        throw unserialisable
    }
    const object = item as Record<string, unknown>
    if (depth >= maxDepth || path.has(object)) throw unserialisable
    path.add(object)
    const text = Array.isArray(object)
      ? `[${object.map((inner) => write(inner, depth + 1)).join(",")}]`
      : `{${
        Object.keys(object).sort().flatMap((key) => {
          const inner = object[key]
          return inner === null || inner === undefined ? [] : [`${JSON.stringify(key)}:${write(inner, depth + 1)}`]
        }).join(",")
      }}`
    path.delete(object)
    return text
  }
  try {
    return write(value, 0)
  } catch (error) {
    if (error === unserialisable) return undefined
    throw error
  }
}
