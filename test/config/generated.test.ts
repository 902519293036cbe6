import { NodeFileSystem } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { Effect, FileSystem, Result, type SchemaAST } from "effect"
import { configDocFile, withSettings } from "../../scripts/config-doc.ts"
import { renderJsonSchema, schemaFile } from "../../scripts/config-schema.ts"
import { describeExpected, fieldsOf, isSection, parseConfig, resolve } from "../../src/config/load.ts"
import { defaultConfig, PluginConfigFile } from "../../src/config/schema.ts"
import { renderTemplate } from "../../src/config/template.ts"
import { defaultOf, settingPaths } from "../support/settings.ts"

describe("template", () => {
  it("parses with no problems and decodes to exactly the defaults", () => {
    const loaded = parseConfig(renderTemplate())
    assert.deepStrictEqual(loaded.problems, [])
    assert.deepStrictEqual(Result.getOrThrow(resolve([loaded.partial])), defaultConfig)
  })

  it("sets nothing but $schema, so later releases' defaults still apply", () => {
    const setLeaves = (value: unknown, prefix: string): ReadonlyArray<string> =>
      typeof value === "object" && value !== null && !Array.isArray(value)
        ? Object.entries(value).flatMap(([key, inner]) => setLeaves(inner, `${prefix}${key}.`))
        : [prefix.slice(0, -1)]
    assert.deepStrictEqual(setLeaves(parseConfig(renderTemplate()).partial, ""), ["$schema"])
  })

  it("documents every key with its description and its default, commented out", () => {
    const template = renderTemplate()
    assert.include(
      template,
      `    // How many of the most recent turns are protected. Must be an integer >= 1.\n    // "turns": 4`
    )
    const undocumented = settingPaths().filter((path) => {
      const key = path.split(".").at(-1)!
      const value = defaultOf(path)
      const line = `// "${key}": ${JSON.stringify(value)}`
      return !new RegExp(`// .+\\n\\s*${line.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`).test(template)
    })
    assert.deepStrictEqual(undocumented, [])
  })
})

describe("what a problem says is valid", () => {
  it("every key has a description of its valid values, read from the schema", () => {
    const leaves = (ast: SchemaAST.AST, prefix = ""): ReadonlyArray<[string, string]> =>
      fieldsOf(ast).flatMap((field) => {
        const path = `${prefix}${String(field.name)}`
        return isSection(field.type)
          ? leaves(field.type, `${path}.`)
          : [[path, describeExpected(field.type)] as [string, string]]
      })
    const vague = leaves(PluginConfigFile.ast).filter(([, expected]) => /valid value/.test(expected))
    assert.deepStrictEqual(vague, [])
  })

  it("the template states the valid range of every number, and both forms of a word-or-number setting", () => {
    const template = renderTemplate()
    assert.include(template, 'Must be an integer >= 1.\n    // "turns": 4')
    assert.match(template, /Must be "auto" or an integer >= 0\.\n {4}\/\/ "atTokens": "auto"/)
    assert.match(template, /Must be a number > 0 and <= 1\.\n {4}\/\/ "pressure": 0\.9/)
  })
})

describe("JSON Schema for editors", () => {
  it.effect("the committed schema/dcp.schema.json is up to date (run `npm run schema`)", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const committed = yield* fs.readFileString(schemaFile)
      assert.strictEqual(committed, renderJsonSchema())
    }).pipe(Effect.provide(NodeFileSystem.layer)))

  it("closes every object, carries defaults, descriptions, enums and bounds", () => {
    const schema = JSON.parse(renderJsonSchema())
    assert.strictEqual(schema.additionalProperties, false)
    assert.deepStrictEqual(schema.properties.$schema.type, "string")
    assert.deepStrictEqual(schema.properties.pruneNotification.enum, ["off", "minimal", "detailed"])
    const purge = schema.properties.strategies.properties.purgeErrors
    assert.strictEqual(purge.additionalProperties, false)
    assert.deepStrictEqual(purge.properties.turns, {
      type: "integer",
      minimum: 1,
      description: "Age in turns after which a failed call's inputs are purged.",
      default: 4
    })
  })
})

describe("docs/configuration.md", () => {
  it.effect("its table of settings is the one the schema makes (run `npm run schema`)", () =>
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      const committed = yield* fs.readFileString(configDocFile)
      assert.strictEqual(committed, withSettings(committed))
    }).pipe(Effect.provide(NodeFileSystem.layer)))
})
