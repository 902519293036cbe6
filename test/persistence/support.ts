import { NodeFileSystem, NodePath } from "@effect/platform-node"
import { Deferred, Effect, FileSystem, Layer, Logger, Option, Path } from "effect"
import { systemError } from "effect/PlatformError"
import type { Paths } from "../../src/services/Paths.ts"
import { Persistence } from "../../src/services/Persistence.ts"
import type { SessionFile } from "../../src/state/schema.ts"
import { type SessionStatus, statusVersion } from "../../src/state/status.ts"
import { pathsUnder } from "../support/paths.ts"

export const platform = Layer.mergeAll(NodeFileSystem.layer, NodePath.layer)

/** The live Persistence over `root`, on the given file system (the real one unless a test swaps it). */
export const persistenceUnder = (root: string, fileSystem: Layer.Layer<FileSystem.FileSystem> = NodeFileSystem.layer) =>
  Persistence.layer.pipe(
    Layer.provide(pathsUnder(root)),
    Layer.provide(Layer.mergeAll(fileSystem, NodePath.layer))
  )

/** The session's state as a plugin with these paths loads it (its file, with its journal replayed); None without. */
export const storedSessionAt = (paths: Layer.Layer<Paths, never, Path.Path>, sessionID: string) =>
  Persistence.use((persistence) => persistence.load(sessionID)).pipe(
    Effect.provide(Persistence.layer.pipe(Layer.provide(paths))),
    Effect.provide(platform)
  )

/** The session's state as a restarted plugin over `root` would load it. */
export const storedSession = (root: string, sessionID: string) =>
  storedSessionAt(pathsUnder(root), sessionID).pipe(Effect.map(Option.getOrThrow))

/** A fresh temporary root, removed when the test's scope closes, with its state directory. */
export const tempRoot = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const root = yield* fs.makeTempDirectoryScoped({ prefix: "dcp-persistence-" })
  return { root, stateDir: path.join(root, "data", "opencode", "storage", "plugin", "dcp") }
})

/** A test body run against the live layer over a fresh temporary root. */
export const onDisk = <A, E>(
  body: (
    dirs: { root: string; stateDir: string }
  ) => Effect.Effect<A, E, Persistence | FileSystem.FileSystem | Path.Path>
) =>
  Effect.gen(function*() {
    const dirs = yield* tempRoot
    return yield* body(dirs).pipe(Effect.provide(persistenceUnder(dirs.root)))
  }).pipe(Effect.provide(platform))

/** Every file and directory under `dir`, relative to it, sorted. */
export const listTree = (dir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    if (!(yield* fs.exists(dir))) return []
    return [...(yield* fs.readDirectory(dir, { recursive: true }))].sort()
  })

/** The real file system, except that `rename` fails as a full disk or a crash would. */
export const renameFails = Layer.effect(
  FileSystem.FileSystem,
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    return {
      ...fs,
      rename: (from: string) =>
        Effect.fail(systemError({ _tag: "Unknown", module: "FileSystem", method: "rename", pathOrDescriptor: from }))
    }
  })
).pipe(Layer.provide(NodeFileSystem.layer))

/** The real file system, except that `rename` signals `reached` and then never completes. */
export const renameHangs = (reached: Deferred.Deferred<void>) =>
  Layer.effect(
    FileSystem.FileSystem,
    Effect.gen(function*() {
      const fs = yield* FileSystem.FileSystem
      return { ...fs, rename: () => Deferred.succeed(reached, undefined).pipe(Effect.andThen(Effect.never)) }
    })
  ).pipe(Layer.provide(NodeFileSystem.layer))

interface LogLine {
  readonly level: string
  readonly message: string
}

/** Runs `effect` with its log lines collected instead of printed. */
export const withCapturedLogs = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const lines: Array<LogLine> = []
    const collector = Logger.make((options) => {
      const message = Array.isArray(options.message) ? options.message.join(" ") : String(options.message)
      lines.push({ level: options.logLevel, message })
    })
    const result = yield* effect.pipe(Effect.provide(Logger.layer([collector])))
    return { result, logs: lines as ReadonlyArray<LogLine> }
  })

export const sampleSession = (sessionID: string): SessionFile => ({
  version: 1,
  sessionID,
  updatedAt: 1_700_000_000_000,
  nextId: 4,
  ids: { call_a: 1, call_b: 2, call_c: 3 },
  pruned: {
    call_a: { reason: "deduplication", tokens: 1200, at: 1_700_000_000_100 },
    call_b: { reason: "discard", tokens: 80, at: 1_700_000_000_200 }
  },
  stats: {
    calls: 2,
    tokens: 1280,
    applications: { count: 2, cold: 1, rebuiltTokens: 3000 },
    cost: { profile: "anthropic", requests: 9, saved: 1234.5, rebuilt: 300, reReads: 1, reRead: 250 },
    compactions: { count: 1, last: { at: 1_700_000_000_400, tokens: 52_103, threshold: 50_400 } },
    byReason: { deduplication: { calls: 1, tokens: 1200 }, discard: { calls: 1, tokens: 80 } },
    byTool: { read: { calls: 2, tokens: 1280 } },
    lastPrune: { at: 1_700_000_000_200, reason: "discard", calls: 1, tokens: 80 }
  },
  summaryId: "msg_summary",
  findings: [{ id: 2, tool: "read", text: "config uses JSONC" }],
  restored: ["call_c"],
  reReads: { call_c: 640 },
  folds: { msg_u1: { calls: ["call_b"], tokens: 90, at: 1_700_000_000_300 } }
})

/** Session IDs that must never reach the file system, with what each one tries. */
export const hostileSessionIds: ReadonlyArray<readonly [string, string]> = [
  ["empty", ""],
  ["current directory", "."],
  ["parent directory", ".."],
  ["path traversal", "../../x"],
  ["traversal to a sibling file", "../victim"],
  ["nested path", "a/b"],
  ["absolute path", "/etc/passwd"],
  ["backslash path", "a\\b"],
  ["Windows drive path", "C:\\x"],
  ["Windows drive-relative", "C:x"],
  ["NUL byte", "x\0y"],
  ["newline", "ses_1\n"],
  ["leading space", " ses_1"],
  ["leading dash (option-like)", "-rf"],
  ["dot inside (extension games)", "ses.json"],
  ["too long", "s".repeat(129)],
  ["very long", "s".repeat(100_000)],
  ["non-ASCII letter", "ses_ü"],
  ["fullwidth letters", "ｓｅｓ_1"],
  ["zero-width space", "ses\u200b_1"],
  ["right-to-left override", "ses_\u202enosj"],
  ["fullwidth solidus", "a\uff0fb"],
  ["percent-encoded traversal", "%2e%2e%2fx"],
  ["Windows device name", "CON"],
  ["Windows device name, lower case", "nul"]
]

export const validSessionIds: ReadonlyArray<string> = [
  "ses_4f1c2b3a9ffeXYZabc123",
  "a",
  "_",
  "s".repeat(128),
  "lifetime",
  "lifetime-stats",
  "console"
]

/** A status file for the terminal UI as the server part writes it. */
export const sampleStatus = (sessionID: string): SessionStatus => ({
  version: statusVersion,
  sessionID,
  updatedAt: 1_700_000_000_000,
  pruned: { calls: 1, tokens: 1200 },
  session: { calls: 1, tokens: 1200, byReason: { deduplication: { calls: 1, tokens: 1200 } } },
  recent: [{ id: 1, tool: "read", target: "src/a.ts", tokens: 1200, reason: "deduplication" }],
  commands: true
})

/** The lifetime totals' file, beside the session files: a name no session file can have (a session ID has no "."). */
export const lifetimeFileName = "lifetime.stats.json"
