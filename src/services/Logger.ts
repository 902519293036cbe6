import {
  Cause,
  Clock,
  Context,
  Effect,
  FileSystem,
  Layer,
  Logger as EffectLogger,
  Option,
  Path,
  References
} from "effect"
import type { PlatformError } from "effect/PlatformError"
import type { LogLevel } from "effect/LogLevel"
import { boundedJson } from "../data/boundedJson.ts"
import type { SessionId } from "../host/sessionId.ts"
import { Config } from "./Config.ts"
import { Host } from "./Host.ts"
import { Paths } from "./Paths.ts"

/**
 * Where the plugin's log lines go. OpenCode owns the terminal, so nothing is ever printed: warnings and errors go
 * to OpenCode's own log; with `debug` on, every line also goes to a daily file under the log directory, next to
 * per-session snapshots of what was sent to the model. Files are private (0600) and the directory is kept under
 * a size budget, oldest files deleted first.
 */
export class Logger extends Context.Service<Logger, {
  readonly debug: boolean
  /** Records what the model is about to receive for a session. Does nothing unless `debug` is on. */
  readonly snapshot: (sessionID: SessionId, messages: unknown) => Effect.Effect<void>
}>()("opencode-context-pruner/Logger") {
  static readonly layer: Layer.Layer<Logger, never, Config | FileSystem.FileSystem | Host | Path.Path | Paths> = Layer
    .unwrap(Effect.gen(function*() {
      const { current } = yield* Config
      const debug = current.debug
      const budget = makeBudget(yield* FileSystem.FileSystem, yield* Path.Path)
      const service = Layer.effect(Logger, make(debug, budget))
      const sink = EffectLogger.layer([sinkLogger(debug, budget)])
      const level = Layer.succeed(References.MinimumLogLevel, debug ? "Debug" : "Warn")
      return Layer.mergeAll(service, sink, level)
    }))

  /**
   * Where lines go while the layers before this one are built (the config is read before `debug` is known): warnings
   * and errors to OpenCode's log. Without it they would go to Effect's default logger, the console, which OpenCode's
   * terminal UI draws over.
   */
  static readonly boot: Layer.Layer<never, never, Host> = Layer.unwrap(Effect.gen(function*() {
    const host = yield* Host
    const logger = yield* EffectLogger.make<unknown, Line>(({ cause, date, logLevel, message }) => ({
      level: logLevel,
      date,
      text: render(message, cause)
    })).pipe(EffectLogger.batched({ window: "200 millis", flush: (lines) => toHost(host, lines) }))
    return EffectLogger.layer([logger])
  }))
}

/** Total bytes kept under the log directory. */
const budgetBytes = 20 * 1024 * 1024
/** Snapshots kept per session. */
const snapshotsPerSession = 10
const filesMode = 0o600

const make = (debug: boolean, budget: Budget) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const { logDir } = yield* Paths
    let sequence = 0
    // A session ID names a directory: `SessionId` is one that cannot climb out of the log directory.
    const snapshot = Effect.fnUntraced(function*(sessionID: SessionId, messages: unknown) {
      const dir = path.join(logDir, "context", sessionID)
      yield* fs.makeDirectory(dir, { recursive: true, mode: 0o700 })
      const time = new Date(yield* Clock.currentTimeMillis).toISOString().replace(/[:.]/g, "-")
      const stamp = `${time}-${String(++sequence).padStart(6, "0")}`
      const text = snapshotText(messages)
      yield* fs.writeFileString(path.join(dir, `${stamp}.json`), text, { mode: filesMode })
      const kept = (yield* fs.readDirectory(dir)).filter((name) => name.endsWith(".json")).sort()
      for (const old of kept.slice(0, Math.max(0, kept.length - snapshotsPerSession))) {
        yield* fs.remove(path.join(dir, old))
      }
      yield* budget.wrote(logDir, text.length)
    }, Effect.catchCause((cause) => Effect.logWarning("could not write context snapshot", cause)))
    return Logger.of({
      debug,
      snapshot: debug ? snapshot : () => Effect.void
    })
  })

interface Line {
  readonly level: LogLevel
  readonly date: Date
  readonly text: string
}

const sinkLogger = (debug: boolean, budget: Budget) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const host = yield* Host
    const { logDir } = yield* Paths
    const toFile = Effect.fnUntraced(function*(lines: ReadonlyArray<Line>) {
      yield* fs.makeDirectory(logDir, { recursive: true, mode: 0o700 })
      const byDay = new Map<string, Array<string>>()
      for (const line of lines) {
        const day = line.date.toISOString().slice(0, 10)
        const text = `${line.date.toISOString()} ${line.level.toUpperCase()} ${line.text}\n`
        byDay.set(day, [...(byDay.get(day) ?? []), text])
      }
      for (const [day, texts] of byDay) {
        const text = texts.join("")
        yield* fs.writeFileString(path.join(logDir, `dcp-${day}.log`), text, { flag: "a", mode: filesMode })
        yield* budget.wrote(logDir, text.length)
      }
    })
    const flush = (lines: Array<Line>) =>
      Effect.gen(function*() {
        yield* toHost(host, lines)
        if (debug) yield* toFile(lines)
      }).pipe(Effect.ignore)
    return yield* EffectLogger.make<unknown, Line>(({ cause, date, logLevel, message }) => ({
      level: logLevel,
      date,
      text: render(message, cause)
    })).pipe(EffectLogger.batched({ window: "200 millis", flush }))
  })

/** Warnings and errors, to OpenCode's log. */
const toHost = (host: Host["Service"], lines: ReadonlyArray<Line>) =>
  Effect.forEach(lines, (line) =>
    line.level === "Warn" || line.level === "Error" || line.level === "Fatal"
      ? host.log(line.level === "Warn" ? "warn" : "error", line.text)
      : Effect.void, { discard: true })

/**
 * A context snapshot holds the newest messages, as many as fit in `snapshotBytes`, each text cut to what a reader
 * needs to recognise it and nesting (of a tool's input) cut where no message goes: a few milliseconds a request
 * however long the session and whatever a tool's input holds.
 */
const snapshotBytes = 256 * 1024
const snapshotBounds = { maxDepth: 24, maxString: 4_000, indent: 2 }

const snapshotText = (messages: unknown): string => {
  if (!Array.isArray(messages)) return boundedJson(messages, { ...snapshotBounds, maxLength: snapshotBytes })
  const texts: Array<string> = []
  let used = 0
  let i = messages.length - 1
  for (; i >= 0 && used < snapshotBytes; i--) {
    const room = snapshotBytes - used
    const text = boundedJson(messages[i], { ...snapshotBounds, maxLength: room })
    // Only the newest message is ever written cut short: the others are whole or left out.
    if (text.length >= room && texts.length > 0) break
    texts.push(text)
    used += text.length
  }
  const omitted = i >= 0 ? [JSON.stringify(`[${i + 1} older messages not written]`)] : []
  return `[\n${[...omitted, ...texts.reverse()].join(",\n")}\n]`
}
/** A value in a log line. */
const valueBounds = { maxDepth: 6, maxString: 1_000, maxLength: 4_000 }
/** A whole log line, failure trace included. */
const maxLineLength = 16_000

const render = (message: unknown, cause: Cause.Cause<unknown>): string => {
  const parts = (Array.isArray(message) ? message : [message]).map((part) =>
    typeof part === "string" ? part : boundedJson(part, valueBounds)
  )
  if (cause.reasons.length > 0) parts.push(Cause.pretty(cause))
  const text = parts.join(" ")
  return text.length <= maxLineLength
    ? text
    : `${text.slice(0, maxLineLength)} …[+${text.length - maxLineLength} characters]`
}

interface Budget {
  readonly wrote: (dir: string, bytes: number) => Effect.Effect<void, PlatformError>
}

/** Checks the directory's size after every `checkEveryBytes` written, not after every write. */
const checkEveryBytes = 512 * 1024

const makeBudget = (fs: FileSystem.FileSystem, path: Path.Path): Budget => {
  let sinceCheck = Number.POSITIVE_INFINITY
  return {
    wrote: (dir, bytes) =>
      Effect.suspend(() => {
        sinceCheck += bytes
        if (sinceCheck < checkEveryBytes) return Effect.void
        sinceCheck = 0
        return enforceBudget(fs, path, dir, budgetBytes)
      })
  }
}

/**
 * Deletes the oldest files under `dir` until their total size is at most `maxBytes`.
 *
 * @internal Exported for its test, which sets a budget small enough to reach; the logger's is `budgetBytes`.
 */
export const enforceBudget = (fs: FileSystem.FileSystem, path: Path.Path, dir: string, maxBytes: number) =>
  Effect.gen(function*() {
    const names = yield* fs.readDirectory(dir, { recursive: true })
    const files: Array<{ file: string; size: number; mtime: number }> = []
    for (const name of names) {
      const file = path.join(dir, name)
      const info = yield* fs.stat(file)
      if (info.type !== "File") continue
      const mtime = Option.match(info.mtime, { onNone: () => 0, onSome: (date) => date.getTime() })
      files.push({ file, size: Number(info.size), mtime })
    }
    let total = files.reduce((sum, entry) => sum + entry.size, 0)
    for (const entry of files.sort((a, b) => a.mtime - b.mtime)) {
      if (total <= maxBytes) break
      yield* fs.remove(entry.file)
      total -= entry.size
    }
  })
