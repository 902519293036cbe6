import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { call, done, sourceFile } from "./support/fixtures.ts"
import { type ModelServer, startModelServer } from "./support/model-server.ts"
import { prepareWorld } from "./support/opencode.ts"
import { resultOf } from "./support/requests.ts"
import { switched } from "./support/scenario.ts"
import { configTemplate } from "./support/template.ts"
import { sidebarOf, startTui, type Tui } from "./support/tui.ts"

const repo = new URL("../../", import.meta.url).pathname.replace(/\/$/, "")

/**
 * The real terminal UI with both parts of the plugin from this checkout, the way the README tells a user to load a
 * local checkout (`file://` in opencode.json and in tui.json), and prunes applied at once (project config), so a
 * duplicate read is pruned within the run. One terminal UI for the tests, each in a session of its own: starting
 * OpenCode's terminal UI costs most of a test.
 *
 * Every figure the user sees is the same everywhere, right after each action: the sidebar panel, the `/dcp` dialog,
 * `/dcp context` and `/dcp stats` count the same prunes in effect, through a prompt, a sweep, a restore of all, and a
 * restart of OpenCode (`--continue`) followed by a sweep; and the next request the model gets carries what they say.
 */
describe("the terminal UI", () => {
  let root = ""
  let model: ModelServer
  let tui: Tui | undefined
  let world: Awaited<ReturnType<typeof prepareWorld>>
  const files = ["a", "b", "c"].map((name) => `src/${name}.ts`)
  const path = (file: string) => join(world.project, file)

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "dcp-e2e-tui-"))
    model = await startModelServer()
    world = await prepareWorld({
      root,
      plugin: `file://${repo}`,
      modelUrl: model.url,
      configTemplate: await configTemplate(),
      projectFiles: {
        "src/a.ts": sourceFile("alpha"),
        "src/b.ts": sourceFile("beta"),
        "src/c.ts": sourceFile("gamma"),
        ".opencode/tui.json": JSON.stringify({ plugin: [`file://${repo}`] }),
        ".opencode/dcp.jsonc": JSON.stringify(switched({
          cache: { mode: "immediate" },
          strategies: { repeats: { enabled: false } }
        }))
      }
    })
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
      const file = path("src/a.ts")
      const earlier = model.main().length
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
      assert.strictEqual(requests - earlier, 3)

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

  /**
   * Runs `/dcp <args>` typed in full and returns `note` matched in its note: the newest note on screen, once it is not
   * the one that was newest before (each command here follows a note of another kind or with other figures).
   */
  const command = async (ui: Tui, args: string, note: RegExp): Promise<RegExpExecArray> => {
    const before = lastNote(await ui.screen())
    await ui.type(`/dcp ${args}`)
    // Enter while the autocomplete still lists `/dcp` would pick that entry instead of sending what was typed.
    await ui.waitForScreen(
      `/dcp ${args} typed, the autocomplete closed`,
      (screen) => screen.includes(`/dcp ${args}`) && !screen.includes("Context pruning: context")
    )
    await ui.press("Enter")
    const screen = await ui.waitForScreen(`the note of /dcp ${args}`, (text) => {
      const newest = lastNote(text)
      return newest !== before && note.test(newest)
    })
    return note.exec(lastNote(screen))!
  }

  /** A prompt that runs the agent loop to its end: the model's last answer, `Done.`, shows after it. */
  const prompt = async (ui: Tui, text: string) => {
    await ui.type(text)
    await ui.press("Enter")
    return await ui.waitForScreen(
      `the answer to "${text}"`,
      (screen) =>
        screen.includes(text) && screen.lastIndexOf("Done.") > screen.lastIndexOf(text) &&
        !screen.includes("esc interrupt")
    )
  }

  /**
   * The prunes in effect as each surface says them, once the panel shows `calls` of them (it follows the status file
   * the server part writes right after each action): calls and tokens, as the user reads them.
   */
  const agree = async (ui: Tui, calls: number) => {
    const shown = calls === 0 ? /Pruned: nothing yet/ : new RegExp(`Pruned: ${calls} calls?, ~`)
    const screen = await ui.waitForScreen(
      `the panel to show ${calls} calls pruned`,
      (text) => shown.test(sidebarOf(text))
    )
    const panelMatch = /Pruned: (\d+) calls?, (~[\d.]+k?) tokens/.exec(sidebarOf(screen))
    const panel = panelMatch === null ? ["0", "~0"] : [panelMatch[1], panelMatch[2]]
    const context = await command(ui, "context", /Pruned: +(\d+) calls?, (~[\d.]+k?) tokens \(estimated\)/)
    const stats = await command(ui, "stats", /This session: (\d+) calls? pruned now, (~[\d.]+k?) tokens out of every/)
    assert.deepStrictEqual([context[1], context[2]], panel, "/dcp context against the panel")
    assert.deepStrictEqual([stats[1], stats[2]], panel, "/dcp stats against the panel")
  }

  it(
    "shows figures that agree with each other and with the next request after a prompt, a sweep, a restore and a restart",
    async () => {
      let ui = tui!
      await newSession(ui)
      model.script([
        ...files.map((file, i) => call("read", { filePath: path(file) }, `fig_${i + 1}`)),
        call("read", { filePath: path(files[0]!) }, "fig_4"),
        done
      ])
      await prompt(ui, "read the three files, and a.ts again")
      await agree(ui, 1)

      await command(ui, "sweep", /Swept \d+ calls? since your last message/)
      await agree(ui, 4)
      await ui.save("figures-swept")
      assert.notMatch(sidebarOf(await ui.screen()), /Pending: /)
      model.script([done])
      await prompt(ui, "thanks")
      const afterSweep = model.main().at(-1)!
      for (const callID of ["fig_1", "fig_2", "fig_3", "fig_4"]) {
        assert.notInclude(resultOf(afterSweep, callID) ?? "", "line 59", `${callID} pruned in the next request`)
      }

      await command(ui, "restore all", /Restored all \d+ pruned calls/)
      await agree(ui, 0)
      await ui.save("figures-restored")
      const dialog = await openDialog(ui)
      assert.match(dialog, /In effect +0 calls/)
      assert.match(dialog, /Pruned +░+ +0%/)
      await ui.press("Escape")
      await ui.waitForScreen("the dialog to close", (screen) => !screen.includes("Sweep and restore"))
      model.script([done])
      await prompt(ui, "and now?")
      const afterRestore = model.main().at(-1)!
      for (const callID of ["fig_1", "fig_2", "fig_3", "fig_4"]) {
        assert.include(resultOf(afterRestore, callID) ?? "", "line 59", `${callID} whole again in the next request`)
      }

      await ui.stop()
      tui = ui = await startTui({
        name: "figures-continued",
        env: world.env,
        project: world.project,
        args: ["--continue"],
        // A continued session opens on its conversation, not on the empty prompt.
        ready: (screen) => screen.includes("and now?")
      })
      await command(ui, "sweep 2", /Swept 2 calls among the last 2/)
      await agree(ui, 2)
      await ui.save("figures-continued")
      const resumed = await openDialog(ui)
      assert.match(resumed, /In effect +2 calls/)
      assert.notInclude(resumed, "No request of this session seen yet")
    },
    600_000
  )
})

/** Opens the `/dcp` dialog (Enter completes `/dcp` in the prompt, Enter again sends it) and returns its screen. */
const openDialog = async (ui: Tui): Promise<string> => {
  await ui.type("/dcp")
  await ui.waitForScreen("the autocomplete to list /dcp", (screen) => screen.includes("Context pruning: context"))
  await ui.press("Enter")
  await ui.waitForScreen("/dcp completed in the prompt", (screen) => !screen.includes("Context pruning: context"))
  await ui.press("Enter")
  return await ui.waitForScreen("the /dcp dialog", (screen) => screen.includes("Sweep and restore"))
}

/** The newest note of the plugin on screen, from its `DCP · ` on, with the conversation's frame taken off. */
const lastNote = (screen: string): string => {
  const at = screen.lastIndexOf("DCP · ")
  if (at < 0) return ""
  return screen.slice(at).split("\n").map((line) => line.replace(/^\s*┃\s?/, "").slice(0, 100).trimEnd()).join("\n")
}

/** Starts a new session from the prompt (`/new`, a command of the terminal UI itself) and waits for its empty prompt. */
const newSession = async (ui: Tui) => {
  await ui.type("/new")
  await ui.waitForScreen("the autocomplete to list /new", (screen) => /┃ \/new +New session/.test(screen))
  await ui.press("Enter")
  await ui.waitForScreen("the new session's prompt", (screen) => screen.includes("Ask anything"))
}
