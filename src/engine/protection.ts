import { win32 } from "node:path"
import picomatch from "picomatch"
import type { ToolCall } from "./calls.ts"
import { pathRulesOf, withSlashes } from "./pathRules.ts"

/**
 * Tools whose calls are never pruned by any rule: they carry the plan, the sub-agents' work, the model's own
 * context-management calls, and file changes (`apply_patch` is how OpenCode has GPT models write and edit). Two rules
 * may shorten the content inputs of file changes (never their path or result): supersede-writes, because the file's
 * current content is in a later read, and stale outputs, once the change is old (strategies/staleOutputs.ts). The
 * output of `todowrite`, its input's list read back, is sent as a pointer to that input (strategies/repeats.ts).
 * `recall` is not protected: what it brought back can be pruned again like any output.
 */
const alwaysProtectedTools: ReadonlySet<string> = new Set([
  "task",
  "todowrite",
  "todoread",
  "discard",
  "extract",
  "batch",
  "write",
  "edit",
  "apply_patch",
  "plan_enter",
  "plan_exit"
])

export interface Protection {
  /** Always-protected tools, plus `extra` (a rule's own `protectedTools`). */
  readonly tool: (tool: string, extra?: ReadonlyArray<string>) => boolean
  /** One of the call's files matches one of `protectedFilePatterns`. */
  readonly file: (call: ToolCall) => boolean
  /** Younger than the protected number of turns. */
  readonly recent: (call: ToolCall) => boolean
}

export interface ProtectionOptions {
  readonly patterns: ReadonlyArray<string>
  /** The directories a relative pattern may be relative to: the worktree and the project directory. */
  readonly roots: ReadonlyArray<string>
  readonly turnProtection: { readonly enabled: boolean; readonly turns: number }
  readonly currentTurn: number
}

/**
 * Patterns without a slash (`*.env`, `.env`) match a file's name anywhere in the tree; the others (`src/secret/**`,
 * `/etc/**`) match the whole path, absolute or relative to one of the roots (the worktree, as OpenCode's own
 * permission patterns are, and the project directory, when OpenCode was opened in a subdirectory). picomatch's
 * `basename` option cannot be used for both: it matches every pattern, with or without slashes, against the name alone.
 */
const matcher = (patterns: ReadonlyArray<string>, options: picomatch.PicomatchOptions): (path: string) => boolean =>
  patterns.length === 0 ? () => false : picomatch([...patterns], options)

const fileMatcher = (patterns: ReadonlyArray<string>, roots: ReadonlyArray<string>): (call: ToolCall) => boolean => {
  if (patterns.length === 0) return () => false
  // Patterns are written with forward slashes everywhere; on Windows a path is matched with its separators turned,
  // and without regard to case, as its file systems name files.
  const rules = pathRulesOf(roots[0] ?? "/")
  const nocase = rules === win32
  const byName = matcher(patterns.filter((pattern) => !pattern.includes("/")), { dot: true, basename: true, nocase })
  const byPath = matcher(patterns.filter((pattern) => pattern.includes("/")), { dot: true, nocase })
  // A call's files never change, so each call is matched once.
  const known = new WeakMap<ToolCall, boolean>()
  const inside = (root: string, absolute: string) => {
    const relative = withSlashes(rules.relative(root, absolute), rules)
    return relative !== "" && !relative.startsWith("../") && relative !== ".." && !rules.isAbsolute(relative)
      ? relative
      : undefined
  }
  const matches = (absolute: string) => {
    const slashed = withSlashes(absolute, rules)
    return byName(slashed) || byPath(slashed) || roots.some((root) => {
      const relative = inside(root, absolute)
      return relative !== undefined && byPath(relative)
    })
  }
  return (call) => {
    if (call.files.length === 0) return false
    const cached = known.get(call)
    if (cached !== undefined) return cached
    const matched = call.files.some(matches)
    known.set(call, matched)
    return matched
  }
}

/** Compiled matchers by pattern list (the config's list is one object for the plugin's life) and roots. */
const compiled = new WeakMap<ReadonlyArray<string>, Map<string, (call: ToolCall) => boolean>>()

const fileMatcherFor = (patterns: ReadonlyArray<string>, roots: ReadonlyArray<string>) => {
  const key = roots.join("\u0000")
  let byRoot = compiled.get(patterns)
  if (byRoot === undefined) {
    byRoot = new Map()
    compiled.set(patterns, byRoot)
  }
  let match = byRoot.get(key)
  if (match === undefined) {
    match = fileMatcher(patterns, roots)
    byRoot.set(key, match)
  }
  return match
}

export const makeProtection = (options: ProtectionOptions): Protection => {
  const file = fileMatcherFor(options.patterns, options.roots)
  return {
    tool: (tool, extra = []) => alwaysProtectedTools.has(tool) || extra.includes(tool),
    file,
    recent: (call) => options.turnProtection.enabled && options.currentTurn - call.turn < options.turnProtection.turns
  }
}
