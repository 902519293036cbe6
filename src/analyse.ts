#!/usr/bin/env node
/**
 * `dcp-analyse`: the offline analyser. Replays an `opencode export` through the plugin and prints what it would
 * prune and save. This file is the edge: arguments, standard input, the terminal, the exit code. Everything else is
 * an Effect program (src/analysis/).
 */
import { NodeFileSystem, NodePath } from "@effect/platform-node"
import { Cause, Effect, Exit, Fiber, FileSystem, Layer, Schema } from "effect"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { formatJson, formatReport } from "./analysis/report.ts"
import { replay, type RunName } from "./analysis/replay.ts"
import { decodeExport } from "./analysis/session.ts"

const name = "dcp-analyse"

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
  --json                  print the report as JSON
  -h, --help              this help

Examples:
  opencode export ses_123 > session.json && ${name} session.json
  opencode export ses_123 | ${name} --json

Runs on Node.js 20 or newer.
`

/** Input the analyser cannot use: reported in one line, exit code 1. */
class BadInput extends Schema.TaggedError<BadInput>()("BadInput", { message: Schema.String }) {}

const exampleFile = fileURLToPath(new URL("../examples/session.json", import.meta.url))

const readFile = Effect.fn("analyse.readFile")(function*(file: string) {
  const fs = yield* FileSystem.FileSystem
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

const readStdin = async (): Promise<string> => {
  const chunks: Array<Buffer> = []
  for await (const chunk of process.stdin) chunks.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk)
  return Buffer.concat(chunks).toString("utf8")
}

/** A one-line progress counter on standard error, only when it is a terminal and the replay takes a while. */
const progress = () => {
  if (!process.stderr.isTTY) return { update: undefined, clear: () => {} }
  const start = Date.now()
  let shown = 0
  let visible = false
  return {
    update: (run: RunName, done: number, total: number) => {
      const now = Date.now()
      if (now - start < 500 || now - shown < 100) return
      shown = now
      visible = true
      const what = run === "withPlugin" ? "with the plugin" : run === "withOpenCodePrune" ? "with OpenCode's pruning" : "without the plugin"
      process.stderr.write(`\r\x1b[K${name}: replaying request ${done.toLocaleString("en-US")} of ${total.toLocaleString("en-US")} ${what}`)
    },
    clear: () => {
      if (visible) process.stderr.write("\r\x1b[K")
    }
  }
}

const fail = (message: string, code: number): void => {
  process.stderr.write(`${name}: ${message}\n`)
  process.exitCode = code
}

const main = async (argv: ReadonlyArray<string>) => {
  let parsed
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        example: { type: "boolean", default: false },
        config: { type: "string" },
        "context-window": { type: "string" },
        json: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false }
      }
    })
  } catch (error) {
    const code = (error as { code?: unknown }).code
    const option = /'([^']+)'/.exec(String((error as Error).message))?.[1]
    const problem = code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && option !== undefined
      ? `unknown option ${option}`
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
    return fail(`--context-window wants a positive whole number of tokens, not "${values["context-window"]}"`, 2)
  }
  const file = values.example ? exampleFile : positionals[0]
  let text: string | undefined
  if (file === undefined || file === "-") {
    if (process.stdin.isTTY) return fail(`no input: give an export file, or pipe one in (see ${name} --help)`, 2)
    text = await readStdin()
  }

  const bar = progress()
  const program = Effect.gen(function*() {
    const input = text ?? (yield* readFile(file!))
    const session = yield* decodeExport(input, file === undefined || file === "-" ? "standard input" : file)
    const analysis = yield* Effect.scoped(
      replay(session, { configFile: values.config, env: process.env, contextWindow: window, onProgress: bar.update })
    )
    return values.json ? formatJson(analysis) : formatReport(analysis)
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

await main(process.argv.slice(2))
