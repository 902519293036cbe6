import { assert, describe, it } from "vitest"
import { parseCommand } from "../../src/commands/parse.ts"

/** The problem an invalid parse reports; fails the test unless the parse is invalid. */
const problemOf = (parsed: ReturnType<typeof parseCommand>): string => {
  if (parsed._tag !== "invalid") return assert.fail(`expected an invalid parse, got ${parsed._tag}`)
  return parsed.problem
}

describe("parsing /dcp arguments", () => {
  it("no arguments or `help` is the help", () => {
    assert.deepStrictEqual(parseCommand(""), { _tag: "help" })
    assert.deepStrictEqual(parseCommand("  help "), { _tag: "help" })
  })

  it("recognises each subcommand, in any letter case", () => {
    assert.deepStrictEqual(parseCommand("context"), { _tag: "context" })
    assert.deepStrictEqual(parseCommand("STATS"), { _tag: "stats" })
    assert.deepStrictEqual(parseCommand("sweep"), { _tag: "sweep", count: undefined })
    assert.deepStrictEqual(parseCommand("sweep 5"), { _tag: "sweep", count: 5 })
    assert.deepStrictEqual(parseCommand("restore 12"), { _tag: "restore", target: 12 })
    assert.deepStrictEqual(parseCommand("restore ALL"), { _tag: "restore", target: "all" })
  })

  it.each(["0", "-1", "2.5", "abc", "1e3", "05x"])("`sweep %s` is a bad n, with what is valid", (n) => {
    const problem = problemOf(parseCommand(`sweep ${n}`))
    assert.include(problem, "whole number of 1 or more")
    assert.include(problem, `"${n}"`)
  })

  it("`restore` needs an id or `all`", () => {
    assert.deepStrictEqual(parseCommand("restore"), {
      _tag: "invalid",
      problem: `Restore what? /dcp restore takes an id or "all".`,
      restore: true
    })
    assert.deepStrictEqual(parseCommand("restore x1"), {
      _tag: "invalid",
      problem: `"x1" is not an id: /dcp restore takes an id or "all".`,
      restore: true
    })
  })

  it("extra arguments are refused with the usage", () => {
    assert.include(problemOf(parseCommand("sweep 1 2")), "the usage is /dcp sweep [n].")
    assert.include(problemOf(parseCommand("stats now")), "the usage is /dcp stats.")
  })

  it("an unknown subcommand is named, with the valid ones in one line", () => {
    assert.deepStrictEqual(parseCommand("purge everything"), {
      _tag: "invalid",
      problem: `Unknown subcommand "purge": /dcp takes context, stats, sweep [n], restore <id|all> or help.`
    })
  })
})
