import { SchemaAST } from "effect"
import { describeExpected, fieldsOf, isSection } from "./load.ts"
import { defaultConfig, PluginConfigFile, schemaUrl } from "./schema.ts"

/**
 * The commented default config written on first run, generated from the schema so it cannot drift from what the
 * loader accepts: every key with its description, and its default as a commented-out line. Nothing is set, so a
 * user who never edits the file keeps getting the current defaults when they change in a later release.
 */
export const renderTemplate = (): string =>
  [
    "// opencode-context-pruner (DCP) configuration. Every key is optional: a missing key keeps its default.",
    "// To change a setting, uncomment its line and edit the value.",
    "// Later files override this one key by key: $OPENCODE_CONFIG_DIR/dcp.jsonc, then <project>/.opencode/dcp.jsonc.",
    "{",
    ...entries(PluginConfigFile.ast, { $schema: schemaUrl, ...defaultConfig }, 1),
    "}",
    ""
  ].join("\n")

const entries = (ast: SchemaAST.AST, values: Record<string, unknown>, depth: number): ReadonlyArray<string> => {
  const indent = "  ".repeat(depth)
  const fields = fieldsOf(ast).filter((field) => values[String(field.name)] !== undefined)
  return fields.flatMap((field, index) => {
    const key = String(field.name)
    const value = values[key]
    const comma = index < fields.length - 1 ? "," : ""
    const description = SchemaAST.resolveDescription(SchemaAST.toType(field.type))
    const expected = describeExpected(field.type)
    // Ranges and word-or-number forms are not obvious from a default; booleans, words and lists are.
    const constraint = /\bnumber\b|\binteger\b/.test(expected) ? ` Must be ${expected}.` : ""
    const comment = description === undefined ? [] : [`${indent}// ${description}${constraint}`]
    if (isSection(field.type)) {
      return [
        ...(index > 0 ? [""] : []),
        ...comment,
        `${indent}${JSON.stringify(key)}: {`,
        ...entries(field.type, value as Record<string, unknown>, depth + 1),
        `${indent}}${comma}`
      ]
    }
    const afterSection = index > 0 && isSection(fields[index - 1]!.type)
    // `$schema` is live (editors read it); settings are commented out so defaults stay current.
    const line = `${JSON.stringify(key)}: ${JSON.stringify(value)}${comma}`
    return [
      ...(afterSection ? [""] : []),
      ...comment,
      key === "$schema" ? `${indent}${line}` : `${indent}// ${line}`
    ]
  })
}
