import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Clock } from "effect"
import { afterEach, assert, beforeEach, describe, it } from "vitest"
import { type ReplayedPlugin, replayedPlugin } from "../../src/simulator/plugin.ts"

/** The plugin as the analyser and the benchmark replay it, under a fresh root removed after each test. */
let root = ""
let plugin: ReplayedPlugin | undefined
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), "dcp-replayed-"))
})
afterEach(async () => {
  await plugin?.dispose()
  plugin = undefined
  await rm(root, { recursive: true, force: true })
})

describe("the replayed plugin", () => {
  it("loads the global config it is given, written under its root, in a project that need not exist", async () => {
    plugin = await replayedPlugin({
      root,
      directory: "/nowhere/project",
      globalConfig: `{ "pruneNotification": "off" }`
    })
    assert.include(plugin.config.files, plugin.globalConfigFile)
    assert.strictEqual(plugin.globalConfigFile.startsWith(root), true)
    assert.strictEqual(plugin.config.current.pruneNotification, "off")
    assert.strictEqual(plugin.paths.projectDir, "/nowhere/project")
    assert.strictEqual(plugin.paths.stateDir.startsWith(root), true)
  })

  it("without a project directory, works in an empty one under its root", async () => {
    plugin = await replayedPlugin({ root })
    assert.strictEqual(plugin.paths.projectDir, join(root, "project"))
  })

  it("has no hooks when the config switches it off, as in OpenCode", async () => {
    plugin = await replayedPlugin({ root, globalConfig: `{ "enabled": false }` })
    assert.isUndefined(plugin.hooks)
  })

  it("reads the time the driver sets", async () => {
    plugin = await replayedPlugin({ root, startTime: 1_000 })
    assert.strictEqual(await plugin.run(Clock.currentTimeMillis), 1_000)
    plugin.setTime(5_000_000)
    assert.strictEqual(await plugin.run(Clock.currentTimeMillis), 5_000_000)
  })
})
