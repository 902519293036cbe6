#!/usr/bin/env node
/**
 * `dcp-analyse`: the offline analyser. Replays an `opencode export` through the plugin and prints what it would
 * prune and save. This file is the edge: arguments, standard input, the terminal, the exit code. Everything else is
 * an Effect program (src/analysis/).
 */
import { NodeFileSystem, NodePath } from "@effect/platform-node"
import { Cause, Effect, Exit, Fiber, FileSystem, Layer, Schema } from "effect"
import { constants } from "node:buffer"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { makeProgress } from "./analysis/progress.ts"
import { formatJson, formatReport } from "./analysis/report.ts"
import { replay } from "./analysis/replay.ts"
import { decodeExport } from "./analysis/session.ts"

const name = "dcp-analyse"

/**
 * An export is read into one string, and Node.js strings hold at most this many UTF-16 units: a UTF-8 file of up to
 * this many bytes always fits.
 */
const maxInputBytes = constants.MAX_STRING_LENGTH

const megabytes = (bytes: number): string => `${Math.round(bytes / 1024 / 1024).toLocaleString("en-US")} MB`

const usage = `Usage: ${name} [options] [file]

Replays an OpenCode session export through the context pruning plugin, request
by request, and prints what it would prune and the tokens and prompt-cache cost
with and without it. Nothing is sent anywhere and your OpenCode state is not
touched.

  file                    an export: opencode export <sessionID> > file.json
                          ("-" or no file: read standard input)
  --example               analyse the example session bundled with the package
  --config <file>         use this dcp.jsonc instead of your config files
  --context-window <n>    the model's context window in tokens (default 200000)
  --blind-edits           replay the model's edits of files whose content is
                          masked as recorded; by default it reads each such
                          file again first, and that is priced (use this for a
                          session recorded with the plugin on, which holds
                          what the model did then)
  --misses                list every line the model used that the plugin's
                          request did not show, with what it showed instead
  --json                  print the report as JSON (misses included)
  -h, --help              this help

Examples:
  opencode session list                       (session IDs)
  opencode export ses_123 > session.json
  ${name} session.json
  ${name} --json session.json > analysis.json

Write the export to a file first: piped straight in, OpenCode 1.18 exits before
a large export has gone through, and the analyser gets JSON cut short.
In a clone of the plugin, npm start runs the analyser on the example session;
add --silent before npm's -- to keep npm's banner out of --json output:
  npm start --silent -- --json

Runs on Node.js 20 or newer. Reads exports of up to ${megabytes(maxInputBytes)}.
`

const tooLarge = (what: string, size: string) =>
  `${what} is too large (${size}): ${name} reads exports of up to ${
    megabytes(maxInputBytes)
  }, the longest text Node.js can hold`

/** Input the analyser cannot use: reported in one line, exit code 1. */
class BadInput extends Schema.TaggedError<BadInput>()("BadInput", { message: Schema.String }) {}

const exampleFile = fileURLToPath(new URL("../examples/session.json", import.meta.url))

const readFile = Effect.fn("analyse.readFile")(function*(file: string) {
  const fs = yield* FileSystem.FileSystem
  const size = yield* fs.stat(file).pipe(Effect.map((info) => Number(info.size)), Effect.orElseSucceed(() => 0))
  if (size > maxInputBytes) return yield* new BadInput({ message: tooLarge(file, megabytes(size)) })
  return yield* fs.readFileString(file).pipe(
    Effect.mapError((error) =>
      new BadInput({
        message: `cannot read ${file}: ${
          error.reason._tag === "NotFound"
            ? "no such file"
            : error.reason._tag === "BadResource"
            ? "it is a directory, not a file"
            : error.reason._tag === "PermissionDenied"
            ? "permission denied"
            : error.message
        }`
      })
    )
  )
})

/** Standard input as text; `undefined` when it holds more than a string can (reading stops there). */
const readStdin = async (): Promise<string | undefined> => {
  const chunks: Array<Buffer> = []
  let bytes = 0
  for await (const chunk of process.stdin) {
    const buffer = typeof chunk === "string" ? Buffer.from(chunk) : chunk as Buffer
    bytes += buffer.length
    if (bytes > maxInputBytes) {
      process.stdin.destroy()
      return undefined
    }
    chunks.push(buffer)
  }
  return Buffer.concat(chunks).toString("utf8")
}

/**
 * A `--` argument that starts with a minus sign is taken by node's parser for an option ("ambiguous"); a negative
 * number given to `--context-window` is kept as its value, for the check that names what is valid.
 */
const keepNegativeValues = (argv: ReadonlyArray<string>): Array<string> => {
  const out: Array<string> = []
  for (let i = 0; i < argv.length; i++) {
    const next = argv[i + 1]
    if (argv[i] === "--context-window" && next !== undefined && /^-[\d.]/.test(next)) {
      out.push(`--context-window=${next}`)
      i++
    } else {
      out.push(argv[i]!)
    }
  }
  return out
}

/** The last words of the report: what to do next. */
const nextStep = (example: boolean): string => {
  // `npm start` runs in a clone, where the bin is `npx dcp-analyse` (the start script always analyses the example).
  const command = process.env.npm_lifecycle_event === "start" ? `npx ${name}` : name
  return example
    ? `Next: the same for one of your own sessions. Write its export to a file (the IDs are in opencode session list): opencode export <ID> > session.json, then run ${command} session.json.`
    : `Next: to try other settings on this session, write them to a dcp.jsonc and add --config with its path; in OpenCode, /dcp stats and /dcp context show the plugin at work.`
}

const fail = (message: string, code: number): void => {
  process.stderr.write(`${name}: ${message}\n`)
  process.exitCode = code
}

const parseOptions = (argv: ReadonlyArray<string>) =>
  parseArgs({
    args: keepNegativeValues(argv),
    allowPositionals: true,
    options: {
      example: { type: "boolean", default: false },
      config: { type: "string" },
      "context-window": { type: "string" },
      "blind-edits": { type: "boolean", default: false },
      json: { type: "boolean", default: false },
      misses: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false }
    }
  })

const main = async (argv: ReadonlyArray<string>) => {
  let parsed: ReturnType<typeof parseOptions>
  try {
    parsed = parseOptions(argv)
  } catch (error) {
    const code = (error as { code?: unknown }).code
    const option = /'([^' ]+)/.exec(String((error as Error).message))?.[1]
    const problem = code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && option !== undefined
      ? `unknown option ${option}`
      : code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE" && option !== undefined
      ? `${option} needs a value`
      : String((error as Error).message).split(/\.\s/)[0]
    return fail(`${problem} (see ${name} --help)`, 2)
  }
  const { positionals, values } = parsed
  if (values.help) {
    process.stdout.write(usage)
    return
  }
  if (positionals.length > 1 || (values.example && positionals.length > 0)) {
    return fail(`give one export file (see ${name} --help)`, 2)
  }
  const window = values["context-window"] === undefined ? 200_000 : Number(values["context-window"])
  if (!Number.isInteger(window) || window <= 0) {
    return fail(`--context-window must be a positive whole number of tokens, not "${values["context-window"]}"`, 2)
  }
  const file = values.example ? exampleFile : positionals[0]
  let text: string | undefined
  if (file === undefined || file === "-") {
    if (process.stdin.isTTY) return fail(`no input: give an export file, or pipe one in (see ${name} --help)`, 2)
    text = await readStdin()
    if (text === undefined) return fail(tooLarge("standard input", `more than ${megabytes(maxInputBytes)}`), 1)
  }
  if (values.json && process.env.npm_lifecycle_event === "start" && process.env.npm_config_loglevel !== "silent") {
    process.stderr.write(
      `${name}: npm printed its banner above the JSON; npm start --silent -- --json prints the JSON alone\n`
    )
  }

  const bar = makeProgress({
    name,
    terminal: process.stderr.isTTY === true,
    write: (text) => void process.stderr.write(text),
    now: () => Date.now()
  })
  const program = Effect.gen(function*() {
    const input = text ?? (yield* readFile(file!))
    const session = yield* decodeExport(input, file === undefined || file === "-" ? "standard input" : file)
    const analysis = yield* Effect.scoped(
      replay(session, {
        configFile: values.config,
        env: process.env,
        contextWindow: window,
        blindEdits: values["blind-edits"],
        onProgress: bar.update
      })
    )
    return values.json
      ? formatJson(analysis)
      : formatReport(analysis, {
        contextWindowGiven: values["context-window"] !== undefined,
        misses: values.misses,
        nextStep: nextStep(values.example)
      })
  }).pipe(Effect.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer)))

  // Ctrl-C interrupts the replay, so its temporary directory is still removed.
  const fiber = Effect.runFork(program)
  const interrupt = () => void Effect.runFork(Fiber.interrupt(fiber))
  process.once("SIGINT", interrupt)
  process.once("SIGTERM", interrupt)
  const exit = await Effect.runPromise(Fiber.await(fiber))
  process.off("SIGINT", interrupt)
  process.off("SIGTERM", interrupt)
  bar.clear()
  if (Exit.isSuccess(exit)) {
    process.stdout.write(exit.value)
    return
  }
  if (Cause.hasInterruptsOnly(exit.cause)) return fail("interrupted", 130)
  const error = Cause.squash(exit.cause)
  const message = typeof error === "object" && error !== null && "_tag" in error && "message" in error
    ? String(error.message)
    : `internal error: ${error instanceof Error ? error.message : String(error)}`
  return fail(message.split("\n")[0]!, 1)
}

// Output piped into a reader that stops early (`| head`) is not an error.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code !== "EPIPE") throw error
  process.exit(process.exitCode ?? 0)
})

await main(process.argv.slice(2))
