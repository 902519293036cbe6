import { NodeFileSystem, NodePath } from "@effect/platform-node"
import { Clock, Effect, FileSystem, Layer, Option, type Path, Ref, Result, Schema } from "effect"
import { resolve } from "../../src/config/load.ts"
import { countsOver } from "../../src/data/tokenCounts.ts"
import { InvalidSessionId, sessionIdProblem } from "../../src/host/sessionId.ts"
import { compose } from "../../src/layers/main.ts"
import { Config } from "../../src/services/Config.ts"
import { Host, type HostFixture } from "../../src/services/Host.ts"
import type { Paths } from "../../src/services/Paths.ts"
import { Persistence, PersistenceError } from "../../src/services/Persistence.ts"
import { Tokenizer } from "../../src/services/Tokenizer.ts"
import { emptyLifetime, recordSessions, retireSession } from "../../src/state/lifetime.ts"
import { journalLine, readJournal, replay } from "../../src/state/journal.ts"
import { type LifetimeFile, SessionFile, type SessionTotals } from "../../src/state/schema.ts"
import { pathsUnder } from "./paths.ts"

export const platform = Layer.mergeAll(NodeFileSystem.layer, NodePath.layer)

/** A temporary directory removed when the test's scope closes. */
export const tempDir = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  return yield* fs.makeTempDirectoryScoped({ prefix: "dcp-test-" })
}).pipe(Effect.provide(NodeFileSystem.layer))

/**
 * The plugin's production graph under `root`, with a scripted host and (unless a test needs exact counts) the fast
 * token estimate; everything else is live.
 */
export const pluginUnder = (
  root: string,
  options: {
    readonly host?: HostFixture
    readonly tokenizer?: Layer.Layer<Tokenizer>
    readonly persistence?: Layer.Layer<Persistence, never, FileSystem.FileSystem | Path.Path | Paths>
  } = {}
) =>
  compose({
    paths: pathsUnder(root),
    host: Host.layerTest(options.host),
    tokenizer: options.tokenizer ?? Tokenizer.layerEstimate,
    persistence: options.persistence
  })

/** A config resolved from `value` over the defaults, as it would be from a file, for services that read it. */
export const configOf = (value: Readonly<Record<string, unknown>>): Layer.Layer<Config> =>
  Layer.succeed(
    Config,
    Config.of({
      current: Result.getOrThrow(resolve([value])),
      files: [],
      reports: [],
      takeReports: Effect.succeed([]),
      refresh: Effect.void
    })
  )

/** The production tokenizer's counting (sampled, cached) over `encode`, for both counts: lets a test see what is encoded. */
export const tokenizerWith = (encode: (text: string) => number): Layer.Layer<Tokenizer> =>
  Layer.succeed(Tokenizer, Tokenizer.of(countsOver(Effect.succeed(encode), encode)))

/**
 * `Persistence` in memory, for a graph that must write nothing: sessions round-trip through their encoded form, so
 * what comes back is what a disk load would return, and session IDs are checked as on disk.
 */
export const persistenceInMemory: Layer.Layer<Persistence> = Layer.effect(
  Persistence,
  Effect.gen(function*() {
    const sessions = yield* Ref.make(new Map<string, SessionFile>())
    const totals = yield* Ref.make<LifetimeFile>(emptyLifetime)
    const saves = yield* Ref.make(0)
    const generations = new Map<string, string>()
    const validate = (sessionID: string) => {
      const problem = sessionIdProblem(sessionID)
      return problem === undefined ? Effect.void : Effect.fail(new InvalidSessionId({ sessionID, problem }))
    }
    const json = Schema.fromJsonString(SessionFile)
    const roundTrip = (state: SessionFile) =>
      Schema.encodeEffect(json)(state).pipe(
        Effect.flatMap(Schema.decodeUnknownEffect(json)),
        Effect.mapError((cause) => new PersistenceError({ operation: "write", path: state.sessionID, cause }))
      )
    return Persistence.of({
      load: (sessionID) =>
        validate(sessionID).pipe(
          Effect.andThen(Ref.get(sessions)),
          Effect.map((all) => Option.fromNullishOr(all.get(sessionID)))
        ),
      save: (state) =>
        validate(state.sessionID).pipe(
          Effect.andThen(roundTrip(state)),
          Effect.flatMap((stored) => Ref.update(sessions, (all) => new Map(all).set(state.sessionID, stored))),
          Effect.andThen(Ref.updateAndGet(saves, (n) => n + 1)),
          Effect.map((n) => {
            generations.set(state.sessionID, String(n))
            return String(n)
          })
        ),
      // Through the journal's own encoding and replay, as a load from disk would see the change.
      append: (sessionID, generation, change) =>
        validate(sessionID).pipe(
          Effect.andThen(Ref.update(sessions, (all) => {
            const stored = all.get(sessionID)
            if (stored === undefined) return all
            const read = readJournal(journalLine(generation, change), generations.get(sessionID))
            return new Map(all).set(sessionID, replay(stored, read.changes))
          }))
        ),
      remove: (sessionID) =>
        Effect.gen(function*() {
          yield* validate(sessionID)
          yield* Ref.update(sessions, (all) => {
            const next = new Map(all)
            next.delete(sessionID)
            return next
          })
          const now = yield* Clock.currentTimeMillis
          yield* Ref.update(totals, (current) => retireSession(current, sessionID, now))
        }),
      lifetime: Ref.get(totals),
      recordLifetime: (records: ReadonlyMap<string, SessionTotals>) =>
        Clock.currentTimeMillis.pipe(
          Effect.flatMap((now) => Ref.updateAndGet(totals, (current) => recordSessions(current, records, now)))
        ),
      leftoversRemoved: Effect.succeed([]),
      saveStatus: (status) => validate(status.sessionID),
      removeStatus: (sessionID) => validate(sessionID)
    })
  })
)
