// Writes the table of settings in docs/configuration.md (every key, its default, what is valid, what it does) from the
// Effect schema in src/config/schema.ts, between the two marker lines; the prose around them is written by hand.
// `npm run schema` runs it after scripts/config-schema.ts; a test fails while the committed table is out of date.
import { readFileSync, writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { SchemaAST } from "effect"
import { describeExpected, fieldsOf, isSection } from "../src/config/load.ts"
import { defaultConfig, PluginConfigFile } from "../src/config/schema.ts"

export const configDocFile = fileURLToPath(new URL("../docs/configuration.md", import.meta.url))

const start = "<!-- Generated from src/config/schema.ts by `npm run schema`: change the schema, not this table. -->"
const end = "<!-- End of the generated table. -->"

const descriptionOf = (ast: SchemaAST.AST): string => SchemaAST.resolveDescription(SchemaAST.toType(ast)) ?? ""

// A table cell holds one line, and `|` would end it.
const cell = (text: string): string => text.replaceAll("|", "\\|").replaceAll("\n", " ")

const code = (text: string): string => `\`${text}\``

/** `"auto"` or `an integer >= 0`: quoted words in code, the rest as words. */
const expected = (ast: SchemaAST.AST): string =>
  describeExpected(ast).replace(/"[^"]*"/g, (word) => code(word)).replace(/\btrue or false\b/, "`true` or `false`")

interface Section {
  readonly path: string
  readonly description: string
  readonly rows: ReadonlyArray<string>
}

const sections = (
  ast: SchemaAST.AST,
  values: Record<string, unknown>,
  path: string,
  description: string
): ReadonlyArray<Section> => {
  const rows: Array<string> = []
  const nested: Array<Section> = []
  for (const field of fieldsOf(ast)) {
    const key = String(field.name)
    if (key === "$schema") continue
    const here = path === "" ? key : `${path}.${key}`
    const value = values[key]
    if (isSection(field.type)) {
      nested.push(...sections(field.type, value as Record<string, unknown>, here, descriptionOf(field.type)))
      continue
    }
    rows.push(
      `| ${code(here)} | ${code(JSON.stringify(value))} | ${cell(expected(field.type))} | ${
        cell(descriptionOf(field.type))
      } |`
    )
  }
  return [{ path, description, rows }, ...nested].filter((section) => section.rows.length > 0)
}

/** The generated table of every setting, by section, in the schema's order. */
export const renderSettings = (): string =>
  sections(PluginConfigFile.ast, defaultConfig as unknown as Record<string, unknown>, "", "").flatMap((section) => [
    section.path === "" ? "### Top level" : `### ${code(section.path)}`,
    "",
    ...(section.description === "" ? [] : [section.description, ""]),
    "| key | default | valid values | what it does |",
    "| --- | --- | --- | --- |",
    ...section.rows,
    ""
  ]).join("\n")

/** `document` with its generated table replaced by the current one. */
export const withSettings = (document: string): string => {
  const from = document.indexOf(start)
  const to = document.indexOf(end)
  if (from < 0 || to < from) throw new Error(`docs/configuration.md lacks the marker lines:\n${start}\n${end}`)
  return `${document.slice(0, from)}${start}\n\n${renderSettings()}\n${document.slice(to)}`
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(configDocFile, withSettings(readFileSync(configDocFile, "utf8")))
  console.log(`wrote ${configDocFile}`)
}
