import { assert, describe, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { Paths } from "../../src/services/Paths.ts"
import { platform } from "../support/layers.ts"

const resolved = (project: { directory: string; worktree?: string }, env: Record<string, string>) =>
  Paths.use(Effect.succeed).pipe(Effect.provide(Paths.layer(project, env)), Effect.provide(platform))

describe("Paths", () => {
  it.effect("follows XDG directories the way OpenCode does", () =>
    Effect.gen(function*() {
      const paths = yield* resolved({ directory: "/p", worktree: "/p" }, {
        HOME: "/home/u",
        XDG_CONFIG_HOME: "/xdg/config",
        XDG_DATA_HOME: "/xdg/data",
        OPENCODE_CONFIG_DIR: "/extra"
      })
      assert.strictEqual(paths.globalConfigDir, "/xdg/config/opencode")
      assert.strictEqual(paths.stateDir, "/xdg/data/opencode/storage/plugin/dcp")
      assert.strictEqual(paths.logDir, "/xdg/config/opencode/logs/dcp")
      assert.deepStrictEqual(paths.envConfigDir, Option.some("/extra"))
    }))

  it.effect("falls back to ~/.config and ~/.local/share", () =>
    Effect.gen(function*() {
      const paths = yield* resolved({ directory: "/p" }, { HOME: "/home/u" })
      assert.strictEqual(paths.globalConfigDir, "/home/u/.config/opencode")
      assert.strictEqual(paths.stateDir, "/home/u/.local/share/opencode/storage/plugin/dcp")
      assert.isTrue(Option.isNone(paths.envConfigDir))
    }))

  it.effect("shows paths relative to the project directory when OpenCode reports no git worktree", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        (yield* resolved({ directory: "/work/app", worktree: "/" }, { HOME: "/h" })).worktree,
        "/work/app"
      )
      assert.strictEqual(
        (yield* resolved({ directory: "/work/app/pkg", worktree: "/work/app" }, { HOME: "/h" })).worktree,
        "/work/app"
      )
    }))

  it.effect("looks for instruction files up to the worktree OpenCode reports, the root outside git", () =>
    Effect.gen(function*() {
      assert.strictEqual(
        (yield* resolved({ directory: "/work/app", worktree: "/" }, { HOME: "/h" })).instructionsStop,
        "/"
      )
      assert.strictEqual(
        (yield* resolved({ directory: "/work/app/pkg", worktree: "/work/app" }, { HOME: "/h" })).instructionsStop,
        "/work/app"
      )
    }))
})
