/**
 * The files an OpenCode `apply_patch` call names. OpenCode 1.18 gives GPT models (IDs with `gpt-`, except `gpt-4` and
 * `oss` ones) `apply_patch` instead of `write` and `edit`: one `patchText` that adds, updates, moves and deletes files,
 * each introduced by a marker line (`*** Add File: <path>`, `*** Update File: <path>`, optionally followed by
 * `*** Move to: <path>`, `*** Delete File: <path>`), as OpenCode's own parser reads them. Hunk lines start with `+`,
 * `-`, ` ` or `@@`, so a marker is never mistaken for content.
 */
export interface PatchFiles {
  /** The files the patch leaves with content it sent: added and updated files, a moved file under its new name. */
  readonly changed: ReadonlyArray<string>
  /** Every file the patch names: the changed ones, the deleted ones and a moved file's old name. */
  readonly named: ReadonlyArray<string>
  /** The files the patch edits, as they were named before it (a moved file's old name): its update sections. */
  readonly updated: ReadonlyArray<string>
  /** The files the patch adds: their whole content is in the patch. */
  readonly added: ReadonlyArray<string>
}

const add = "*** Add File:"
const update = "*** Update File:"
const moveTo = "*** Move to:"
const remove = "*** Delete File:"

const pathAfter = (line: string, marker: string): string | undefined => {
  const path = line.slice(marker.length).trim()
  return path.length > 0 ? path : undefined
}

/**
 * The content each file the patch adds is created with, in the order of `PatchFiles.added` (the last section wins
 * for a file added twice): the section's `+` lines without their `+`, up to the next marker, as OpenCode writes it.
 */
export const addedContents = (patchText: string): ReadonlyArray<string> => {
  const contents = new Map<string, string>()
  const lines = patchText.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const path = lines[i]!.startsWith(add) ? pathAfter(lines[i]!.trimEnd(), add) : undefined
    if (path === undefined) continue
    const content: Array<string> = []
    while (i + 1 < lines.length && !lines[i + 1]!.startsWith("***")) {
      const line = lines[++i]!
      if (line.startsWith("+")) content.push(line.slice(1))
    }
    contents.set(path, content.join("\n"))
  }
  return [...contents.values()]
}

export const patchFiles = (patchText: string): PatchFiles => {
  const changed = new Set<string>()
  const named = new Set<string>()
  const updated = new Set<string>()
  const added = new Set<string>()
  const lines = patchText.split("\n")
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trimEnd()
    if (!line.startsWith("*** ")) continue
    if (line.startsWith(add)) {
      const path = pathAfter(line, add)
      if (path === undefined) continue
      changed.add(path)
      named.add(path)
      added.add(path)
    } else if (line.startsWith(remove)) {
      const path = pathAfter(line, remove)
      if (path !== undefined) named.add(path)
    } else if (line.startsWith(update)) {
      const path = pathAfter(line, update)
      if (path === undefined) continue
      const next = lines[i + 1]?.trimEnd()
      const moved = next?.startsWith(moveTo) === true ? pathAfter(next, moveTo) : undefined
      named.add(path)
      if (moved !== undefined) named.add(moved)
      changed.add(moved ?? path)
      updated.add(path)
    }
  }
  return { changed: [...changed], named: [...named], updated: [...updated], added: [...added] }
}
