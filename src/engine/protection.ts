import picomatch from "picomatch"
import type { ToolCall } from "./calls.ts"

/**
 * Tools whose calls are never pruned by any rule: they carry the plan, the sub-agents' work, the model's own
 * context-management calls, and file changes. Supersede-writes is the one rule allowed to shorten write/edit
 * inputs, because the file's current content is in a later read.
 */
export const alwaysProtectedTools: ReadonlySet<string> = new Set([
  "task",
  "todowrite",
  "todoread",
  "discard",
  "extract",
  "recall",
  "batch",
  "write",
  "edit",
  "plan_enter",
  "plan_exit"
])

export interface Protection {
  /** Always-protected tools, plus `extra` (a rule's own `protectedTools`). */
  readonly tool: (tool: string, extra?: ReadonlyArray<string>) => boolean
  /** The call's file matches one of `protectedFilePatterns`. */
  readonly file: (call: ToolCall) => boolean
  /** Younger than the protected number of turns. */
  readonly recent: (call: ToolCall) => boolean
}

export interface ProtectionOptions {
  readonly patterns: ReadonlyArray<string>
  readonly worktree: string
  readonly turnProtection: { readonly enabled: boolean; readonly turns: number }
  readonly currentTurn: number
}

export const makeProtection = (options: ProtectionOptions): Protection => {
  const matches = options.patterns.length === 0
    ? () => false
    : picomatch([...options.patterns], { dot: true, basename: true })
  const root = options.worktree.endsWith("/") ? options.worktree : `${options.worktree}/`
  return {
    tool: (tool, extra = []) => alwaysProtectedTools.has(tool) || extra.includes(tool),
    file: (call) => {
      if (call.filePath === undefined) return false
      const relative = call.filePath.startsWith(root) ? call.filePath.slice(root.length) : call.filePath
      return matches(call.filePath) || matches(relative)
    },
    recent: (call) =>
      options.turnProtection.enabled && options.currentTurn - call.turn < options.turnProtection.turns
  }
}
