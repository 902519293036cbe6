/**
 * Text that looks like what a coding session holds: TypeScript source, test files, build and test logs, diffs,
 * prose. Lines vary (identifiers, literals, nesting), so the o200k tokenizer sees realistic token densities, and
 * everything is ASCII, as most code is (V8 stores it one byte per character).
 */
import type { Random } from "./random.ts"

// dprint-ignore: a word list, several to a line
const nouns = [
  "user", "account", "session", "token", "request", "response", "handler", "config", "cache", "order", "invoice",
  "payment", "item", "product", "customer", "event", "queue", "job", "worker", "schema", "record", "entry", "index",
  "route", "client", "server", "message", "buffer", "stream", "file", "path", "option", "setting", "metric",
  "report", "task", "result", "error", "state", "store", "model", "view", "query", "filter", "page", "limit",
  "offset", "batch", "retry", "timeout", "header", "body", "cursor", "snapshot", "ledger", "tenant", "policy"
]
// dprint-ignore: a word list, several to a line
const verbs = [
  "get", "set", "load", "save", "parse", "build", "create", "update", "delete", "find", "fetch", "handle",
  "validate", "format", "compute", "resolve", "register", "apply", "merge", "flush", "emit", "process",
  "normalize", "serialize", "read", "write", "sync", "check", "encode", "decode", "schedule", "cancel"
]
// dprint-ignore: a word list, several to a line
const adjectives = [
  "active", "pending", "default", "current", "next", "last", "raw", "parsed", "cached", "local", "remote", "max",
  "min", "total", "stale", "valid", "shared", "initial"
]
const types = [
  "string",
  "number",
  "boolean",
  "Date",
  "Buffer",
  "unknown",
  "Record<string, string>",
  "ReadonlyArray<string>"
]
// dprint-ignore: a word list, several to a line
const words = [
  "the", "a", "when", "if", "is", "not", "we", "this", "that", "before", "after", "only", "every", "so", "it",
  "should", "must", "can", "keep", "avoid", "retry", "fails", "returns", "value", "list", "call", "first", "once",
  "again", "still", "missing", "empty", "large", "small", "order", "because", "otherwise", "instead", "until",
  "handled", "cached", "stored", "sent", "changed", "expected", "current", "previous", "new", "old", "same"
]

const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1)

export class Vocabulary {
  private readonly random: Random
  constructor(random: Random) {
    this.random = random
  }

  noun(): string {
    return this.random.pick(nouns)
  }
  verb(): string {
    return this.random.pick(verbs)
  }
  camel(): string {
    const r = this.random
    return r.weighted<() => string>([
      [() => r.pick(nouns), 3],
      [() => r.pick(adjectives) + cap(r.pick(nouns)), 3],
      [() => r.pick(nouns) + cap(r.pick(nouns)), 2],
      [() => r.pick(verbs) + cap(r.pick(nouns)), 2]
    ])()
  }
  pascal(): string {
    return cap(this.random.pick(nouns)) + (this.random.chance(0.5) ? cap(this.random.pick(nouns)) : "")
  }
  kebab(): string {
    return this.random.chance(0.5) ? this.random.pick(nouns) : `${this.random.pick(nouns)}-${this.random.pick(nouns)}`
  }
  type(): string {
    return this.random.chance(0.4) ? this.pascal() : this.random.pick(types)
  }
  /** A sentence of `min`-`max` words. */
  sentence(min = 5, max = 14): string {
    const n = this.random.int(min, max)
    const out: Array<string> = []
    for (let i = 0; i < n; i++) {
      out.push(this.random.chance(0.25) ? this.camel() : this.random.pick(words))
    }
    return `${cap(out.join(" "))}.`
  }
  literal(): string {
    const r = this.random
    return r.weighted<() => string>([
      [() => String(r.int(0, 5000)), 3],
      [() => `"${this.kebab()}"`, 3],
      [() => r.pick(["true", "false", "null", "undefined", "[]", "{}"]), 2],
      [() => `${r.int(1, 60)} * 1000`, 1]
    ])()
  }
  expression(): string {
    const r = this.random
    return r.weighted<() => string>([
      [() => `${this.camel()}.${this.verb()}${cap(this.noun())}(${this.args()})`, 4],
      [() => `await ${this.verb()}${this.pascal()}(${this.args()})`, 3],
      [() => `${this.camel()} ?? ${this.literal()}`, 2],
      [() => `new ${this.pascal()}(${this.args()})`, 1],
      [() => `${this.camel()}.filter((${this.noun()}) => ${this.condition()})`, 1],
      [() => `{ ${this.camel()}, ${this.camel()}: ${this.literal()} }`, 1],
      [() => this.literal(), 2]
    ])()
  }
  args(): string {
    const n = this.random.int(0, 3)
    return Array.from({ length: n }, () => (this.random.chance(0.7) ? this.camel() : this.literal())).join(", ")
  }
  condition(): string {
    const r = this.random
    return r.weighted<() => string>([
      [() => `${this.camel()} === ${this.literal()}`, 2],
      [() => `!${this.camel()}`, 2],
      [() => `${this.camel()}.length > ${r.int(0, 20)}`, 1],
      [() => `${this.camel()} instanceof ${this.pascal()}Error`, 1],
      [() => `${this.camel()}.${this.noun()} !== undefined`, 2]
    ])()
  }
}

/** A TypeScript source file of about `lines` lines. */
export const sourceFile = (random: Random, lines: number, test: boolean): Array<string> => {
  const v = new Vocabulary(random)
  const out: Array<string> = []
  const imports = random.int(2, 9)
  for (let i = 0; i < imports; i++) {
    out.push(`import { ${v.pascal()}, ${v.camel()} } from "${random.chance(0.5) ? "./" : "../"}${v.kebab()}"`)
  }
  out.push("")
  while (out.length < lines) {
    if (test) testBlock(random, v, out)
    else random.weighted<() => void>([
        [() => functionBlock(random, v, out), 5],
        [() => interfaceBlock(random, v, out), 2],
        [() => classBlock(random, v, out), 2],
        [() => out.push(`export const ${v.camel().toUpperCase()} = ${v.literal()}`), 1]
      ])()
    out.push("")
  }
  return out.slice(0, lines)
}

const statement = (random: Random, v: Vocabulary, out: Array<string>, indent: string, depth: number) => {
  random.weighted<() => void>([
    [() => out.push(`${indent}const ${v.camel()} = ${v.expression()}`), 6],
    [() => out.push(`${indent}let ${v.camel()}: ${v.type()} = ${v.literal()}`), 2],
    [() => out.push(`${indent}// ${v.sentence()}`), 2],
    [() => out.push(`${indent}await this.${v.camel()}.${v.verb()}(${v.args()})`), 2],
    [() => out.push(`${indent}logger.debug("${v.sentence(3, 7)}", { ${v.camel()}, ${v.camel()} })`), 1],
    [() => out.push(`${indent}${v.camel()}.${v.noun()} = ${v.expression()}`), 2],
    [() => {
      if (depth > 2) return out.push(`${indent}return ${v.expression()}`)
      out.push(`${indent}if (${v.condition()}) {`)
      body(random, v, out, `${indent}  `, depth + 1, random.int(1, 4))
      if (random.chance(0.3)) {
        out.push(`${indent}} else {`)
        body(random, v, out, `${indent}  `, depth + 1, random.int(1, 3))
      }
      out.push(`${indent}}`)
    }, 3],
    [() => {
      if (depth > 2) return out.push(`${indent}${v.camel()}.push(${v.camel()})`)
      const item = v.noun()
      out.push(`${indent}for (const ${item} of ${v.camel()}) {`)
      body(random, v, out, `${indent}  `, depth + 1, random.int(1, 4))
      out.push(`${indent}}`)
    }, 2],
    [() => out.push(`${indent}throw new ${v.pascal()}Error(\`${v.sentence(3, 8)} \${${v.camel()}}\`)`), 1]
  ])()
}

const body = (random: Random, v: Vocabulary, out: Array<string>, indent: string, depth: number, n: number) => {
  for (let i = 0; i < n; i++) statement(random, v, out, indent, depth)
}

const functionBlock = (random: Random, v: Vocabulary, out: Array<string>) => {
  if (random.chance(0.5)) out.push(`/** ${v.sentence()} */`)
  const params = Array.from({ length: random.int(0, 3) }, () => `${v.camel()}: ${v.type()}`).join(", ")
  out.push(
    `export ${random.chance(0.6) ? "async " : ""}function ${v.verb()}${v.pascal()}(${params}): Promise<${v.type()}> {`
  )
  body(random, v, out, "  ", 0, random.int(3, 12))
  out.push(`  return ${v.expression()}`)
  out.push("}")
}

const interfaceBlock = (random: Random, v: Vocabulary, out: Array<string>) => {
  out.push(`export interface ${v.pascal()} {`)
  const n = random.int(2, 9)
  for (let i = 0; i < n; i++) {
    if (random.chance(0.3)) out.push(`  /** ${v.sentence(4, 10)} */`)
    out.push(`  readonly ${v.camel()}${random.chance(0.3) ? "?" : ""}: ${v.type()}`)
  }
  out.push("}")
}

const classBlock = (random: Random, v: Vocabulary, out: Array<string>) => {
  out.push(`export class ${v.pascal()}Service {`)
  out.push(
    `  constructor(private readonly ${v.camel()}: ${v.pascal()}, private readonly ${v.camel()}: ${v.pascal()}) {}`
  )
  const methods = random.int(1, 4)
  for (let m = 0; m < methods; m++) {
    out.push("")
    out.push(`  async ${v.verb()}${v.pascal()}(${v.camel()}: ${v.type()}): Promise<${v.type()}> {`)
    body(random, v, out, "    ", 1, random.int(2, 7))
    out.push("  }")
  }
  out.push("}")
}

const testBlock = (random: Random, v: Vocabulary, out: Array<string>) => {
  out.push(`describe("${v.verb()}${v.pascal()}", () => {`)
  const cases = random.int(1, 5)
  for (let c = 0; c < cases; c++) {
    out.push(`  it("${v.sentence(4, 9).slice(0, -1).toLowerCase()}", async () => {`)
    body(random, v, out, "    ", 2, random.int(1, 5))
    const checks = random.int(1, 3)
    for (let i = 0; i < checks; i++) out.push(`    expect(${v.camel()}).toEqual(${v.literal()})`)
    out.push("  })")
  }
  out.push("})")
}

/** An edited version of `lines`: some identifiers renamed, a line or two added or dropped. */
export const edited = (random: Random, lines: ReadonlyArray<string>): Array<string> => {
  const v = new Vocabulary(random)
  const out: Array<string> = []
  for (const line of lines) {
    if (random.chance(0.08)) continue
    out.push(random.chance(0.4) ? line.replace(/\b[a-z][A-Za-z]{3,}\b/, v.camel()) : line)
    if (random.chance(0.15)) {
      const indent = /^\s*/.exec(line)![0]
      out.push(`${indent}const ${v.camel()} = ${v.expression()}`)
    }
  }
  if (out.length === 0) out.push(`const ${v.camel()} = ${v.expression()}`)
  return out
}

/** `npm test` style output: one line per file, failures with a stack and a diff, a summary. */
export const testLog = (random: Random, files: ReadonlyArray<string>, failing: boolean, lines: number): string => {
  const v = new Vocabulary(random)
  const out: Array<string> = ["", `> acme-api@2.4.0 test`, `> vitest run`, "", ` RUN  v3.2.4 /home/dev/acme-api`, ""]
  let passed = 0
  let failed = 0
  while (out.length < lines - 12) {
    const file = random.pick(files)
    const tests = random.int(2, 40)
    const fails = failing && random.chance(0.15) ? random.int(1, 3) : 0
    passed += tests - fails
    failed += fails
    out.push(
      ` ${fails > 0 ? "FAIL" : "PASS"}  ${file} (${tests} tests${fails > 0 ? ` | ${fails} failed` : ""}) ${
        random.int(3, 900)
      }ms`
    )
    if (random.chance(0.3)) {
      for (let i = 0; i < random.int(1, 6); i++) out.push(`   stdout | ${file} > ${v.sentence(3, 6)}`)
    }
    for (let f = 0; f < fails; f++) {
      out.push(`   x ${v.verb()}${v.pascal()} > ${v.sentence(4, 8).toLowerCase()}`)
      out.push(`     AssertionError: expected ${v.literal()} to deeply equal ${v.literal()}`)
      out.push("     - Expected")
      out.push("     + Received")
      for (let i = 0; i < random.int(2, 8); i++)
        out.push(`     ${random.chance(0.5) ? "-" : "+"}   "${v.camel()}": ${v.literal()},`)
      for (let i = 0; i < random.int(3, 7); i++) {
        out.push(`      at ${v.verb()}${v.pascal()} (${random.pick(files)}:${random.int(1, 400)}:${random.int(1, 60)})`)
      }
    }
  }
  out.push("")
  out.push(
    ` Test Files  ${failed > 0 ? `${Math.max(1, Math.round(failed / 2))} failed | ` : ""}${random.int(20, 90)} passed`
  )
  out.push(`      Tests  ${failed > 0 ? `${failed} failed | ` : ""}${passed} passed (${passed + failed})`)
  out.push(`   Start at  ${random.int(10, 23)}:${random.int(10, 59)}:${random.int(10, 59)}`)
  out.push(
    `   Duration  ${(random.next() * 40 + 2).toFixed(2)}s (transform ${random.int(200, 3000)}ms, setup 0ms, collect ${
      random.int(500, 9000)
    }ms, tests ${random.int(500, 30000)}ms)`
  )
  if (failed > 0) out.push("", "npm error Lifecycle script `test` failed with error:", "npm error code 1")
  return out.join("\n")
}

/** `tsc` output: nothing when it passes, one line per error otherwise. */
export const buildLog = (random: Random, files: ReadonlyArray<string>, errors: number): string => {
  const v = new Vocabulary(random)
  const out: Array<string> = [
    "",
    "> acme-api@2.4.0 build",
    "> tsc -p tsconfig.build.json && node scripts/bundle.mjs",
    ""
  ]
  for (let i = 0; i < errors; i++) {
    const code = random.pick([2322, 2339, 2345, 7006, 2554, 18048, 2769])
    out.push(
      // biome-ignore lint/style/useTemplate: the list of messages reads better outside the template
      `${random.pick(files)}(${random.int(1, 400)},${random.int(1, 60)}): error TS${code}: ` + random.pick([
        `Type '${v.type()}' is not assignable to type '${v.type()}'.`,
        `Property '${v.camel()}' does not exist on type '${v.pascal()}'.`,
        `Argument of type '${v.type()}' is not assignable to parameter of type '${v.type()}'.`,
        `Parameter '${v.camel()}' implicitly has an 'any' type.`,
        `Expected ${random.int(0, 3)} arguments, but got ${random.int(0, 4)}.`,
        `'${v.camel()}' is possibly 'undefined'.`
      ])
    )
  }
  if (errors > 0) out.push("", `Found ${errors} errors in ${Math.max(1, Math.ceil(errors / 3))} files.`)
  else out.push(`dist/index.js  ${random.int(80, 900)}.${random.int(0, 9)}kb`, "", `Done in ${random.int(200, 4000)}ms`)
  return out.join("\n")
}

/** `git diff` of one file. */
export const diffLog = (
  random: Random,
  file: string,
  before: ReadonlyArray<string>,
  after: ReadonlyArray<string>
): string => {
  const out = [
    `diff --git a/${file} b/${file}`,
    `index ${random.id(7).toLowerCase()}..${random.id(7).toLowerCase()} 100644`,
    `--- a/${file}`,
    `+++ b/${file}`,
    `@@ -${random.int(1, 200)},${before.length} +${random.int(1, 200)},${after.length} @@`
  ]
  for (const line of before) out.push(`-${line}`)
  for (const line of after) out.push(`+${line}`)
  return out.join("\n")
}

/** A markdown page, as `webfetch` returns. */
export const markdownPage = (random: Random, lines: number): string => {
  const v = new Vocabulary(random)
  const out: Array<string> = [`# ${v.pascal()} ${v.noun()} guide`, ""]
  while (out.length < lines) {
    out.push(`## ${cap(v.verb())} the ${v.noun()}`, "")
    for (let i = 0; i < random.int(1, 4); i++) out.push(`${v.sentence(8, 20)} ${v.sentence(6, 18)}`)
    out.push("")
    if (random.chance(0.5)) {
      out.push("```ts")
      for (let i = 0; i < random.int(2, 8); i++) out.push(`const ${v.camel()} = ${v.expression()}`)
      out.push("```", "")
    }
  }
  return out.join("\n")
}
