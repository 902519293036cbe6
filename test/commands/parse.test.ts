import { describe, expect, it } from "vitest"
import { parseCommand } from "../../src/commands/parse.ts"

describe("parsing /dcp arguments", () => {
  it("no arguments or `help` is the help", () => {
    expect(parseCommand("")).toEqual({ _tag: "help" })
    expect(parseCommand("  help ")).toEqual({ _tag: "help" })
  })

  it("recognises each subcommand, in any letter case", () => {
    expect(parseCommand("context")).toEqual({ _tag: "context" })
    expect(parseCommand("STATS")).toEqual({ _tag: "stats" })
    expect(parseCommand("sweep")).toEqual({ _tag: "sweep", count: undefined })
    expect(parseCommand("sweep 5")).toEqual({ _tag: "sweep", count: 5 })
    expect(parseCommand("restore 12")).toEqual({ _tag: "restore", target: 12 })
    expect(parseCommand("restore ALL")).toEqual({ _tag: "restore", target: "all" })
  })

  it.each(["0", "-1", "2.5", "abc", "1e3", "05x"])("`sweep %s` is a bad n, with what is valid", (n) => {
    const parsed = parseCommand(`sweep ${n}`)
    expect(parsed._tag).toBe("invalid")
    expect(parsed).toMatchObject({ problem: expect.stringContaining("whole number of 1 or more") })
    expect(parsed).toMatchObject({ problem: expect.stringContaining(`"${n}"`) })
  })

  it("`restore` needs an id or `all`", () => {
    expect(parseCommand("restore")).toMatchObject({ _tag: "invalid", problem: expect.stringContaining(`id or "all"`) })
    expect(parseCommand("restore x1")).toMatchObject({
      _tag: "invalid",
      problem: expect.stringContaining(`"x1" is not an id`)
    })
  })

  it("extra arguments are refused with the usage", () => {
    expect(parseCommand("sweep 1 2")).toMatchObject({
      _tag: "invalid",
      problem: expect.stringContaining("the usage is /dcp sweep [n].")
    })
    expect(parseCommand("stats now")).toMatchObject({
      _tag: "invalid",
      problem: expect.stringContaining("the usage is /dcp stats.")
    })
  })

  it("an unknown subcommand is named", () => {
    expect(parseCommand("purge everything")).toEqual({ _tag: "invalid", problem: `Unknown subcommand "purge".` })
  })
})
