import { homedir } from "node:os"
import { Config, ConfigProvider, Context, Effect, Layer, Option, Path } from "effect"
import { stateDirInDataHome } from "../state/status.ts"

/**
 * Where the plugin reads and writes, resolved once from the environment the way OpenCode resolves its own
 * directories (XDG base directories, falling back to `~/.config` and `~/.local/share`).
 */
export class Paths extends Context.Service<Paths, {
  /** OpenCode's global config directory: `$XDG_CONFIG_HOME/opencode`. */
  readonly globalConfigDir: string
  /** The home directory (`$HOME`), where OpenCode also reads `~/.claude/CLAUDE.md`. */
  readonly home: string
  /** `$OPENCODE_CONFIG_DIR`, when set. */
  readonly envConfigDir: Option.Option<string>
  /** The project OpenCode runs in (`PluginInput.directory`). */
  readonly projectDir: string
  /**
   * The root paths are shown relative to: the project's worktree (git root), or the project directory when
   * OpenCode reports no worktree (it reports "/" for a directory outside git).
   */
  readonly worktree: string
  /**
   * Where OpenCode stops looking for the project's instruction files as it goes up from the directory: the worktree
   * as OpenCode reports it, so "/" outside git, where it looks in every folder up to the root.
   */
  readonly instructionsStop: string
  /** One JSON file per session, plus lifetime statistics. */
  readonly stateDir: string
  /** Debug logs and context snapshots. */
  readonly logDir: string
}>()("opencode-context-pruner/Paths") {
  static readonly layer = (
    project: { readonly directory: string; readonly worktree?: string | undefined },
    env: Readonly<Record<string, string | undefined>> = process.env
  ): Layer.Layer<Paths, never, Path.Path> =>
    Layer.effect(
      Paths,
      Effect.gen(function*() {
        const path = yield* Path.Path
        const env = (name: string): Effect.Effect<Option.Option<string>> =>
          Config.option(Config.NonEmptyString(name)).pipe(Effect.orElseSucceed(() => Option.none<string>()))
        const home = Option.getOrElse(yield* env("HOME"), () => homedir())
        const configHome = Option.getOrElse(yield* env("XDG_CONFIG_HOME"), () => path.join(home, ".config"))
        const dataHome = Option.getOrElse(yield* env("XDG_DATA_HOME"), () => path.join(home, ".local", "share"))
        return Paths.of(resolve(path, {
          home,
          configHome,
          dataHome,
          envConfigDir: yield* env("OPENCODE_CONFIG_DIR"),
          projectDir: project.directory,
          worktree: project.worktree === undefined || project.worktree === "/" || project.worktree === ""
            ? project.directory
            : project.worktree,
          instructionsStop: project.worktree === undefined || project.worktree === ""
            ? project.directory
            : project.worktree
        }))
      }).pipe(
        // The default provider snapshots the environment once per process; the plugin reads it when it loads.
        Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env: definedOnly(env) }))
      )
    )
}

const definedOnly = (env: Readonly<Record<string, string | undefined>>): Record<string, string> =>
  Object.fromEntries(Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined))

const resolve = (path: Path.Path, dirs: {
  readonly home: string
  readonly configHome: string
  readonly dataHome: string
  readonly envConfigDir: Option.Option<string>
  readonly projectDir: string
  readonly worktree: string
  readonly instructionsStop: string
}): Paths["Service"] => {
  const globalConfigDir = path.join(dirs.configHome, "opencode")
  return {
    home: dirs.home,
    globalConfigDir,
    envConfigDir: dirs.envConfigDir,
    projectDir: dirs.projectDir,
    worktree: dirs.worktree,
    instructionsStop: dirs.instructionsStop,
    stateDir: path.join(dirs.dataHome, ...stateDirInDataHome),
    logDir: path.join(globalConfigDir, "logs", "dcp")
  }
}
