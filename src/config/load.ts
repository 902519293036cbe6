import { Effect, FileSystem, Option, Result, Schema, SchemaAST, SchemaIssue } from "effect"
import * as Jsonc from "jsonc-parser"
import { whyUnreadable } from "../data/platformError.ts"
import { parseJsonc } from "./jsonc.ts"
import { type PluginConfig, PluginConfigFile } from "./schema.ts"

/** One thing wrong in a config file. `path` is empty when it concerns the whole file. */
export interface Problem {
  /** Key path, e.g. `strategies.purgeErrors.turns`. */
  readonly path: string
  readonly expected: string
  readonly found: string
  /** One line naming the key, what was expected and what was found. */
  readonly message: string
}

/** The valid part of one config file: only known keys with valid values, at any depth. */
export type PartialConfig = { readonly [key: string]: unknown }

export interface Loaded {
  readonly partial: PartialConfig
  readonly problems: ReadonlyArray<Problem>
  /** The whole file was unusable (syntax error, empty, not an object, unreadable). */
  readonly ignored: boolean
}

/** The most a config file may hold: the documented settings fit in a few kilobytes. */
const maxConfigBytes = 1024 * 1024

/** A config file's text, or why it cannot be read (a phrase: "a named pipe (FIFO)", "permission denied"). */
export type ConfigText =
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "Unreadable"; readonly found: string }

/**
 * The text of a config file; None when there is none. Only a regular file (or a symlink to one) of at most
 * `maxConfigBytes` is read: a named pipe would block the plugin's load, and with it OpenCode's start, until something
 * writes to it, and a device such as `/dev/zero` never ends. The type and size are checked before the file is opened,
 * and the read stops one byte past the limit whatever the file turned into meanwhile.
 */
export const readConfigFile = Effect.fnUntraced(function*(file: string) {
  const fs = yield* FileSystem.FileSystem
  const unreadable = (found: string) => Option.some<ConfigText>({ _tag: "Unreadable", found })
  const info = yield* Effect.result(fs.stat(file))
  if (Result.isFailure(info)) {
    return info.failure.reason._tag === "NotFound" ? Option.none<ConfigText>() : unreadable(whyUnreadable(info.failure))
  }
  if (info.success.type !== "File") return unreadable(describeFileType(info.success.type))
  if (Number(info.success.size) > maxConfigBytes) return unreadable(tooLarge(Number(info.success.size)))
  const bytes = yield* Effect.result(readAtMost(fs, file, maxConfigBytes + 1))
  if (Result.isFailure(bytes)) return unreadable(whyUnreadable(bytes.failure))
  if (bytes.success === undefined) return unreadable("something that is not a regular file")
  if (bytes.success.length > maxConfigBytes) return unreadable(tooLarge(bytes.success.length, "or more"))
  return Option.some<ConfigText>({ _tag: "Text", text: new TextDecoder().decode(bytes.success) })
})

/** Up to `limit` bytes of a file that is still a regular file once open; undefined when it no longer is one. */
const readAtMost = (fs: FileSystem.FileSystem, file: string, limit: number) =>
  Effect.scoped(Effect.gen(function*() {
    const handle = yield* fs.open(file, { flag: "r" })
    if ((yield* handle.stat).type !== "File") return undefined
    const chunks: Array<Uint8Array> = []
    let total = 0
    while (total < limit) {
      const chunk = yield* handle.readAlloc(limit - total)
      if (Option.isNone(chunk) || chunk.value.length === 0) break
      chunks.push(chunk.value)
      total += chunk.value.length
    }
    const bytes = new Uint8Array(total)
    let offset = 0
    for (const chunk of chunks) {
      bytes.set(chunk, offset)
      offset += chunk.length
    }
    return bytes
  }))

const tooLarge = (bytes: number, more = "") =>
  `a file of ${bytes.toLocaleString("en-US")} bytes${more === "" ? "" : ` ${more}`}, over the ${
    maxConfigBytes / 1024 / 1024
  } MB a config file may have`

const describeFileType = (type: FileSystem.File.Type): string => {
  switch (type) {
    case "Directory":
      return "a directory"
    case "FIFO":
      return "a named pipe (FIFO)"
    case "CharacterDevice":
    case "BlockDevice":
      return "a device"
    case "Socket":
      return "a socket"
    default:
      return "something that is not a regular file"
  }
}

/**
 * JSONC text (comments and trailing commas allowed) to the valid part of it, plus what was wrong. Any text is safe
 * here: nesting of any depth, and keys such as `__proto__`, which are reported as unknown like any other.
 */
export const parseConfig = (text: string): Loaded => {
  const { value, errors } = parseJsonc(text)
  const first = errors[0]
  if (first !== undefined) {
    const { line, column } = position(text, first.offset)
    const what = words(Jsonc.printParseErrorCode(first.error))
    const more = errors.length > 1 ? ` (+${errors.length - 1} more)` : ""
    return ignoredFile({
      path: "",
      expected: "valid JSONC",
      found: `${what} at line ${line}, column ${column}`,
      message: `Syntax error at line ${line}, column ${column}: ${what}${more}.`
    })
  }
  if (value === undefined) {
    return ignoredFile(problem([], "a JSON object", text.trim() === "" ? "an empty file" : "only comments"))
  }
  return validateConfig(value)
}

/** Validates an already parsed value against the schema, key by key. */
const validateConfig = (input: unknown): Loaded => {
  if (!isRecord(input)) return ignoredFile(problem([], "a JSON object at the top level", describeValue(input)))
  return { ...walk(PluginConfigFile.ast, input, []), ignored: false }
}

const ignoredFile = (problem: Problem): Loaded => ({ partial: {}, problems: [problem], ignored: true })

const walk = (
  ast: SchemaAST.AST,
  input: Record<string, unknown>,
  path: ReadonlyArray<string>
): { partial: PartialConfig; problems: ReadonlyArray<Problem> } => {
  const fields = fieldsOf(ast)
  const partial: Record<string, unknown> = {}
  const problems: Array<Problem> = []
  for (const [key, value] of Object.entries(input)) {
    const here = [...path, key]
    const field = fields.find((f) => f.name === key)
    if (field === undefined) {
      problems.push(unknownKey(here, fields.map((f) => String(f.name))))
    } else if (isSection(field.type)) {
      if (isRecord(value)) {
        const nested = walk(field.type, value, here)
        partial[key] = nested.partial
        problems.push(...nested.problems)
      } else {
        problems.push(problem(here, "an object", describeValue(value)))
      }
    } else {
      const failure = checkLeaf(field.type, value)
      if (failure === undefined) partial[key] = value
      else problems.push(problem(here, describeExpected(field.type), failure))
    }
  }
  return { partial, problems }
}

/** The keys of a struct schema, in declaration order. */
export const fieldsOf = (ast: SchemaAST.AST): ReadonlyArray<SchemaAST.PropertySignature> =>
  (SchemaAST.toType(ast) as SchemaAST.Objects).propertySignatures

// Records (index signatures) are validated as one value: only fixed-key structs are walked key by key.
export const isSection = (ast: SchemaAST.AST): boolean => {
  const type = SchemaAST.toType(ast)
  return SchemaAST.isObjects(type) && type.indexSignatures.length === 0
}

/** `undefined` when valid, otherwise a description of what was found (pointing inside lists). */
const checkLeaf = (ast: SchemaAST.AST, value: unknown): string | undefined => {
  const result = Schema.decodeUnknownResult(Schema.make<Schema.Codec<unknown>>(ast))(value)
  if (Result.isSuccess(result)) return undefined
  const inner = SchemaIssue.makeFormatterStandardSchemaV1()(result.failure.issue).issues[0]?.path ?? []
  if (inner.length === 0) return describeValue(value)
  const at = inner.reduce<unknown>((v, segment) => (v as Record<PropertyKey, unknown>)[segmentKey(segment)], value)
  return `${describeValue(at)} at ${inner.map(describeSegment).join(", ")}`
}

const segmentKey = (segment: PropertyKey | { readonly key: PropertyKey }): PropertyKey =>
  typeof segment === "object" ? segment.key : segment
const describeSegment = (segment: PropertyKey | { readonly key: PropertyKey }): string => {
  const key = segmentKey(segment)
  return typeof key === "number" ? `item ${key + 1}` : `key ${String(key)}`
}

const unknownKey = (path: ReadonlyArray<string>, known: ReadonlyArray<string>): Problem => {
  const key = path[path.length - 1] ?? ""
  const near = suggest(key, known)
  const expected = `one of ${known.join(", ")}`
  return {
    path: pathText(path),
    expected,
    found: `unknown key ${shownKey(key)}`,
    // A long list of valid keys repeated on every line would crowd a small toast.
    message: near !== undefined
      ? `${pathText(path)}: unknown key; did you mean "${near}"?`
      : known.length <= 4
      ? `${pathText(path)}: unknown key; expected ${expected}`
      : `${pathText(path)}: unknown key`
  }
}

const problem = (path: ReadonlyArray<string>, expected: string, found: string): Problem => ({
  path: pathText(path),
  expected,
  found,
  message: `${path.length === 0 ? "Expected" : `${pathText(path)}: expected`} ${expected}, found ${found}`
})

const pathText = (path: ReadonlyArray<string>): string =>
  path.reduce((text, key) =>
    /^[A-Za-z_$][\w$-]*$/.test(key) && key.length <= maxKeyShown
      ? (text === "" ? key : `${text}.${key}`)
      : `${text}[${shownKey(key)}]`, "")

/** A key as shown in a toast: a file may hold a key of any length. */
const maxKeyShown = 60
const shownKey = (key: string): string =>
  key.length <= maxKeyShown ? JSON.stringify(key) : `${JSON.stringify(key.slice(0, maxKeyShown))}…`

/**
 * What a leaf accepts, in words, read from the schema's AST. (Not from its JSON Schema form: that module costs
 * ~5 ms of plugin load time.)
 */
export const describeExpected = (ast: SchemaAST.AST): string => {
  const type = SchemaAST.toType(ast)
  switch (type._tag) {
    case "Boolean":
      return "true or false"
    case "String":
      return "a string"
    case "Number":
      return describeNumber(type.checks ?? [])
    case "Literal":
      return JSON.stringify(type.literal)
    case "Union":
      // `"auto" or an integer >= 0`: each member as it would be described alone.
      return orList(type.types.map(describeExpected))
    case "Arrays": {
      const item = type.rest[0]
      return type.elements.length === 0 && item !== undefined ? `a list of ${plural(describeExpected(item))}` : "a list"
    }
    case "Objects":
      return "an object"
    default:
      return "a valid value"
  }
}

// Built from the checks' own `expected` texts ("an integer", "a value greater than or equal to 1").
const describeNumber = (checks: ReadonlyArray<SchemaAST.Check<unknown>>): string => {
  const expected = checks.flatMap((check) => {
    const text = check.annotations?.expected
    return typeof text === "string" ? [text] : []
  })
  const bounds = expected.filter((text) => text.startsWith("a value ")).map((text) =>
    text.slice("a value ".length).replace("greater than or equal to", ">=").replace("less than or equal to", "<=")
      .replace("greater than", ">").replace("less than", "<")
  )
  const base = expected.includes("an integer") ? "an integer" : "a number"
  return bounds.length === 0 ? base : `${base} ${bounds.join(" and ")}`
}

const plural = (expected: string): string => {
  const noun = /^an? (\w+)$/.exec(expected)?.[1]
  return noun === undefined ? "valid values" : `${noun}s`
}

const orList = (items: ReadonlyArray<string>): string =>
  items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`

const describeValue = (value: unknown): string => {
  if (value === null) return "null"
  if (typeof value === "string") {
    const text = JSON.stringify(value)
    return `the string ${text.length > 32 ? `${text.slice(0, 30)}…"` : text}`
  }
  if (Array.isArray(value)) return value.length === 0 ? "an empty list" : "a list"
  if (typeof value === "object") return "an object"
  return String(value)
}

const suggest = (key: string, known: ReadonlyArray<string>): string | undefined => {
  const lower = key.toLowerCase()
  // Lengths more than 2 apart are more than 2 edits apart: a key of any length costs no more than a short one.
  const scored = known.filter((k) => Math.abs(k.length - key.length) <= 2)
    .map((k) => ({ k, d: distance(lower, k.toLowerCase()) }))
  const best = scored.reduce<{ k: string; d: number } | undefined>(
    (a, b) => (a === undefined || b.d < a.d ? b : a),
    undefined
  )
  return best !== undefined && best.d <= Math.min(2, Math.floor(key.length / 3)) ? best.k : undefined
}

const distance = (a: string, b: string): number => {
  let row = Array.from({ length: b.length + 1 }, (_, i) => i)
  for (let i = 1; i <= a.length; i++) {
    const next = [i]
    for (let j = 1; j <= b.length; j++) {
      next[j] = Math.min(next[j - 1]! + 1, row[j]! + 1, row[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1))
    }
    row = next
  }
  return row[b.length]!
}

const position = (text: string, offset: number): { line: number; column: number } => {
  const before = text.slice(0, offset).split(/\r\n|\r|\n/)
  return { line: before.length, column: (before[before.length - 1]?.length ?? 0) + 1 }
}

const words = (code: string): string => code.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase()

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Key by key at every depth; a later value replaces an earlier one, lists included (never concatenated). */
const merge = (base: PartialConfig, override: PartialConfig): PartialConfig => {
  const out: Record<string, unknown> = { ...base }
  for (const [key, value] of Object.entries(override)) {
    const previous = out[key]
    out[key] = isRecord(previous) && isRecord(value) ? merge(previous, value) : value
  }
  return out
}

/**
 * Merges validated partials (lowest priority first) over the defaults. Fails only if a partial did not come from
 * `parseConfig`/`validateConfig`: the message is the schema's own.
 */
export const resolve = (partials: ReadonlyArray<PartialConfig>): Result.Result<PluginConfig, string> =>
  Schema.decodeUnknownResult(PluginConfigFile)(partials.reduce(merge, {})).pipe(
    Result.map(({ $schema: _, ...config }) => config),
    Result.mapError((error) => error.message)
  )
