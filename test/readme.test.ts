import { readFileSync } from "node:fs"
import type { SchemaAST } from "effect"
import { describe, expect, it } from "vitest"
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
    expect(rows.filter((row) => !readme.includes(row))).toEqual([])
  })

  it("says, where the set-up commands are, what npm install prints on Node 20 and how much disk it takes", () => {
    const setUp = readme.slice(readme.indexOf("## Set up"), readme.indexOf("## Development"))
    expect(setUp).toContain("npm install")
    expect(setUp).toContain("EBADENGINE")
    expect(setUp).toMatch(/node_modules` takes about \d+ MB/)
  })

  it("names exactly the two set-up commands CI runs", () => {
    const ci = readFileSync(new URL("../.ci/run", import.meta.url), "utf8")
    expect(readme).toContain("npm install")
    expect(readme).toContain("npm test")
    expect(ci).toContain("npm install")
    expect(ci).toContain("npm test")
  })
})
