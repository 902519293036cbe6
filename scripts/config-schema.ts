// Writes schema/dcp.schema.json, the JSON Schema editors use for completion and validation of dcp.jsonc,
// generated from the Effect schema in src/config/schema.ts. Run `npm run schema` after changing the schema;
// a test fails while the committed file is out of date.
import { writeFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { Schema } from "effect"
import { PluginConfigFile, schemaUrl } from "../src/config/schema.ts"

export const schemaFile = fileURLToPath(new URL("../schema/dcp.schema.json", import.meta.url))

export const renderJsonSchema = (): string => {
  const document = Schema.toJsonSchemaDocument(PluginConfigFile, { onExcessProperty: "error" })
  const definitions = Object.keys(document.definitions).length === 0 ? {} : { $defs: document.definitions }
  const json = {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: schemaUrl,
    ...document.schema,
    ...definitions,
    // VS Code extensions: dcp.json files may carry comments and trailing commas too, as the loader accepts them.
    allowComments: true,
    allowTrailingCommas: true
  }
  return `${JSON.stringify(json, withoutSafeIntegerBounds, 2)}\n`
}

// Schema.Int adds `maximum: Number.MAX_SAFE_INTEGER`: true, but noise in an editor's hover.
const withoutSafeIntegerBounds = (key: string, value: unknown) =>
  (key === "maximum" || key === "minimum") && Math.abs(value as number) >= Number.MAX_SAFE_INTEGER ? undefined : value

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  writeFileSync(schemaFile, renderJsonSchema())
  console.log(`wrote ${schemaFile}`)
}
