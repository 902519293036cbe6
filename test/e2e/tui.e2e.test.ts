import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, inject, it } from "vitest"
import { call, done, sourceFile } from "./support/fixtures.ts"
import { type ModelServer, startModelServer } from "./support/model-server.ts"
import { prepareWorld } from "./support/opencode.ts"
import { sidebarOf, startTui, type Tui } from "./support/tui.ts"

const repo = new URL("../../", import.meta.url).pathname.replace(/\/$/, "")

/**
 * The real terminal UI with both parts of the plugin from this checkout, the way the README tells a user to load a
 * local checkout (`file://` in opencode.json and in tui.json), and prunes applied at once (project config), so a
 * duplicate read is pruned within the run.
 */
describe("the terminal UI", () => {
  let root = ""
  let model: ModelServer
  let tui: Tui | undefined
  let file = ""

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "dcp-e2e-tui-"))
    model = await startModelServer()
    const world = await prepareWorld({
      root,
      plugin: `file://${repo}`,
      modelUrl: model.url,
      configTemplate: inject("opencodeConfigTemplate"),
      projectFiles: {
        "src/a.ts": sourceFile("alpha"),
        ".opencode/tui.json": JSON.stringify({ plugin: [`file://${repo}`] }),
        ".opencode/dcp.jsonc": JSON.stringify({ cache: { mode: "immediate" } })
      }
    })
    file = join(world.project, "src/a.ts")
    tui = await startTui({ name: "tui", env: world.env, project: world.project })
  })

  afterAll(async () => {
    await tui?.stop()
    await model?.close()
    // A child OpenCode started to install plugins can still be writing its cache for a moment after the UI stopped.
    await rm(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 })
  })

  it(
    "shows the session's pruning in the sidebar, and /dcp opens a dialog that sweeps and restores with no model turn",
    async () => {
      const ui = tui!
      model.script([call("read", { filePath: file }, "dup_1"), call("read", { filePath: file }, "dup_2"), done])
      await ui.type("read a.ts twice")
      await ui.press("Enter")

      const panel = sidebarOf(
        await ui.waitForScreen(
          "the panel to show the prune",
          // "esc interrupt" is shown while the agent loop runs, which a fresh OpenCode takes its time to start (20-30 s
          // seen on 2 busy cores).
          (screen) =>
            /Pruned: 1 call/.test(sidebarOf(screen)) && screen.includes("Done.") && !screen.includes("esc interrupt")
        )
      )
      await ui.save("tui-panel")
      assert.match(panel, /^Context pruning\n[\d,]+ tokens, \d+% of 200k\nPruned: 1 call, ~\d+ tokens$/m)
      const requests = model.main().length
      assert.strictEqual(requests, 3)

      // `/dcp` has one entry in the autocomplete, the server part's command: Enter completes it, Enter again sends
      // it, and the TUI part opens the dialog in place of the server's help.
      await ui.type("/dcp")
      const autocomplete = await ui.waitForScreen(
        "the autocomplete to list /dcp",
        (screen) => screen.includes("Context pruning: context, stats")
      )
      assert.lengthOf(autocomplete.split("\n").filter((line) => /┃ \/dcp {2,}/.test(line)), 1)
      await ui.press("Enter")
      await ui.waitForScreen("/dcp completed in the prompt", (screen) => !screen.includes("Context pruning: context"))
      await ui.press("Enter")
      const dialog = await ui.waitForScreen(
        "the /dcp dialog",
        (screen) => screen.includes("Sweep and restore") && /In effect +1 call/.test(screen)
      )
      await ui.save("tui-dialog")
      assert.match(dialog, /Context: [\d,]+ tokens, \d+% of a 200k window/)
      assert.match(dialog, /Pruned +█*░+ +\d+% +~\d+/)
      assert.match(dialog, /\d+ {2}read src\/a\.ts (duplicate|repeat) +~\d+/)
      assert.notInclude(dialog, "Context pruning commands:")

      // The second choice is "Restore all": it runs the server part's /dcp restore, whose note ends in the conversation.
      await ui.press("Down", "Enter")
      const restored = await ui.waitForScreen(
        "the restore to show in the panel and the dialog",
        (screen) => sidebarOf(screen).includes("Pruned: nothing yet") && /In effect +0 calls/.test(screen)
      )
      await ui.save("tui-restored")
      assert.include(restored, "Restored the 1 pruned call")
      assert.strictEqual(model.main().length, requests)

      await ui.press("Escape")
      await ui.waitForScreen("the dialog to close", (screen) => !screen.includes("Sweep and restore"))
      assert.strictEqual(model.main().length, requests)
    }
  )
})
