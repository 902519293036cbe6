import type { PlatformPath } from "node:path"
import { pathRulesOf } from "./pathRules.ts"

/**
 * The instruction files OpenCode 1.18.33 puts in the system prompt it builds for every request (its `Instruction`
 * service), read from disk each time, after the plugin's `messages.transform`: for the project, the files of the
 * first of these names found in the directory or a folder above it, up to the worktree (all the folders' files of
 * that name, none of the later names); the first of a global `AGENTS.md` (in OpenCode's config directory) and
 * `~/.claude/CLAUDE.md`; and the files the config's `instructions` name. Each goes in as `Instructions from: <path>`
 * and its content. `OPENCODE_DISABLE_CLAUDE_CODE[_PROMPT]` leaves the `CLAUDE.md` files out, and
 * `OPENCODE_DISABLE_PROJECT_CONFIG` the project's.
 */
const projectNames: ReadonlyArray<string> = ["AGENTS.md", "CLAUDE.md", "CONTEXT.md"]

const header = /^Instructions from: (.+)$/gm

/** The instruction files a request's system prompt carried, by absolute path (or URL). */
export const carriedInstructions = (systemTexts: ReadonlyArray<string>): ReadonlySet<string> => {
  const paths = new Set<string>()
  for (const text of systemTexts) {
    for (const match of text.matchAll(header)) paths.add(match[1]!)
  }
  return paths
}

export interface InstructionScope {
  /** What the previous request's system prompt carried (`carriedInstructions`), if the plugin saw it. */
  readonly carried: ReadonlySet<string>
  /** The project directory, and the folder above it where OpenCode stops looking (`Paths.instructionsStop`). */
  readonly directory: string
  readonly stop: string
  /** OpenCode's global config directory, where a global `AGENTS.md` takes over from `~/.claude/CLAUDE.md`. */
  readonly globalConfigDir: string
  readonly home: string
  /** OpenCode reads `CLAUDE.md` files (no `OPENCODE_DISABLE_CLAUDE_CODE[_PROMPT]`). */
  readonly claudeCode: boolean
  /** OpenCode reads the project's instruction files (no `OPENCODE_DISABLE_PROJECT_CONFIG`). */
  readonly projectFiles: boolean
}

/**
 * The project's folders OpenCode looks for instruction files in, the directory first, as its `findUp` walks: up to
 * `stop`, or to the root when `stop` is not above the directory ("/" outside git).
 */
const foldersUp = (rules: PlatformPath, directory: string, stop: string): ReadonlyArray<string> => {
  const folders = [directory]
  let folder = directory
  while (folder !== stop) {
    const parent = rules.dirname(folder)
    if (parent === folder) break
    folder = parent
    folders.push(folder)
  }
  return folders
}

/**
 * Where OpenCode looks for instruction files, by the rules of the machine it runs on: `project`, for each name in its
 * order, that name in each of the project's folders; `global`, the global `AGENTS.md` and then `~/.claude/CLAUDE.md`;
 * `others`, every other file the previous system prompt carried (those the config's `instructions` name). `watched`
 * is all of them: the files whose presence or content OpenCode's next system prompt depends on. Not watched: a new
 * file that a glob of the config's `instructions` would match, and what an instruction URL serves.
 */
export interface InstructionCandidates {
  readonly project: ReadonlyArray<ReadonlyArray<string>>
  readonly global: ReadonlyArray<string>
  readonly others: ReadonlyArray<string>
  readonly watched: ReadonlyArray<string>
}

export const instructionCandidates = (scope: InstructionScope): InstructionCandidates => {
  const rules = pathRulesOf(scope.directory)
  const names = scope.claudeCode ? projectNames : projectNames.filter((name) => name !== "CLAUDE.md")
  const folders = scope.projectFiles ? foldersUp(rules, scope.directory, scope.stop) : []
  const project = names.map((name) => folders.map((folder) => rules.join(folder, name)))
  const global = [
    rules.join(scope.globalConfigDir, "AGENTS.md"),
    ...(scope.claudeCode ? [rules.join(scope.home, ".claude", "CLAUDE.md")] : [])
  ]
  const named = new Set([...project.flat(), ...global])
  // An instruction URL is carried by its address, which is no absolute path.
  const others = [...scope.carried].filter((path) => rules.isAbsolute(path) && !named.has(path))
  return { project, global, others, watched: [...named, ...others] }
}

/**
 * The files OpenCode reads into its system prompt, given which are on disk (`present`), as its `Instruction` service
 * chooses them: the project's files of the first name present in any of its folders, the first present of the global
 * `AGENTS.md` and `~/.claude/CLAUDE.md`, and the other files carried. An empty file is chosen like any other, and
 * then sends nothing: an empty `AGENTS.md` keeps OpenCode from reading the `CLAUDE.md` beside it.
 *
 * @internal Exported for its own tests, a table of OpenCode's rules; the plugin uses it through `instructionsChanged`.
 */
export const readInstructions = (
  candidates: InstructionCandidates,
  present: (path: string) => boolean
): ReadonlySet<string> => {
  const name = candidates.project.find((paths) => paths.some(present)) ?? []
  const first = candidates.global.find(present)
  return new Set([
    ...name.filter(present),
    ...(first === undefined ? [] : [first]),
    ...candidates.others.filter(present)
  ])
}

/**
 * What a file on disk is, as far as the system prompt goes: `seen`, its modification time and size, says whether it
 * must be read again; `content`, a digest of its bytes (or `absent`), whether what OpenCode would send changed. A file
 * saved, touched or checked out again unchanged is the same file. An edit that keeps the size within the file system's
 * time resolution of the previous look is not read again (one free moment to apply what waits missed, nothing more).
 */
export interface Stamp {
  readonly seen: string
  readonly content: string
}

export const absent: Stamp = { seen: "absent", content: "absent" }

/** The stamp of a file found with `modifiedMs` and `size`: `previous` when neither moved, else one with `digest()`. */
export const stampOf = (
  modifiedMs: number | undefined,
  size: number,
  previous: Stamp | undefined,
  digest: () => string
): Stamp => {
  const seen = `${modifiedMs ?? "?"}:${size}`
  return previous?.seen === seen ? previous : { seen, content: digest() }
}

/**
 * Whether what OpenCode's system prompt carries changed between two looks at the watched files: another set of files
 * read, or the content of one read changed. A file the earlier look did not see counts as it is now.
 */
export const instructionsChanged = (
  candidates: InstructionCandidates,
  before: ReadonlyMap<string, Stamp>,
  now: ReadonlyMap<string, Stamp>
): boolean => {
  const stampNow = (path: string) => now.get(path) ?? absent
  const stampBefore = (path: string) => before.get(path) ?? stampNow(path)
  const readBefore = readInstructions(candidates, (path) => stampBefore(path).content !== absent.content)
  const readNow = readInstructions(candidates, (path) => stampNow(path).content !== absent.content)
  if (readBefore.size !== readNow.size) return true
  for (const path of readNow) {
    if (!readBefore.has(path) || stampBefore(path).content !== stampNow(path).content) return true
  }
  return false
}
