import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import { type Loaded, parseConfig, type Problem, resolve } from "../../src/config/load.ts"
import { defaultConfig, type PluginConfig } from "../../src/config/schema.ts"

const load = (text: string): { config: PluginConfig; loaded: Loaded } => {
  const loaded = parseConfig(text)
  return { loaded, config: Result.getOrThrow(resolve([loaded.partial])) }
}

/** The single problem a file produced: path, expected and found. */
const onlyProblem = (loaded: Loaded): Pick<Problem, "path" | "expected" | "found"> => {
  assert.strictEqual(loaded.problems.length, 1, JSON.stringify(loaded.problems))
  const { path, expected, found } = loaded.problems[0]!
  return { path, expected, found }
}

describe("parseConfig: JSONC", () => {
  it("accepts line comments, block comments and trailing commas", () => {
    const { config, loaded } = load(`
      // line comment
      {
        /* block
           comment */
        "debug": true, // after a value
        "strategies": { "purgeErrors": { "turns": 6, }, },
      }`)
    assert.deepStrictEqual(loaded.problems, [])
    assert.isFalse(loaded.ignored)
    assert.strictEqual(config.debug, true)
    assert.strictEqual(config.strategies.purgeErrors.turns, 6)
  })

  it("accepts a file holding only an empty object", () => {
    const { config, loaded } = load("{}")
    assert.deepStrictEqual(loaded.problems, [])
    assert.deepStrictEqual(config, defaultConfig)
  })

  it("accepts $schema and leaves it out of the resolved config", () => {
    const { config, loaded } = load(`{ "$schema": "https://example.com/dcp.schema.json" }`)
    assert.deepStrictEqual(loaded.problems, [])
    assert.deepStrictEqual(config, defaultConfig)
  })
})

describe("parseConfig: a bad value falls back, the rest of the file applies", () => {
  it("a string where a boolean is expected", () => {
    const { config, loaded } = load(`{ "enabled": "yes", "debug": true }`)
    assert.deepStrictEqual(onlyProblem(loaded), {
      path: "enabled",
      expected: "true or false",
      found: `the string "yes"`
    })
    assert.strictEqual(config.enabled, true)
    assert.strictEqual(config.debug, true)
  })

  it("a number where a string is expected", () => {
    const { config, loaded } = load(`{ "$schema": 5, "debug": true }`)
    assert.deepStrictEqual(onlyProblem(loaded), { path: "$schema", expected: "a string", found: "5" })
    assert.strictEqual(config.debug, true)
  })

  it("an object where a list is expected", () => {
    const { config, loaded } = load(`{ "commands": { "protectedTools": { "bash": true }, "enabled": false } }`)
    assert.deepStrictEqual(onlyProblem(loaded), {
      path: "commands.protectedTools",
      expected: "a list of strings",
      found: "an object"
    })
    assert.deepStrictEqual(config.commands, { enabled: false, protectedTools: [] })
  })

  it("a string where a list is expected", () => {
    const { config, loaded } = load(`{ "protectedFilePatterns": "**/*.env" }`)
    assert.deepStrictEqual(onlyProblem(loaded), {
      path: "protectedFilePatterns",
      expected: "a list of strings",
      found: `the string "**/*.env"`
    })
    assert.deepStrictEqual(config.protectedFilePatterns, [])
  })

  it("zero turns", () => {
    const { config, loaded } = load(`{ "strategies": { "purgeErrors": { "turns": 0, "enabled": false } } }`)
    assert.deepStrictEqual(onlyProblem(loaded), {
      path: "strategies.purgeErrors.turns",
      expected: "an integer >= 1",
      found: "0"
    })
    assert.deepStrictEqual(config.strategies.purgeErrors, { enabled: false, turns: 4, protectedTools: [] })
  })

  it("negative turns", () => {
    const { config, loaded } = load(`{ "turnProtection": { "enabled": true, "turns": -3 } }`)
    assert.deepStrictEqual(onlyProblem(loaded), {
      path: "turnProtection.turns",
      expected: "an integer >= 1",
      found: "-3"
    })
    assert.deepStrictEqual(config.turnProtection, { enabled: true, turns: 4 })
  })

  it("non-integer turns", () => {
    const { config, loaded } = load(`{ "turnProtection": { "turns": 2.5 } }`)
    assert.deepStrictEqual(onlyProblem(loaded), {
      path: "turnProtection.turns",
      expected: "an integer >= 1",
      found: "2.5"
    })
    assert.strictEqual(config.turnProtection.turns, 4)
  })

  it("nudgeFrequency 0", () => {
    const { config, loaded } = load(`{ "tools": { "settings": { "nudgeFrequency": 0, "nudgeEnabled": false } } }`)
    assert.deepStrictEqual(onlyProblem(loaded), {
      path: "tools.settings.nudgeFrequency",
      expected: "an integer >= 1",
      found: "0"
    })
    assert.strictEqual(config.tools.settings.nudgeFrequency, 10)
    assert.strictEqual(config.tools.settings.nudgeEnabled, false)
  })

  it("negative nudgeMinTokens", () => {
    const { config, loaded } = load(`{ "tools": { "settings": { "nudgeMinTokens": -1 } } }`)
    assert.deepStrictEqual(onlyProblem(loaded), {
      path: "tools.settings.nudgeMinTokens",
      expected: "an integer >= 0",
      found: "-1"
    })
    assert.strictEqual(config.tools.settings.nudgeMinTokens, 8000)
  })

  it("a literal outside its set", () => {
    const { config, loaded } = load(`{ "pruneNotification": "loud" }`)
    assert.deepStrictEqual(onlyProblem(loaded), {
      path: "pruneNotification",
      expected: `"off", "minimal" or "detailed"`,
      found: `the string "loud"`
    })
    assert.strictEqual(config.pruneNotification, "detailed")
  })

  // A setting that takes a word or a number names both, whatever is wrong with the value found.
  for (
    const [value, found] of [["5000.5", "5000.5"], [`"auto2"`, `the string "auto2"`], ["-5", "-5"], ["true", "true"]]
  ) {
    it(`${value} for a setting that takes "auto" or a number`, () => {
      const { config, loaded } = load(`{ "compaction": { "atTokens": ${value} } }`)
      assert.deepStrictEqual(onlyProblem(loaded), {
        path: "compaction.atTokens",
        expected: `"auto" or an integer >= 0`,
        found
      })
      assert.strictEqual(config.compaction.atTokens, "auto")
    })
  }

  it("a share outside (0, 1]", () => {
    const { loaded } = load(`{ "cache": { "pressure": 90 } }`)
    assert.deepStrictEqual(onlyProblem(loaded), {
      path: "cache.pressure",
      expected: "a number > 0 and <= 1",
      found: "90"
    })
  })

  it("a list with a non-string item", () => {
    const { config, loaded } = load(`{ "tools": { "settings": { "protectedTools": ["bash", 42] } } }`)
    assert.deepStrictEqual(onlyProblem(loaded), {
      path: "tools.settings.protectedTools",
      expected: "a list of strings",
      found: "42 at item 2"
    })
    assert.deepStrictEqual(config.tools.settings.protectedTools, [])
  })

  it("null for a setting", () => {
    const { config, loaded } = load(`{ "debug": null, "enabled": false }`)
    assert.deepStrictEqual(onlyProblem(loaded), { path: "debug", expected: "true or false", found: "null" })
    assert.strictEqual(config.debug, false)
    assert.strictEqual(config.enabled, false)
  })

  it("null for a section", () => {
    const { config, loaded } = load(`{ "strategies": null }`)
    assert.deepStrictEqual(onlyProblem(loaded), { path: "strategies", expected: "an object", found: "null" })
    assert.deepStrictEqual(config.strategies, defaultConfig.strategies)
  })

  it("a scalar where a section is expected", () => {
    const { config, loaded } = load(`{ "tools": true, "debug": true }`)
    assert.deepStrictEqual(onlyProblem(loaded), { path: "tools", expected: "an object", found: "true" })
    assert.deepStrictEqual(config.tools, defaultConfig.tools)
    assert.strictEqual(config.debug, true)
  })

  it("an object where a scalar is expected", () => {
    const { config, loaded } = load(`{ "enabled": { "value": false } }`)
    assert.deepStrictEqual(onlyProblem(loaded), { path: "enabled", expected: "true or false", found: "an object" })
    assert.strictEqual(config.enabled, true)
  })

  it("several bad values in one file are each reported and each fall back", () => {
    const { config, loaded } = load(`{ "enabled": 1, "turnProtection": { "turns": "4" }, "debug": true }`)
    assert.deepStrictEqual(loaded.problems.map((p) => [p.path, p.found]), [
      ["enabled", "1"],
      ["turnProtection.turns", `the string "4"`]
    ])
    assert.deepStrictEqual([config.enabled, config.turnProtection.turns, config.debug], [true, 4, true])
  })
})

describe("parseConfig: unknown keys are reported and dropped", () => {
  it("an unknown top-level key is named; the valid keys are in `expected`, too many for the toast line", () => {
    const { config, loaded } = load(`{ "verbose": true, "debug": true }`)
    assert.deepStrictEqual(onlyProblem(loaded), {
      path: "verbose",
      expected:
        "one of $schema, enabled, debug, pruneNotification, commands, turnProtection, protectedFilePatterns, tools, strategies, cache, compaction",
      found: `unknown key "verbose"`
    })
    assert.strictEqual(loaded.problems[0]!.message, "verbose: unknown key")
    assert.strictEqual(config.debug, true)
  })

  it("a misspelt key suggests the closest valid one", () => {
    const { loaded } = load(`{ "strategies": { "purgeError": { "turns": 2 } } }`)
    assert.strictEqual(onlyProblem(loaded).path, "strategies.purgeError")
    assert.strictEqual(loaded.problems[0]!.message, `strategies.purgeError: unknown key; did you mean "purgeErrors"?`)
  })

  it("an unknown nested key", () => {
    const { config, loaded } = load(`{ "strategies": { "purgeErrors": { "maxTurns": 9, "turns": 7 } } }`)
    assert.deepStrictEqual(onlyProblem(loaded), {
      path: "strategies.purgeErrors.maxTurns",
      expected: "one of enabled, turns, protectedTools",
      found: `unknown key "maxTurns"`
    })
    assert.strictEqual(
      loaded.problems[0]!.message,
      "strategies.purgeErrors.maxTurns: unknown key; expected one of enabled, turns, protectedTools"
    )
    assert.strictEqual(config.strategies.purgeErrors.turns, 7)
  })
})

describe("parseConfig: an unusable file is ignored whole", () => {
  const ignoredWith = (text: string, problem: Pick<Problem, "path" | "expected" | "found">) => {
    const { config, loaded } = load(text)
    assert.isTrue(loaded.ignored)
    assert.deepStrictEqual(onlyProblem(loaded), problem)
    assert.deepStrictEqual(config, defaultConfig)
  }

  it("a syntax error ignores even the valid keys before it", () => {
    ignoredWith(`{\n  "debug": true\n  "enabled": false\n}`, {
      path: "",
      expected: "valid JSONC",
      found: "comma expected at line 3, column 3"
    })
  })

  it("a syntax error message counts the further errors", () => {
    const { loaded } = load(`{ "debug": true "enabled": false "x" }`)
    assert.match(loaded.problems[0]!.message, /^Syntax error at line 1, column 17: comma expected \(\+\d+ more\)\.$/)
  })

  it("an empty file", () => {
    ignoredWith("", { path: "", expected: "a JSON object", found: "an empty file" })
  })

  it("a whitespace-only file", () => {
    ignoredWith("  \n\t\n", { path: "", expected: "a JSON object", found: "an empty file" })
  })

  it("a file with only comments", () => {
    ignoredWith('// { "debug": true }\n', { path: "", expected: "a JSON object", found: "only comments" })
  })

  it("an array at the root", () => {
    ignoredWith(`[{ "debug": true }]`, { path: "", expected: "a JSON object at the top level", found: "a list" })
  })

  it("a string at the root", () => {
    ignoredWith(`"debug"`, { path: "", expected: "a JSON object at the top level", found: `the string "debug"` })
  })

  it("a number at the root", () => {
    ignoredWith("42", { path: "", expected: "a JSON object at the top level", found: "42" })
  })
})

describe("parseConfig: hostile input", () => {
  /** Every own property of Object.prototype with its value: a snapshot to compare after parsing. */
  const prototypeSnapshot = () =>
    Object.getOwnPropertyNames(Object.prototype).map((
      name
    ) => [name, Object.getOwnPropertyDescriptor(Object.prototype, name)])

  const protoCases: ReadonlyArray<readonly [string, string, string]> = [
    [
      "at the top level",
      `{ "__proto__": { "debug": true, "cache": { "mode": "immediate" } }, "enabled": false }`,
      "__proto__"
    ],
    ["in a section", `{ "cache": { "__proto__": { "mode": "immediate" } }, "enabled": false }`, "cache.__proto__"],
    [
      "in a nested section",
      `{ "tools": { "settings": { "__proto__": { "nudgeFrequency": 3 } } }, "enabled": false }`,
      "tools.settings.__proto__"
    ],
    ["nested in itself", `{ "__proto__": { "__proto__": { "polluted": true } }, "enabled": false }`, "__proto__"]
  ]

  for (const [where, text, path] of protoCases) {
    it(`__proto__ ${where} is reported as an unknown key and changes no setting and no prototype`, () => {
      const before = prototypeSnapshot()
      const { config, loaded } = load(text)
      assert.deepStrictEqual(onlyProblem(loaded).path, path)
      assert.strictEqual(onlyProblem(loaded).found, `unknown key "__proto__"`)
      assert.deepStrictEqual(config, { ...defaultConfig, enabled: false })
      assert.strictEqual(Object.getPrototypeOf(loaded.partial), Object.prototype)
      assert.strictEqual(Object.getPrototypeOf(config.cache), Object.prototype)
      assert.deepStrictEqual(prototypeSnapshot(), before)
      assert.isUndefined(({} as Record<string, unknown>).polluted)
    })
  }

  /** 100,000 levels of objects (`open`/`close` `{"a":`/`}`) or lists (`[`/`]`) around `inner`. */
  const deep = (open: string, close: string, inner = "1") => open.repeat(100_000) + inner + close.repeat(100_000)

  const deepCases: ReadonlyArray<readonly [string, string, Pick<Problem, "path" | "expected" | "found">]> = [
    ["as an unknown top-level key", `{ "x": ${deep(`{"a":`, "}")}, "debug": true }`, {
      path: "x",
      expected:
        "one of $schema, enabled, debug, pruneNotification, commands, turnProtection, protectedFilePatterns, tools, strategies, cache, compaction",
      found: `unknown key "x"`
    }],
    ["as an unknown key of a section", `{ "tools": { "x": ${deep(`{"a":`, "}")} }, "debug": true }`, {
      path: "tools.x",
      expected: "one of settings, discard, extract, recall",
      found: `unknown key "x"`
    }],
    ["as the value of a setting", `{ "debug": true, "enabled": ${deep(`{"a":`, "}")} }`, {
      path: "enabled",
      expected: "true or false",
      found: "an object"
    }],
    ["as lists in a list setting", `{ "debug": true, "protectedFilePatterns": ${deep("[", "]", "")} }`, {
      path: "protectedFilePatterns",
      expected: "a list of strings",
      found: "a list at item 1"
    }]
  ]

  for (const [where, text, problem] of deepCases) {
    it(`100,000 levels of nesting ${where} are one problem at that key, and the rest of the file applies`, () => {
      const { config, loaded } = load(text)
      assert.isFalse(loaded.ignored)
      assert.deepStrictEqual(onlyProblem(loaded), problem)
      assert.deepStrictEqual(config, { ...defaultConfig, debug: true })
    })
  }

  it("a file that is 100,000 levels of objects from the top is one unknown key", () => {
    const { config, loaded } = load(deep(`{"a":`, "}"))
    assert.strictEqual(onlyProblem(loaded).path, "a")
    assert.deepStrictEqual(config, defaultConfig)
  })

  it("a key of any length is shown shortened", () => {
    const key = "k".repeat(100_000)
    const { loaded } = load(`{ "${key}": 1, "debug": true }`)
    assert.isAtMost(loaded.problems[0]!.message.length, 100)
    assert.match(loaded.problems[0]!.message, /^\["k{60}"…\]: unknown key$/)
  })
})

describe("resolve", () => {
  it("merges key by key at every depth", () => {
    const config = Result.getOrThrow(resolve([
      { debug: true, strategies: { purgeErrors: { enabled: false, turns: 6 }, deduplication: { enabled: false } } },
      { strategies: { purgeErrors: { turns: 9 } } }
    ]))
    assert.strictEqual(config.debug, true)
    assert.deepStrictEqual(config.strategies.purgeErrors, {
      ...defaultConfig.strategies.purgeErrors,
      enabled: false,
      turns: 9
    })
    assert.deepStrictEqual(config.strategies.deduplication, {
      ...defaultConfig.strategies.deduplication,
      enabled: false
    })
  })

  it("replaces lists instead of concatenating them", () => {
    const config = Result.getOrThrow(resolve([{ protectedFilePatterns: ["a", "b"] }, { protectedFilePatterns: ["c"] }]))
    assert.deepStrictEqual(config.protectedFilePatterns, ["c"])
  })

  it("resolves later partials over earlier ones over the defaults", () => {
    const config = Result.getOrThrow(
      resolve([{ debug: true, pruneNotification: "off" }, { pruneNotification: "minimal" }])
    )
    assert.deepStrictEqual(config, { ...defaultConfig, debug: true, pruneNotification: "minimal" })
  })
})
