import { Cause, Context, Effect, FileSystem, Layer, Option, Path, Ref, Result, Semaphore } from "effect"
import { type Loaded, parseConfig, type Problem, readConfigFile, resolve } from "../config/load.ts"
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
  /** Set when the file changed while OpenCode ran and was read again (`Config.refresh`). */
  readonly reload?: Reload | undefined
}

interface Reload {
  /**
   * "read": its settings apply from now on; "removed": the file is gone, so are its settings; "kept": the new
   * content is unusable, so the file's previous settings stay in effect.
   */
  readonly change: "read" | "removed" | "kept"
  /** Keys whose new value waits for OpenCode's next start (see `restartKeys`). */
  readonly restartKeys: ReadonlyArray<string>
}

interface Source {
  readonly file: string
  readonly loaded: Loaded
}

/**
 * Settings OpenCode takes from the plugin once, when it loads it: the master switch, the tools and the `/dcp` command
 * it registers, and the debug log sink. A change to one of these in a config file applies at OpenCode's next start;
 * every other setting is read anew for each request.
 */
const restartKeys = [
  "enabled",
  "debug",
  "commands.enabled",
  "tools.discard.enabled",
  "tools.extract.enabled",
  "tools.recall.enabled"
] as const

/**
 * The resolved plugin configuration: defaults, then the global file, then `$OPENCODE_CONFIG_DIR`, then the
 * project's `.opencode/`, later wins key by key. Building the layer never fails: anything wrong degrades to
 * defaults plus a report, because ManagedRuntime caches a failed build for good.
 */
export class Config extends Context.Service<Config, {
  /**
   * The configuration in effect: resolved when the layer is built, and again by `refresh` after a file changed. Read
   * it where it is used (not once at a service's start), so that a change applies from the next request on.
   */
  readonly current: PluginConfig
  /** Files that contributed, in merge order. */
  readonly files: ReadonlyArray<string>
  /** The problems of the files in effect, one report per file with problems. */
  readonly reports: ReadonlyArray<FileReport>
  /** Reports not shown yet: each file's problems once, then what each reload found. */
  readonly takeReports: Effect.Effect<ReadonlyArray<FileReport>>
  /**
   * Reads the config files again when one of them changed (was written, created or removed) since they were read,
   * except `restartKeys`. A `stat` per candidate file when nothing changed: on the user's message, not on the request
   * path (src/hooks/session.ts `refreshConfig`).
   */
  readonly refresh: Effect.Effect<void>
}>()("opencode-context-pruner/Config") {
  static readonly layer: Layer.Layer<Config, never, FileSystem.FileSystem | Path.Path | Paths> = Layer.effect(
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
      return yield* makeWatched(unique)
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
}

/** The configuration the sources resolve to, and what is wrong with them. */
interface Resolved {
  readonly config: PluginConfig
  readonly files: ReadonlyArray<string>
  readonly reports: ReadonlyArray<FileReport>
}

const resolveSources = (sources: ReadonlyArray<Source>): Resolved => {
  const merged = resolve(sources.map((source) => source.loaded.partial))
  const reports: Array<FileReport> = sources
    .filter((source) => source.loaded.problems.length > 0)
    .map((source) => ({ file: source.file, problems: source.loaded.problems, ignored: source.loaded.ignored }))
  if (Result.isFailure(merged)) {
    // Unreachable while every partial comes from the loader; kept so a loader bug cannot fail the layer.
    const problem = whole("a valid merged config", merged.failure, `Config files not merged: ${merged.failure}`)
    reports.push({ file: "(merged config)", problems: problem.problems, ignored: true })
  }
  return {
    config: Result.getOrElse(merged, () => defaultConfig),
    files: sources.filter((source) => !source.loaded.ignored).map((source) => source.file),
    reports
  }
}

/** A config that never changes: resolved once from `sources`. */
const make = Effect.fnUntraced(function*(sources: ReadonlyArray<Source>) {
  const resolved = resolveSources(sources)
  const pending = yield* Ref.make<ReadonlyArray<FileReport>>(resolved.reports)
  return Config.of({
    current: resolved.config,
    files: resolved.files,
    reports: resolved.reports,
    takeReports: Ref.getAndSet(pending, []),
    refresh: Effect.void
  })
})

/**
 * The config files of `dirs`, read now and again whenever one changes. What identifies a file's version is its
 * size, modification time and inode, taken before it is read: a write that lands while it is read is seen by the
 * next `refresh`.
 */
const makeWatched = Effect.fnUntraced(function*(dirs: ReadonlyArray<string>) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const platform = yield* Effect.context<FileSystem.FileSystem | Path.Path>()
  const candidates = dirs.map((dir) => configFileNames.map((name) => path.join(dir, name)))
  const versionsOf = Effect.forEach(
    candidates,
    (files) => Effect.map(Effect.forEach(files, (file) => versionOf(fs, file)), (versions) => versions.join("|"))
  )
  const readAll = Effect.map(Effect.forEach(dirs, readSource), (sources) => sources.map(Option.getOrUndefined))

  let versions = yield* versionsOf
  let sources: ReadonlyArray<Source | undefined> = yield* readAll
  let resolved = resolveSources(sources.filter((source) => source !== undefined))
  // The values OpenCode took at load: kept whatever the files say later (see `restartKeys`).
  const atLoad = resolved.config
  const pending = yield* Ref.make<ReadonlyArray<FileReport>>(resolved.reports)
  const oneAtATime = yield* Semaphore.make(1)

  const refresh = Effect.gen(function*() {
    const now = yield* versionsOf
    if (now.every((version, i) => version === versions[i])) return
    const read = yield* readAll
    const changes: Array<FileReport> = []
    const next = read.map((source, i) => {
      if (now[i] === versions[i]) return sources[i]
      const before = sources[i]
      if (source === undefined) {
        if (before !== undefined) changes.push(reloaded(before.file, [], false, "removed"))
        return undefined
      }
      const { problems, ignored } = source.loaded
      // Saved halfway through an edit, or broken: the settings the file had stay until it is fixed.
      if (ignored && before !== undefined && !before.loaded.ignored && before.file === source.file) {
        changes.push(reloaded(source.file, problems, true, "kept"))
        return before
      }
      changes.push(reloaded(source.file, problems, ignored, "read"))
      return source
    })
    versions = now
    sources = next
    const fresh = resolveSources(next.filter((source) => source !== undefined))
    const waiting = restartKeys.filter((key) => !equal(valueAt(fresh.config, key), valueAt(atLoad, key)))
    const config = withKeysOf(fresh.config, atLoad, restartKeys)
    const same = equal(config, resolved.config)
    resolved = { ...fresh, config: same ? resolved.config : config }
    const last = changes.length - 1
    const shown = changes
      .map((report, i) => (i === last ? { ...report, reload: { ...report.reload!, restartKeys: waiting } } : report))
      // A save that changed nothing has nothing to say.
      .filter((report) =>
        report.problems.length > 0 || report.reload!.restartKeys.length > 0 || report.reload!.change !== "read" ||
        !same
      )
    if (shown.length > 0) yield* Ref.update(pending, (reports) => [...reports, ...shown])
  }).pipe(
    Effect.provideContext(platform),
    oneAtATime.withPermit,
    Effect.catchCause((cause) => Effect.logWarning("dcp: config files not read again", cause)),
    Effect.withSpan("Config.refresh")
  )

  return Config.of({
    get current() {
      return resolved.config
    },
    get files() {
      return resolved.files
    },
    get reports() {
      return resolved.reports
    },
    takeReports: Ref.getAndSet(pending, []),
    refresh
  })
})

const reloaded = (
  file: string,
  problems: ReadonlyArray<Problem>,
  ignored: boolean,
  change: Reload["change"]
): FileReport => ({ file, problems, ignored, reload: { change, restartKeys: [] } })

/** What tells one version of a file from another; "-" when there is none (or it cannot be seen). */
const versionOf = (fs: FileSystem.FileSystem, file: string) =>
  fs.stat(file).pipe(
    Effect.map((info) =>
      `${info.size}:${Option.getOrElse(Option.map(info.mtime, (date) => date.getTime()), () => 0)}:${
        Option.getOrElse(info.ino, () => 0)
      }`
    ),
    Effect.orElseSucceed(() => "-")
  )

const valueAt = (config: PluginConfig, key: string): unknown =>
  key.split(".").reduce<unknown>((value, part) => (value as Record<string, unknown>)[part], config)

/** `config` with the values `keys` have in `from`. */
const withKeysOf = (config: PluginConfig, from: PluginConfig, keys: ReadonlyArray<string>): PluginConfig => {
  const set = (
    target: Record<string, unknown>,
    [head, ...rest]: ReadonlyArray<string>,
    value: unknown
  ): Record<string, unknown> =>
    rest.length === 0
      ? { ...target, [head!]: value }
      : { ...target, [head!]: set(target[head!] as Record<string, unknown>, rest, value) }
  return keys.reduce(
    (out, key) => set(out as Record<string, unknown>, key.split("."), valueAt(from, key)) as PluginConfig,
    config
  )
}

const equal = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b)

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
  const reload = report.reload
  const lines = [
    report.file,
    ...shown.map((problem) => `• ${problem.message}`),
    ...(shown.length < count ? [`+${count - shown.length} more`] : []),
    ...outcome(report),
    ...(reload === undefined || reload.restartKeys.length === 0
      ? []
      : [
        `Restart OpenCode for ${orList(reload.restartKeys)} to change: OpenCode takes ${
          reload.restartKeys.length === 1 ? "it" : "them"
        } from the plugin at start.`
      ])
  ]
  const problems = `${count} config problem${count === 1 ? "" : "s"}`
  return {
    title: reload !== undefined
      ? reload.change === "kept"
        ? "DCP: config change not applied"
        : count > 0
        ? `DCP: config reloaded, ${problems}`
        : "DCP: config reloaded"
      : report.ignored
      ? "DCP: config file ignored"
      : `DCP: ${problems}`,
    message: lines.join("\n")
  }
}

/** What became of the file's settings. */
const outcome = (report: FileReport): ReadonlyArray<string> => {
  const count = report.problems.length
  const theKeys = count === 1 ? "That key uses its" : "Those keys use their"
  switch (report.reload?.change) {
    case "removed":
      return ["The file is gone: its settings no longer apply."]
    case "kept":
      return ["Its previous settings stay in effect until it is fixed."]
    case "read":
      return report.ignored
        ? ["The whole file was ignored; defaults and the other config files apply."]
        : count > 0
        ? [`${theKeys} default (or an earlier file's value); the rest applies from the next request on.`]
        : ["Its settings apply from the next request on."]
    case undefined:
      return report.ignored
        ? ["The whole file was ignored; defaults and the other config files apply."]
        : [`${theKeys} default (or an earlier file's value); the rest of the file applies.`]
  }
}

const orList = (items: ReadonlyArray<string>): string =>
  items.length <= 1 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`

/**
 * Each problem of the config files in effect, with its file: what `/dcp stats`, `/dcp context` and the terminal UI show
 * until the file is fixed (a toast is shown once).
 */
export const currentProblems = (
  reports: ReadonlyArray<FileReport>
): ReadonlyArray<{ readonly file: string; readonly message: string }> =>
  reports.flatMap((report) =>
    report.problems.map((problem) => ({
      file: report.file,
      message: report.ignored ? `the whole file is ignored: ${problem.message}` : problem.message
    }))
  )

/** The same report as lines of a note, for a command's output: toasts do not reach every client. */
export const reportNote = (report: FileReport): string => {
  const { message, title } = formatReport(report)
  const [file, ...lines] = message.split("\n")
  const count = report.problems.length
  const head = report.reload !== undefined
    ? `${title.replace(/^DCP: c/, "C")}: ${file}`
    : report.ignored
    ? `Config file ignored: ${file}`
    : `${count} config problem${count === 1 ? "" : "s"} in ${file}:`
  return [head, ...lines.map((line) => `  ${line}`)].join("\n")
}
