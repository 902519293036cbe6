/**
 * `npm run mutate`: mutation testing of the engine's core files. Each mutant is one small change to one file (an
 * operator swapped, a constant moved by one, a condition negated, a statement removed), run against the test files
 * that cover that file and nothing else; a mutant that none of them fails has survived: the tests would not notice
 * that mistake. The score is the share killed. Not part of `npm test`: it runs the covering files once per mutant.
 *
 *   npm run mutate                        every target below
 *   npm run mutate -- src/engine/fold.ts  one target (or several)
 *   npm run mutate -- --list              the mutants, without running them
 *   npm run mutate -- --json out.json     also writes every mutant's result
 *
 * The mutated source never touches the disk: a Vite plugin hands vitest the mutated text of the target file, and the
 * file is invalidated between mutants, so one vitest instance runs them all. A mutant that hangs (an endless loop)
 * cannot be interrupted inside its worker: a parent process runs the vitest instance as a child, and kills and
 * restarts it when one mutant takes far longer than the unmutated run (counted as killed: the tests did notice).
 */
import { type ChildProcess, spawn } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { createInterface } from "node:readline"
import { parseSync } from "oxc-parser"

const repo = resolve(import.meta.dirname, "..")

/** The engine's core files and the test files that cover each: a mutant of a file runs against these only. */
const targets: Record<string, ReadonlyArray<string>> = {
  "src/engine/fold.ts": ["test/pipeline/fold.test.ts"],
  "src/engine/figures.ts": ["test/engine/figures.test.ts"],
  "src/engine/apply.ts": ["test/engine/apply.test.ts", "test/cache/append-only.test.ts"],
  "src/engine/placeholders.ts": ["test/engine/placeholders.test.ts"],
  "src/engine/schedule.ts": ["test/economics/schedule.test.ts", "test/cache/append-only.test.ts"],
  "src/engine/strategies/deduplication.ts": ["test/engine/deduplication.test.ts"],
  "src/engine/strategies/supersedeWrites.ts": ["test/engine/supersedeWrites.test.ts"],
  "src/engine/strategies/purgeErrors.ts": ["test/engine/purgeErrors.test.ts"],
  "src/engine/strategies/staleOutputs.ts": ["test/economics/staleOutputs.test.ts"]
}

interface Mutant {
  readonly file: string
  readonly start: number
  readonly end: number
  readonly replacement: string
  readonly line: number
  readonly description: string
}

type Status = "killed" | "survived" | "timeout"

// ---- Finding mutants ----------------------------------------------------------------------------------------------

const binarySwaps: Record<string, ReadonlyArray<string>> = {
  "<": ["<="],
  "<=": ["<"],
  ">": [">="],
  ">=": [">"],
  "===": ["!=="],
  "!==": ["==="],
  "==": ["!="],
  "!=": ["=="],
  "+": ["-"],
  "-": ["+"],
  "*": ["/"],
  "/": ["*"],
  "%": ["*"]
}

const logicalSwaps: Record<string, string> = { "&&": "||", "||": "&&", "??": "&&" }

/** An ESTree node as oxc-parser gives it: offsets into the source, and its fields by the node's type. */
interface Node {
  readonly type: string
  readonly start: number
  readonly end: number
  // biome-ignore lint/suspicious/noExplicitAny: the fields differ by node type; each case reads those of its type.
  readonly [key: string]: any
}

const isNode = (value: unknown): value is Node =>
  typeof value === "object" && value !== null && typeof (value as Node).type === "string"

/** Every mutant of `code`, in source order. Type annotations, imports and exports' names are left alone. */
export const mutantsOf = (file: string, code: string): Array<Mutant> => {
  const { program, errors } = parseSync(file, code, { lang: "ts" })
  if (errors.length > 0) throw new Error(`${file}: ${errors[0]!.message}`)
  const lineStarts = [0]
  for (let i = 0; i < code.length; i++) if (code[i] === "\n") lineStarts.push(i + 1)
  const lineOf = (offset: number) => {
    let low = 0
    let high = lineStarts.length
    while (high - low > 1) {
      const middle = (low + high) >> 1
      if (lineStarts[middle]! <= offset) low = middle
      else high = middle
    }
    return low + 1
  }
  const mutants: Array<Mutant> = []
  const add = (start: number, end: number, replacement: string, description: string) =>
    mutants.push({ file, start, end, replacement, line: lineOf(start), description })

  /** The operator between two operands: found in the text between them (only brackets, spaces, comments besides). */
  const operatorAt = (node: Node, operator: string): number => {
    const from = node.left.end
    const at = code.slice(from, node.right.start).indexOf(operator)
    return at < 0 ? -1 : from + at
  }

  const visit = (node: Node): void => {
    if (node.type.startsWith("TS") && node.type !== "TSAsExpression" && node.type !== "TSNonNullExpression") return
    if (node.type === "ImportDeclaration" || node.type === "ExportAllDeclaration") return
    switch (node.type) {
      case "BinaryExpression": {
        for (const swapped of binarySwaps[node.operator] ?? []) {
          const at = operatorAt(node, node.operator)
          if (at >= 0) add(at, at + node.operator.length, swapped, `${node.operator} -> ${swapped}`)
        }
        break
      }
      case "LogicalExpression": {
        const swapped = logicalSwaps[node.operator]
        const at = operatorAt(node, node.operator)
        if (swapped !== undefined && at >= 0)
          add(at, at + node.operator.length, swapped, `${node.operator} -> ${swapped}`)
        break
      }
      case "UnaryExpression": {
        if (node.operator === "!") add(node.start, node.argument.start, "", "! removed")
        break
      }
      case "UpdateExpression": {
        const swapped = node.operator === "++" ? "--" : "++"
        const at = node.prefix ? node.start : node.argument.end
        add(at, at + 2, swapped, `${node.operator} -> ${swapped}`)
        break
      }
      case "Literal": {
        if (typeof node.value === "boolean")
          add(node.start, node.end, String(!node.value), `${node.value} -> ${!node.value}`)
        if (typeof node.value === "number" && Number.isInteger(node.value)) {
          add(node.start, node.end, String(node.value + 1), `${node.raw} -> ${node.value + 1}`)
        }
        break
      }
      case "IfStatement": {
        const test = node.test as Node
        add(test.start, test.end, `!(${code.slice(test.start, test.end)})`, "if condition negated")
        break
      }
      case "ConditionalExpression": {
        const test = node.test as Node
        add(test.start, test.end, `!(${code.slice(test.start, test.end)})`, "condition negated")
        break
      }
      case "ExpressionStatement": {
        const expression = node.expression as Node
        if (expression.type === "CallExpression" || expression.type === "AssignmentExpression") {
          add(node.start, node.end, ";", "statement removed")
        }
        break
      }
      case "MemberExpression": {
        const property = node.property as Node
        const swaps: Record<string, string> = { min: "max", max: "min", some: "every", every: "some" }
        if (!node.computed && property.type === "Identifier" && swaps[property.name] !== undefined) {
          add(property.start, property.end, swaps[property.name]!, `.${property.name} -> .${swaps[property.name]}`)
        }
        break
      }
    }
    for (const [key, value] of Object.entries(node)) {
      if (key === "parent" || key === "typeAnnotation" || key === "returnType" || key === "typeArguments") continue
      if (key === "typeParameters") continue
      if (Array.isArray(value)) {
        for (const child of value) if (isNode(child)) visit(child)
      } else if (isNode(value)) visit(value)
    }
  }
  visit(program as unknown as Node)
  return mutants.sort((a, b) => a.start - b.start || a.description.localeCompare(b.description))
}

const apply = (code: string, mutant: Mutant) =>
  code.slice(0, mutant.start) + mutant.replacement + code.slice(mutant.end)

// ---- The child: one vitest instance, mutants in turn ---------------------------------------------------------------

/**
 * Runs mutants `from` on of `file`'s list against its covering tests, printing a line of JSON per result; the first
 * run is the file unmutated, which must pass.
 */
const child = async (file: string, from: number) => {
  const { createVitest } = await import("vitest/node")
  const path = join(repo, file)
  const code = readFileSync(path, "utf8")
  const mutants = mutantsOf(file, code)
  let active: Mutant | undefined
  const vitest = await createVitest(
    "test",
    {
      config: false,
      root: repo,
      watch: false,
      include: [...targets[file]!],
      globalSetup: ["test/support/build.ts"],
      sequence: { shuffle: false },
      testTimeout: 120_000,
      hookTimeout: 120_000,
      maxWorkers: 1,
      isolate: true,
      fileParallelism: false,
      bail: 1,
      // Transformed modules are cached on disk by default, and a cached module is not transformed again.
      fsModuleCache: false,
      reporters: [{}]
    },
    {
      plugins: [{
        name: "mutant",
        enforce: "pre",
        transform(source: string, id: string) {
          if (active === undefined || id.split("?")[0] !== path) return undefined
          return apply(source, active)
        }
      }]
    }
  )
  const specifications = await vitest.globTestSpecifications()
  const run = async (): Promise<boolean> => {
    vitest.invalidateFile(path)
    const result = await vitest.runTestSpecifications(specifications, true)
    const failed = result.testModules.some((module) => !module.ok()) || result.unhandledErrors.length > 0
    return !failed
  }
  if (from === 0) {
    const started = Date.now()
    if (!(await run())) {
      process.stdout.write(`${JSON.stringify({ baseline: "failed" })}\n`)
      process.exit(1)
    }
    process.stdout.write(`${JSON.stringify({ baseline: Date.now() - started })}\n`)
  }
  for (let i = Math.max(0, from - 1); i < mutants.length; i++) {
    active = mutants[i]!
    process.stdout.write(`${JSON.stringify({ start: i })}\n`)
    const passed = await run()
    process.stdout.write(`${JSON.stringify({ mutant: i, status: passed ? "survived" : "killed" })}\n`)
  }
  active = undefined
  await vitest.close()
  process.exit(0)
}

// ---- The parent: children per file, the time limit, the report -----------------------------------------------------

interface Result {
  readonly mutant: Mutant
  readonly status: Status
}

const runFile = (file: string, mutants: ReadonlyArray<Mutant>): Promise<Array<Result>> =>
  new Promise((done, fail) => {
    const results: Array<Result> = []
    let limit = 300_000
    const startChild = (from: number) => {
      const process_: ChildProcess = spawn(
        process.execPath,
        [import.meta.filename, "--child", file, String(from)],
        { cwd: repo, detached: true, stdio: ["ignore", "pipe", "inherit"] }
      )
      let current: number | undefined
      let timer: NodeJS.Timeout | undefined
      const arm = () => {
        clearTimeout(timer)
        timer = setTimeout(() => {
          // A mutant that made the tests hang: the tests did not pass, so it counts as killed.
          if (current !== undefined) {
            results.push({ mutant: mutants[current]!, status: "timeout" })
            report(file, current, "timeout")
          }
          if (current === undefined) {
            fail(new Error(`${file}: the covering tests did not finish without a mutant`))
            return
          }
          const next = current + 2
          current = undefined
          try {
            process.kill(-process_.pid!, "SIGKILL")
          } catch {
            // already gone
          }
          if (next - 1 >= mutants.length) done(results)
          else startChild(next)
        }, limit)
      }
      arm()
      createInterface({ input: process_.stdout! }).on("line", (line) => {
        if (!line.startsWith("{")) return
        const message = JSON.parse(line)
        if (message.baseline === "failed") fail(new Error(`${file}: the covering tests fail without a mutant`))
        else if (typeof message.baseline === "number") {
          // Generous: a slow machine, or a busy one, must not turn a mutant the tests let pass into a timeout.
          limit = Math.max(60_000, message.baseline * 5)
          console.log(`${file}: ${mutants.length} mutants; unmutated run ${(message.baseline / 1000).toFixed(1)} s`)
          arm()
        } else if (typeof message.start === "number") {
          current = message.start
          arm()
        } else if (typeof message.mutant === "number") {
          results.push({ mutant: mutants[message.mutant]!, status: message.status })
          report(file, message.mutant, message.status)
          current = undefined
          arm()
        }
      })
      process_.on("exit", (code, signal) => {
        if (signal === "SIGKILL") return
        clearTimeout(timer)
        if (code === 0) done(results)
        else fail(new Error(`${file}: the mutation run stopped (exit ${code})`))
      })
    }
    // `from` counts the unmutated run as 0, mutant i as i + 1.
    startChild(0)
  })

const report = (file: string, index: number, status: Status) => {
  if (status === "survived" || process.env.MUTATE_VERBOSE === "1") {
    const mutant = mutantsOf(file, readFileSync(join(repo, file), "utf8"))[index]!
    console.log(`  ${status}: ${file}:${mutant.line} ${mutant.description}`)
  }
}

const main = async () => {
  const args = process.argv.slice(2)
  if (args[0] === "--child") return child(args[1]!, Number(args[2]))
  const jsonAt = args.indexOf("--json")
  const jsonFile = jsonAt >= 0 ? args[jsonAt + 1] : undefined
  const files = args.filter((arg, i) => !arg.startsWith("--") && (jsonAt < 0 || i !== jsonAt + 1))
  for (const file of files) if (targets[file] === undefined) throw new Error(`not a target: ${file}`)
  const chosen = files.length > 0 ? files : Object.keys(targets)
  if (args.includes("--list")) {
    for (const file of chosen) {
      for (const mutant of mutantsOf(file, readFileSync(join(repo, file), "utf8"))) {
        console.log(`${file}:${mutant.line} ${mutant.description}`)
      }
    }
    return
  }
  const all: Array<Result> = []
  const rows: Array<string> = []
  for (const file of chosen) {
    const mutants = mutantsOf(file, readFileSync(join(repo, file), "utf8"))
    const results = await runFile(file, mutants)
    all.push(...results)
    const killed = results.filter((result) => result.status !== "survived").length
    rows.push(`| \`${file}\` | ${results.length} | ${killed} | ${percent(killed, results.length)} |`)
  }
  const killed = all.filter((result) => result.status !== "survived").length
  console.log("\n| file | mutants | killed | score |\n| --- | --- | --- | --- |")
  for (const row of rows) console.log(row)
  console.log(`| all | ${all.length} | ${killed} | ${percent(killed, all.length)} |`)
  if (jsonFile !== undefined) {
    writeFileSync(
      jsonFile,
      JSON.stringify(
        all.map(({ mutant, status }) => ({
          file: mutant.file,
          line: mutant.line,
          mutation: mutant.description,
          status
        })),
        null,
        1
      )
    )
  }
}

const percent = (part: number, whole: number) => whole === 0 ? "-" : `${(100 * part / whole).toFixed(1)}%`

await main()
