import { Cause, Context, Effect, FileSystem, Layer, Option, Path, Ref, Result } from "effect"
import { type Loaded, parseConfig, type Problem, readConfigFile, resolve, validateConfig } from "../config/load.ts"
import { defaultConfig, type PluginConfig } from "../config/schema.ts"
import { renderTemplate } from "../config/template.ts"
import { Paths } from "./Paths.ts"

export type { PluginConfig }

/** Everything wrong with one config file. */
export interface FileReport {
  readonly file: string
  readonly problems: ReadonlyArray<Problem>
  /** The whole file was ignored (unreadable, syntax error, empty, not an object). */
  readonly ignored: boolean
}

interface Source {
  readonly file: string
  readonly loaded: Loaded
}

/**
 * The resolved plugin configuration: defaults, then the global file, then `$OPENCODE_CONFIG_DIR`, then the
 * project's `.opencode/`, later wins key by key. Building the layer never fails: anything wrong degrades to
 * defaults plus a report, because ManagedRuntime caches a failed build for good.
 */
export class Config extends Context.Service<Config, {
  /** Resolved once, when the layer is built. */
  readonly current: PluginConfig
  /** Files that contributed, in merge order. */
  readonly files: ReadonlyArray<string>
  /** One report per file that had problems; returned the first time only, [] afterwards (one toast each, once). */
  readonly takeReports: Effect.Effect<ReadonlyArray<FileReport>>
}>()("opencode-context-pruner/Config") {
  static readonly layer = Layer.effect(
    Config,
    Effect.gen(function*() {
      const path = yield* Path.Path
      const paths = yield* Paths
      yield* writeDefaultGlobal(paths.globalConfigDir)
      const dirs = [
        paths.globalConfigDir,
        ...Option.toArray(paths.envConfigDir),
        path.join(paths.projectDir, ".opencode")
      ]
      const unique = dirs.filter((dir, index) => dirs.findIndex((d) => path.resolve(d) === path.resolve(dir)) === index)
      const sources = yield* Effect.forEach(unique, readSource)
      return yield* make(sources.flatMap(Option.toArray))
    }).pipe(
      Effect.catchCause((cause) => {
        const found = Cause.pretty(cause).split("\n")[0] ?? "an unknown error"
        return Effect.logError("dcp: config not loaded, using defaults", cause).pipe(
          Effect.andThen(
            make([{ file: "(config)", loaded: whole("a loadable config", found, `Config not loaded (${found}).`) }])
          )
        )
      })
    )
  )

  /** The same validation applied to an in-memory value, for tests of other services. No files are touched. */
  static readonly layerFrom = (input: unknown) =>
    Layer.effect(Config, make([{ file: "(inline config)", loaded: validateConfig(input) }]))
}

const make = Effect.fnUntraced(function*(sources: ReadonlyArray<Source>) {
  const merged = resolve(sources.map((source) => source.loaded.partial))
  const reports: Array<FileReport> = sources
    .filter((source) => source.loaded.problems.length > 0)
    .map((source) => ({ file: source.file, problems: source.loaded.problems, ignored: source.loaded.ignored }))
  if (Result.isFailure(merged)) {
    // Unreachable while every partial comes from the loader; kept so a loader bug cannot fail the layer.
    const problem = whole("a valid merged config", merged.failure, `Config files not merged: ${merged.failure}`)
    reports.push({ file: "(merged config)", problems: problem.problems, ignored: true })
  }
  const pending = yield* Ref.make<ReadonlyArray<FileReport>>(reports)
  return Config.of({
    current: Result.getOrElse(merged, () => defaultConfig),
    files: sources.filter((source) => !source.loaded.ignored).map((source) => source.file),
    takeReports: Ref.getAndSet(pending, [])
  })
})

/** The names of a config file, in the order one directory is searched. */
export const configFileNames = ["dcp.jsonc", "dcp.json"] as const

/** The first candidate file that exists in `dir`; a file that exists but cannot be read is a problem, not a failure. */
const readSource = Effect.fn("Config.readSource")(function*(dir: string) {
  const path = yield* Path.Path
  for (const name of configFileNames) {
    const file = path.join(dir, name)
    const text = yield* readConfigFile(file)
    if (Option.isNone(text)) continue
    if (text.value._tag === "Unreadable") {
      const { found } = text.value
      return Option.some<Source>({
        file,
        loaded: whole("a readable file", found, `Could not read the file: ${found}.`)
      })
    }
    const content = text.value.text
    // parseConfig is meant to take any text; should some input still make it throw, the toast names the file.
    const loaded = yield* Effect.try(() => parseConfig(content)).pipe(
      Effect.catch((error) => {
        const found = error.cause instanceof Error ? error.cause.message : String(error.cause)
        return Effect.logError(`dcp: config file ${file} not loaded`, error.cause).pipe(
          Effect.as(whole("a loadable file", found, `Could not load the file: ${found}.`))
        )
      })
    )
    return Option.some<Source>({ file, loaded })
  }
  return Option.none<Source>()
})

/** First run: no global config yet, so write the commented defaults. Never overwrites, never fails. */
const writeDefaultGlobal = Effect.fn("Config.writeDefaultGlobal")(function*(dir: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  for (const name of configFileNames) {
    // When existence cannot be checked, assume the file is there rather than risk replacing it.
    if (yield* fs.exists(path.join(dir, name)).pipe(Effect.orElseSucceed(() => true))) return
  }
  const file = path.join(dir, configFileNames[0])
  yield* fs.makeDirectory(dir, { recursive: true }).pipe(
    // "wx": another OpenCode process may have written it since the check above.
    Effect.andThen(fs.writeFileString(file, renderTemplate(), { flag: "wx" })),
    Effect.catch((error) =>
      error.reason._tag === "AlreadyExists"
        ? Effect.void
        : Effect.logWarning(`dcp: could not write the default config ${file}: ${error.message}`)
    )
  )
})

const whole = (expected: string, found: string, message: string): Loaded => ({
  partial: {},
  problems: [{ path: "", expected, found, message }],
  ignored: true
})

const maxProblemLines = 5

/** The toast for one report: the file, one line per problem (at most five), and what happened instead. */
export const formatReport = (report: FileReport): { readonly title: string; readonly message: string } => {
  const count = report.problems.length
  const shown = count <= maxProblemLines ? report.problems : report.problems.slice(0, maxProblemLines - 1)
  const lines = [
    report.file,
    ...shown.map((problem) => `• ${problem.message}`),
    ...(shown.length < count ? [`+${count - shown.length} more`] : []),
    report.ignored
      ? "The whole file was ignored; defaults and the other config files apply."
      : `${
        count === 1 ? "That key uses its" : "Those keys use their"
      } default (or an earlier file's value); the rest of the file applies.`
  ]
  return {
    title: report.ignored ? "DCP: config file ignored" : `DCP: ${count} config problem${count === 1 ? "" : "s"}`,
    message: lines.join("\n")
  }
}

/** The same report as lines of a note, for a command's output: toasts do not reach every client. */
export const reportNote = (report: FileReport): string => {
  const [file, ...lines] = formatReport(report).message.split("\n")
  const count = report.problems.length
  const head = report.ignored
    ? `Config file ignored: ${file}`
    : `${count} config problem${count === 1 ? "" : "s"} in ${file}:`
  return [head, ...lines.map((line) => `  ${line}`)].join("\n")
}
