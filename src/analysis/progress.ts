/**
 * Progress of a long analysis, for standard error. On a terminal, one line rewritten in place. Anywhere else (a
 * file, a pipe, a CI log) rewriting is noise, so a plain line now and then: a long run is never silent, and a small
 * session prints nothing however slow the machine, since scripts read standard error for errors.
 */

import type { RunName } from "./analysis.ts"

export interface ProgressOptions {
  /** The analyser's name, at the head of every line. */
  readonly name: string
  /** Whether the output is a terminal (a line can be rewritten in place). */
  readonly terminal: boolean
  readonly write: (text: string) => void
  /** Milliseconds, from any origin. */
  readonly now: () => number
}

export interface Progress {
  /** `done` of `total` requests replayed in one of the analysis' runs. */
  readonly update: (run: RunName, done: number, total: number) => void
  /** Clears the terminal's progress line, if one is shown; a line printed elsewhere stays. */
  readonly clear: () => void
}

/** A terminal line appears after this long, then changes at most this often. */
const terminalDelayMs = 500
const terminalEveryMs = 100
/** Elsewhere, for a replay of at least so many requests: the first line after this long, then one per interval. */
const plainMinimumRequests = 500
const plainDelayMs = 3_000
const plainEveryMs = 10_000

const runs: Readonly<Record<RunName, string>> = {
  withoutPlugin: "without the plugin",
  withOpenCodePrune: "with OpenCode's pruning",
  withPlugin: "with the plugin"
}
const count = (n: number) => n.toLocaleString("en-US")

export const makeProgress = (options: ProgressOptions): Progress => {
  const start = options.now()
  let shown: number | undefined
  let visible = false
  if (options.terminal) {
    return {
      update: (run, done, total) => {
        const now = options.now()
        if (now - start < terminalDelayMs || (shown !== undefined && now - shown < terminalEveryMs)) return
        shown = now
        visible = true
        options.write(`\r\x1b[K${options.name}: replaying request ${count(done)} of ${count(total)} ${runs[run]}`)
      },
      clear: () => {
        if (visible) options.write("\r\x1b[K")
      }
    }
  }
  return {
    update: (run, done, total) => {
      const now = options.now()
      if (total < plainMinimumRequests) return
      if (now - start < plainDelayMs || (shown !== undefined && now - shown < plainEveryMs)) return
      shown = now
      const percent = total === 0 ? 100 : Math.floor((done / total) * 100)
      options.write(`${options.name}: replaying request ${count(done)} of ${count(total)} ${runs[run]} (${percent}%)\n`)
    },
    clear: () => {}
  }
}
