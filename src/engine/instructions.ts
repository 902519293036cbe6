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
 * The files whose change on disk changes the instructions of OpenCode's next system prompt: every file the previous
 * one carried (an edit, or the file gone), and the files whose creation OpenCode would read from then on: a project
 * file of a name no later in its order than the project files carried, in any of the project's folders, and a global
 * `AGENTS.md`, or while there is none, a `~/.claude/CLAUDE.md`. Not watched: a new file that a glob of the config's
 * `instructions` would match, and what an instruction URL serves.
 */
export const watchedInstructions = (scope: InstructionScope): ReadonlyArray<string> => {
  const rules = pathRulesOf(scope.directory)
  // An instruction URL is carried by its address, which is no absolute path.
  const watched = new Set([...scope.carried].filter((path) => rules.isAbsolute(path)))
  const read = scope.claudeCode ? projectNames : projectNames.filter((name) => name !== "CLAUDE.md")
  const folders = scope.projectFiles ? foldersUp(rules, scope.directory, scope.stop) : []
  const carriedRanks = [...scope.carried].flatMap((carried) =>
    folders.includes(rules.dirname(carried)) ? [read.indexOf(rules.basename(carried))] : []
  ).filter((rank) => rank >= 0)
  const names = read.slice(0, Math.min(read.length - 1, ...carriedRanks) + 1)
  for (const folder of folders) {
    for (const name of names) watched.add(rules.join(folder, name))
  }
  const globalAgents = rules.join(scope.globalConfigDir, "AGENTS.md")
  watched.add(globalAgents)
  if (scope.claudeCode && !scope.carried.has(globalAgents)) watched.add(rules.join(scope.home, ".claude", "CLAUDE.md"))
  return [...watched]
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

/** Whether a file both looks at saw changed between them (a file only one of them looked at tells nothing). */
export const stampsDiffer = (before: ReadonlyMap<string, Stamp>, now: ReadonlyMap<string, Stamp>): boolean => {
  for (const [path, stamp] of now) {
    const was = before.get(path)
    if (was !== undefined && was.content !== stamp.content) return true
  }
  return false
}
