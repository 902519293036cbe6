import { createHash } from "node:crypto"
import { readFileSync, statSync } from "node:fs"
import { Config, Context, Effect, Layer, Result } from "effect"
import {
  absent,
  carriedInstructions,
  instructionCandidates,
  instructionsChanged,
  type Stamp,
  stampOf
} from "../engine/instructions.ts"
import type { SessionState } from "../engine/session.ts"
import { Paths } from "./Paths.ts"

/**
 * The instruction files OpenCode reads into every request's system prompt (src/engine/instructions.ts). It reads them
 * after the plugin's transform, so the system prompt itself tells the plugin of a change one request too late; the
 * files on disk tell it in time, whoever changed them (the model's edit, the user's editor, a command).
 */
export class Instructions extends Context.Service<Instructions, {
  /**
   * Whether an instruction file of the session's next system prompt changed on disk since its previous request in
   * this process: that request is then written to the prompt cache whole, with prunes or without. Looks at the files
   * again and keeps what it saw for the next request.
   */
  readonly changed: (state: SessionState) => Effect.Effect<boolean>
}>()("opencode-context-pruner/Instructions") {
  static readonly layer: Layer.Layer<Instructions, never, Paths> = Layer.effect(
    Instructions,
    Effect.gen(function*() {
      const paths = yield* Paths
      // OpenCode's own switches, read from the environment it shares with the plugin, as it reads them.
      const flag = (name: string) =>
        Config.Boolean(name).pipe(Config.withDefault(false), Effect.orElseSucceed(() => false))
      const claudeCode = !(yield* flag("OPENCODE_DISABLE_CLAUDE_CODE")) &&
        !(yield* flag("OPENCODE_DISABLE_CLAUDE_CODE_PROMPT"))
      const projectFiles = !(yield* flag("OPENCODE_DISABLE_PROJECT_CONFIG"))
      // Synchronous on purpose: the transform looks at three names in each of the project's folders and two global
      // files on every request, and most of them do not exist. A stat through the async FileSystem is a round trip
      // through libuv's thread pool (~170 µs for five, against ~6 µs); on the benchmark's 1,000-call session that put
      // 0.3-0.8 ms on the median request. A file is read only when its time or size moved, which is rare, and an
      // instruction file is small.
      const digest = (path: string) => () => {
        const bytes = Result.try(() => readFileSync(path))
        return Result.isSuccess(bytes) ? createHash("sha256").update(bytes.success).digest("base64") : "unreadable"
      }
      const look = (path: string, previous: Stamp | undefined): Stamp => {
        const info = Result.try(() => statSync(path, { throwIfNoEntry: false }))
        const file = Result.isSuccess(info) && info.success?.isFile() === true ? info.success : undefined
        return file === undefined ? absent : stampOf(file.mtimeMs, file.size, previous, digest(path))
      }
      return Instructions.of({
        changed: (state) =>
          Effect.sync(() => {
            const candidates = instructionCandidates({
              carried: carriedInstructions(state.systemTexts ?? []),
              directory: paths.projectDir,
              stop: paths.instructionsStop,
              globalConfigDir: paths.globalConfigDir,
              home: paths.home,
              claudeCode,
              projectFiles
            })
            const before = state.instructionStamps
            const now = new Map(candidates.watched.map((path) => [path, look(path, before?.get(path))] as const))
            state.instructionStamps = now
            return before !== undefined && instructionsChanged(candidates, before, now)
          })
      })
    })
  )
}
