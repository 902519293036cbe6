import type { SchemaAST } from "effect"
import { fieldsOf, isSection } from "../../src/config/load.ts"
import { defaultConfig, PluginConfigFile } from "../../src/config/schema.ts"

/** Every setting's dotted path, in the schema's order (`$schema`, which sets nothing, left out). */
export const settingPaths = (): ReadonlyArray<string> =>
  leafPaths(PluginConfigFile.ast).filter((path) => path !== "$schema")

const leafPaths = (ast: SchemaAST.AST, prefix = ""): ReadonlyArray<string> =>
  fieldsOf(ast).flatMap((field) => {
    const path = `${prefix}${String(field.name)}`
    return isSection(field.type) ? leafPaths(field.type, `${path}.`) : [path]
  })

/** A setting's default, by its dotted path. */
export const defaultOf = (path: string): unknown =>
  path.split(".").reduce<unknown>((inner, key) => (inner as Record<string, unknown>)[key], defaultConfig)
