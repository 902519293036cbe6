import { assert, describe, it } from "vitest"
import { makeProgress } from "../../src/analysis/progress.ts"

/** A progress reporter on a clock the test moves, and what it wrote. */
const reporter = (terminal: boolean) => {
  let now = 0
  const written: Array<string> = []
  const progress = makeProgress({
    name: "dcp-analyse",
    terminal,
    write: (text) => void written.push(text),
    now: () => now
  })
  return { progress, written, at: (ms: number) => void (now = ms) }
}

// Elsewhere than on a terminal: for a replay of 500 requests or more, a first line after 3 s, then one every 10 s.
describe("analyser progress, when standard error is not a terminal", () => {
  it("a long replay prints a plain line now and then, with how far it got", () => {
    const { at, progress, written } = reporter(false)
    at(3_000)
    progress.update("withoutPlugin", 120, 3550)
    at(4_000)
    progress.update("withoutPlugin", 160, 3550)
    at(13_000)
    progress.update("withPlugin", 200, 3550)
    progress.clear()
    assert.deepStrictEqual(written, [
      "dcp-analyse: replaying request 120 of 3,550 without the plugin (3%)\n",
      "dcp-analyse: replaying request 200 of 3,550 with the plugin (5%)\n"
    ])
  })

  it("a quick one prints nothing", () => {
    const { at, progress, written } = reporter(false)
    at(2_999)
    progress.update("withPlugin", 1000, 3550)
    progress.clear()
    assert.deepStrictEqual(written, [])
  })

  it("a small session prints nothing, however slow the machine", () => {
    const { at, progress, written } = reporter(false)
    at(13_000)
    progress.update("withPlugin", 70, 499)
    assert.deepStrictEqual(written, [])
  })
})

describe("analyser progress on a terminal", () => {
  it("rewrites one line in place and clears it at the end", () => {
    const { at, progress, written } = reporter(true)
    at(600)
    progress.update("withPlugin", 10, 71)
    at(800)
    progress.update("withPlugin", 20, 71)
    progress.clear()
    assert.deepStrictEqual(written, [
      "\r\x1b[Kdcp-analyse: replaying request 10 of 71 with the plugin",
      "\r\x1b[Kdcp-analyse: replaying request 20 of 71 with the plugin",
      "\r\x1b[K"
    ])
  })
})
