import { posix } from "node:path"
import type { ToolCall } from "./calls.ts"

/**
 * The instruction files OpenCode 1.18.33 puts in the system prompt it builds for every request (its `Instruction`
 * service): for the project, the files of the first of these names found in the directory or a folder above it, up
 * to the worktree (all the folders' files of that name, none of the later names); besides, a global `AGENTS.md` and
 * the files the config's `instructions` name. Each goes in as `Instructions from: <path>` and its content. OpenCode's
 * switches that skip some of them (`OPENCODE_DISABLE_CLAUDE_CODE[_PROMPT]`, `OPENCODE_DISABLE_PROJECT_CONFIG`) are not
 * read here: a new file they skip is taken as a change, which costs at most one early rewrite of what waits.
 */
const projectNames: ReadonlyArray<string> = ["AGENTS.md", "CLAUDE.md", "CONTEXT.md"]

const header = /^Instructions from: (.+)$/gm

/** The instruction files a request's system prompt carried, by absolute path. */
export const carriedInstructions = (systemTexts: ReadonlyArray<string>): ReadonlySet<string> => {
  const paths = new Set<string>()
  for (const text of systemTexts) {
    for (const match of text.matchAll(header)) paths.add(match[1]!)
  }
  return paths
}

export interface InstructionScope {
  /** What the previous request's system prompt carried (`carriedInstructions`). */
  readonly carried: ReadonlySet<string>
  /** The project directory, and the folder above it where OpenCode stops looking (the directory itself outside git). */
  readonly directory: string
  readonly worktree: string
}

/** The project's folders OpenCode looks for instruction files in, the directory first. */
const foldersUp = (directory: string, worktree: string): ReadonlyArray<string> => {
  const folders = [directory]
  let folder = directory
  while (folder !== worktree && folder.startsWith(`${worktree}/`)) {
    folder = posix.dirname(folder)
    folders.push(folder)
  }
  return folders
}

/**
 * Whether the model's change of the file at `path` (absolute) changes the instructions of OpenCode's next system
 * prompt: a file the previous one carried, or a new project instruction file that OpenCode reads from now on (a name
 * no later in its order than the project files already carried). A file of another name changes nothing.
 */
export const changesInstructions = (path: string, scope: InstructionScope): boolean => {
  if (scope.carried.has(path)) return true
  const rank = projectNames.indexOf(posix.basename(path))
  if (rank < 0) return false
  const folders = foldersUp(scope.directory, scope.worktree)
  if (!folders.includes(posix.dirname(path))) return false
  const carriedRanks = [...scope.carried].flatMap((carried) =>
    folders.includes(posix.dirname(carried)) ? [projectNames.indexOf(posix.basename(carried))] : []
  ).filter((carriedRank) => carriedRank >= 0)
  return carriedRanks.every((carriedRank) => carriedRank >= rank)
}

/** The tools that change files in OpenCode 1.18.33 (`apply_patch` for GPT models, `multiedit` in older versions). */
const fileChanges: ReadonlySet<string> = new Set(["write", "edit", "multiedit", "apply_patch"])

/**
 * Whether one of `calls`, the model's calls finished since the previous request, changed an instruction file of the
 * system prompt made of `systemTexts` (read only when one of them changed a file).
 */
export const changedInstructions = (
  calls: ReadonlyArray<ToolCall>,
  systemTexts: ReadonlyArray<string>,
  folders: Omit<InstructionScope, "carried">
): boolean => {
  const changes = calls.filter((call) => call.status === "completed" && fileChanges.has(call.tool))
  if (changes.length === 0) return false
  const scope = { ...folders, carried: carriedInstructions(systemTexts) }
  return changes.some((call) => call.files.some((path) => changesInstructions(path, scope)))
}
