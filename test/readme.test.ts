import { readFileSync } from "node:fs"
import type { SchemaAST } from "effect"
import { assert, describe, it } from "vitest"
import { fieldsOf, isSection } from "../src/config/load.ts"
import { defaultConfig, PluginConfigFile } from "../src/config/schema.ts"

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8")

const leaves = (ast: SchemaAST.AST, prefix = ""): ReadonlyArray<string> =>
  fieldsOf(ast).flatMap((field) => {
    const path = `${prefix}${String(field.name)}`
    return isSection(field.type) ? leaves(field.type, `${path}.`) : [path]
  })

describe("README", () => {
  it("documents every config key with its actual default", () => {
    const rows = leaves(PluginConfigFile.ast).filter((path) => path !== "$schema").map((path) => {
      const value = path.split(".").reduce<unknown>(
        (inner, key) => (inner as Record<string, unknown>)[key],
        defaultConfig
      )
      return `| \`${path}\` | \`${JSON.stringify(value)}\` |`
    })
    assert.deepStrictEqual(rows.filter((row) => !readme.includes(row)), [])
  })

  it("says, where the set-up commands are, what npm install prints on Node 20 and how much disk it takes", () => {
    const setUp = readme.slice(readme.indexOf("## Set up"), readme.indexOf("## Development"))
    assert.include(setUp, "npm install")
    assert.include(setUp, "EBADENGINE")
    assert.match(setUp, /node_modules` takes about \d+ MB/)
  })

  it("names exactly the two set-up commands CI runs", () => {
    const ci = readFileSync(new URL("../.ci/run", import.meta.url), "utf8")
    assert.include(readme, "npm install")
    assert.include(readme, "npm test")
    assert.include(ci, "npm install")
    assert.include(ci, "npm test")
  })
})
