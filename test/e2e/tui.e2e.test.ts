import { mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { call, done, sourceFile } from "./support/fixtures.ts"
import { type ModelServer, startModelServer } from "./support/model-server.ts"
import { prepareWorld } from "./support/opencode.ts"
import { resultOf } from "./support/requests.ts"
import { switched } from "./support/scenario.ts"
import { configTemplate } from "./support/template.ts"
import { cellsOf, highlightedRows, sidebarOf, startTui, type Tui } from "./support/tui.ts"
import { waitFor } from "./support/wait.ts"

const repo = new URL("../../", import.meta.url).pathname.replace(/\/$/, "")

/** Prunes applied at once, so that a short script shows them; the scripts read files twice, so repeats are off. */
const baseConfig = {
  cache: { mode: "immediate" },
  strategies: { repeats: { enabled: false } }
}

/**
 * Masking takes every output but the newest at once, and a turn is old (and folds) once two newer ones follow it: a
 * short script shows a fold. The bash call's output, too small to be worth a placeholder, is one only its fold takes
 * out.
 */
const foldConfig = {
  ...baseConfig,
  strategies: {
    ...baseConfig.strategies,
    staleOutputs: { trigger: 0, keepRecent: 1, keepFiles: 0, clearAtLeast: 0 }
  }
}

/**
 * The real terminal UI with both parts of the plugin from this checkout, the way the README tells a user to load a
 * local checkout (`file://` in opencode.json and in tui.json), and prunes applied at once (project config), so a
 * duplicate read is pruned within the run. One terminal UI for the tests, each in a session of its own: starting
 * OpenCode's terminal UI costs most of a test.
 */
describe("the terminal UI", () => {
  let root = ""
  let model: ModelServer
  let tui: Tui | undefined
  let world: Awaited<ReturnType<typeof prepareWorld>>
  const path = (file: string) => join(world.project, file)
  // Under DCP_E2E_DISABLED=1 the plugin is switched off (`switched`): the assertions must then fail.
  const writeConfig = (settings: object) =>
    writeFile(path(".opencode/dcp.jsonc"), JSON.stringify(switched(settings), null, 2))

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "dcp-e2e-tui-"))
    model = await startModelServer()
    world = await prepareWorld({
      root,
      plugin: `file://${repo}`,
      modelUrl: model.url,
      configTemplate: await configTemplate(),
      projectFiles: {
        ...Object.fromEntries(["a", "b", "c", "d"].map((name) => [`src/${name}.ts`, sourceFile(name)])),
        ".opencode/tui.json": JSON.stringify({ plugin: [`file://${repo}`] }),
        ".opencode/dcp.jsonc": JSON.stringify(switched(baseConfig))
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
        (screen) => screen.includes("Sweep and restore") && /Pruned +1 call/.test(screen)
      )
      await ui.save("tui-dialog")
      assert.match(dialog, /Context: [\d,]+ tokens, \d+% of a 200k window/)
      assert.match(dialog, /Pruned +█*░+ +\d+% +~\d+/)
      assert.match(dialog, /\d+ {2}read src\/a\.ts (duplicate|repeat) +~\d+/)
      assert.notInclude(dialog, "Context pruning commands:")

      // The second choice is "Restore all": it runs the server part's /dcp restore, whose note ends in the conversation.
      await ui.press("Down", "Enter")
      await ui.waitForScreen(
        "the restore to show in the panel and the dialog",
        (screen) => sidebarOf(screen).includes("Pruned: none now (restored)") && /Pruned +none now/.test(screen)
      )
      await ui.save("tui-restored")
      assert.strictEqual(model.main().length, requests)

      // The open dialog covers the right of the conversation, and the toast that repeats the note is gone after a few
      // seconds (sooner than a busy machine draws the dialog, seen in CI): the whole note is read once it closes.
      await ui.press("Escape")
      await ui.waitForScreen(
        "the dialog to close on the restore's note",
        (screen) => !screen.includes("Sweep and restore") && flat(screen).includes("Restored the 1 pruned call")
      )
      assert.strictEqual(model.main().length, requests)
    }
  )

  /** Runs `/dcp <args>` typed in full and returns its note, once it is on screen (`note` matches it). */
  const command = async (ui: Tui, args: string, note: RegExp): Promise<string> => {
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
      return newest !== before && note.test(flat(newest))
    })
    return flat(lastNote(screen))
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

  it(
    "every figure is the same everywhere, at 160 and 80 columns, through a fold, restores, a sweep, a config problem and a restart",
    async () => {
      let ui = tui!
      await newSession(ui)
      await writeConfig(foldConfig)
      model.script([
        ...["a", "b", "c"].map((name, i) => call("read", { filePath: path(`src/${name}.ts`) }, `fig_${i + 1}`)),
        call("bash", { command: "echo ok", description: "Say ok" }, "fig_4"),
        done
      ])
      await prompt(ui, "read a, b and c, then echo ok")
      model.script([call("read", { filePath: path("src/d.ts") }, "fig_5"), done])
      await prompt(ui, "now read d.ts")
      model.script([done])
      await prompt(ui, "what did you find?")

      // The first turn folds: calls 1-3 were masked as stale output, 4 (too small to mask) goes with its fold alone.
      const foldNote = flat(lastNote(
        await ui.waitForScreen("the note of the fold", (screen) => flat(lastNote(screen)).includes("old turn folded"))
      ))
      await ui.save("figures-fold-note")
      assert.match(foldNote, /from 1 call \(1 folded\), 1 old turn folded;/)
      assert.match(foldNote, / 4 bash echo ok folded, ~\d+ old turn folded: 1-4 sent as one digest/)
      let shown = await agree(ui, { step: "fold", calls: 4, folds: [1, 4], profile: "openai" })
      assert.deepStrictEqual(shown.listed, ["4", "3", "2", "1"])
      assert.match(shown.rows.find((row) => row.startsWith("4 "))!, /^4 {2}bash echo ok folded +~\d+$/)
      const foldOnly = /^4 {2}bash echo ok folded +(~\d+)$/.exec(shown.rows[0]!)![1]!
      await ui.save("figures-fold-dialog")

      // Restoring the call only the fold took: the choice for it in the dialog, then Enter.
      await openDialog(ui)
      await moveTo(ui, /^4 {2}bash echo ok/)
      await ui.press("Enter")
      // The dialog follows the status at once; its note is read once the dialog is closed.
      await ui.waitForScreen("the dialog to show the restore", (screen) => /Pruned +3 calls/.test(screen))
      await closeDialog(ui)
      const restoredOne = await ui.waitForScreen(
        "the note of the restore of call 4",
        (screen) => flat(lastNote(screen)).startsWith("DCP · Restored id 4")
      )
      await ui.save("figures-restore-fold-only")
      assert.match(
        flat(lastNote(restoredOne)),
        new RegExp(
          `^DCP · Restored id 4 \\(${foldOnly} tokens of its own\\) and unfolded its old turn \\(1-4\\): ~\\d+ tokens are sent to the model again from the next request on; 1-3 stay pruned\\.`
        )
      )
      shown = await agree(ui, { step: "restored-4", calls: 3, folds: undefined, profile: "openai" })
      assert.deepStrictEqual(shown.listed, ["3", "2", "1"])

      const swept = await command(ui, "sweep 2", /^DCP · Swept/)
      await ui.save("figures-swept")
      assert.match(swept, /^DCP · Swept 2 calls, the 2 newest not already pruned, protected or empty \(4, 5\): /)
      shown = await agree(ui, { step: "swept", calls: 5, folds: undefined, profile: "openai" })
      assert.deepStrictEqual(shown.listed, ["5", "4", "3", "2", "1"])
      model.script([done])
      await prompt(ui, "thanks")
      const afterSweep = model.main().at(-1)!
      for (const callID of ["fig_1", "fig_2", "fig_3", "fig_5"]) {
        assert.notInclude(resultOf(afterSweep, callID) ?? "", "line 59", `${callID} pruned in the next request`)
      }

      // Restore all, from the dialog: nothing is pruned now, which is not "nothing yet".
      await openDialog(ui)
      await moveTo(ui, /^Restore all/)
      await ui.press("Enter")
      await ui.waitForScreen("the dialog to show the restore", (screen) => /Pruned +none now/.test(screen))
      await closeDialog(ui)
      await ui.waitForScreen("the note of the restore", (screen) => flat(lastNote(screen)).includes("Restored all 5"))
      shown = await agree(ui, { step: "restored-all", calls: 0, folds: undefined, profile: "openai" })
      assert.deepStrictEqual(shown.listed, [])
      await ui.save("figures-restored")

      // A config problem: told in a toast once, and named in the panel, the dialog, /dcp stats and /dcp context.
      await writeConfig({ ...foldConfig, strategies: { ...foldConfig.strategies, nonsense: true } })
      model.script([done])
      await prompt(ui, "anything new?")
      await agree(ui, { step: "config-problem", calls: 0, folds: undefined, profile: "openai", problem: true })
      await ui.save("figures-config-problem")

      // OpenCode starts again: the session's first request is priced under its model, as before (no Anthropic guess).
      await ui.stop()
      tui = ui = await startTui({
        name: "figures-continued",
        env: world.env,
        project: world.project,
        args: ["--continue"],
        // A continued session opens on its conversation (its end: the notes), with the panel, not on the empty prompt.
        ready: (screen) => sidebarOf(screen).includes("Context pruning") && screen.includes("This session:")
      })
      // A file read twice: the first read is a duplicate, pruned in the request after the second.
      const before = model.main().length
      model.script([
        call("read", { filePath: path("src/b.ts") }, "fig_6"),
        call("read", { filePath: path("src/b.ts") }, "fig_7"),
        done
      ])
      await prompt(ui, "read b.ts twice")
      assert.strictEqual(model.main().length - before, 3)
      await agree(ui, { step: "continued", calls: 1, folds: undefined, profile: "openai", problem: true })
      await ui.save("figures-continued")

      // Fixed, the problem is gone everywhere.
      await writeConfig(foldConfig)
      model.script([done])
      await prompt(ui, "and now?")
      await agree(ui, { step: "fixed", calls: 1, folds: undefined, profile: "openai" })
      await ui.save("figures-fixed")
      const next = model.main().at(-1)!
      for (const callID of ["fig_1", "fig_2", "fig_3", "fig_5"]) {
        assert.include(resultOf(next, callID) ?? "", "line 59", `${callID} whole again in the next request`)
      }
      assert.strictEqual(resultOf(next, "fig_4")?.trim(), "ok", "the call only its fold took out, whole again")
    },
    900_000
  )

  /** What `agree` expects every surface to say. */
  interface Expected {
    /** Names the screens saved at this step. */
    readonly step: string
    /** Calls in effect (0: none now, after a restore). */
    readonly calls: number
    /** Old turns folded and the calls their digests stand for. */
    readonly folds: readonly [number, number] | undefined
    /** The pricing the cost effect follows. */
    readonly profile: string
    /** A config problem is to be named. */
    readonly problem?: boolean
  }

  /**
   * The figures as the sidebar panel, the dialog (at 160 columns, then 80), `/dcp context` and `/dcp stats` show them,
   * once the panel shows `expected.calls`: each names the same calls in effect and tokens, the same folds, the same
   * pricing and net cost effect, and, when there is one, the config's problem. The dialog's choices are each reached
   * by keyboard at both widths, and nothing of the dialog is drawn outside its box. Returns the dialog's choices.
   */
  const agree = async (ui: Tui, expected: Expected) => {
    await ui.resize(160, 48)
    const inEffect = expected.calls === 0 ?
      "none now (restored)" :
      `${expected.calls} call${expected.calls === 1 ? "" : "s"}`
    // The panel follows the status file the server part writes after each request and command: it says what is
    // expected once it has read the latest.
    const folds = expected.folds === undefined
      ? undefined
      : `Folded: ${expected.folds[0]} turn${expected.folds[0] === 1 ? "" : "s"} (${expected.folds[1]} calls)`
    const screen = await ui.waitForScreen(
      `the panel to show ${inEffect} in effect${folds === undefined ? "" : `, ${folds}`}${
        expected.problem === true ? ", the config problem" : ""
      }`,
      (text) => {
        const shown = flat(sidebarOf(text))
        return shown.includes(`Pruned: ${inEffect}`) && (folds === undefined) === !shown.includes("Folded:") &&
          (folds === undefined || shown.includes(folds)) &&
          shown.includes("Config: 1 problem") === (expected.problem === true) && !text.includes("esc interrupt")
      }
    )
    const panel = flat(sidebarOf(screen))
    const figures = (text: string, pattern: RegExp) => {
      const match = pattern.exec(text)
      assert.isNotNull(match, `${pattern} in: ${text}`)
      return match!.slice(1)
    }
    const pruned = expected.calls === 0 ? [] : figures(panel, /Pruned: (\d+ calls?), (~[\d.]+k?) tokens/)
    const cost = figures(panel, /Cost: (~[\d.]+k? (?:saved|more)) \((\w[\w-]*)\)/)
    assert.strictEqual(cost[1], expected.profile)
    assert.strictEqual(panel.includes("Config: 1 problem, see /dcp"), expected.problem === true, panel)

    const wide = await dialogAt(ui, 160, 48, expected.step)
    const narrow = await dialogAt(ui, 80, 24, expected.step)
    for (const dialog of [wide, narrow]) {
      const head = dialog.text
      if (expected.calls === 0) assert.include(head, "Pruned none now (restored)")
      else assert.include(head, `Pruned ${pruned[0]}, ${pruned[1]} tokens out of every request`)
      assert.include(head, `Cost ${cost[0]} in input tokens (${expected.profile} pricing, estimated)`)
      assert.match(head, /^Context [\d,]+ tokens, \d+% of 200k/)
      assert.deepStrictEqual(dialog.listed, wide.listed, "the same calls to restore at 80 and 160 columns")
    }
    if (expected.folds !== undefined) {
      assert.include(
        wide.text,
        `Folded ${expected.folds[0]} old turn (${expected.folds[1]} of those calls sent as one digest)`
      )
    }
    assert.strictEqual(wide.text.includes("Config strategies.nonsense: unknown key"), expected.problem === true)

    // The notes at 160 columns, where the longest of them fits the screen whole.
    await ui.resize(160, 48)
    await ui.waitForScreen("the 160-column layout", (screen) => sidebarOf(screen).includes("Context pruning"))
    const context = await command(ui, "context", /^DCP · (?:\d+ config problem|Context: |Next request: )/)
    const stats = await command(ui, "stats", /^DCP · (?:\d+ config problem|This session: )/)
    if (expected.calls === 0) {
      assert.include(context, "Pruned: none now (restored)")
      assert.include(stats, "This session: none pruned now (restored).")
    } else {
      assert.include(context, `Pruned: ${pruned[0]}, ${pruned[1]} tokens out of every request (estimated)`)
      assert.include(stats, `This session: ${pruned[0]} pruned now, ${pruned[1]} tokens out of every request.`)
    }
    assert.include(context, `Cost: ${cost[0]} in input tokens (${expected.profile} pricing, estimated)`)
    assert.include(stats, `cost (${expected.profile} pricing,`)
    assert.include(stats, `net ${cost[0]}`.replace(/ more$/, " more than without pruning"))
    if (expected.folds !== undefined) {
      const folded = `${expected.folds[0]} old turn (${expected.folds[1]} of those calls sent as one digest), `
      const tokens = figures(wide.text, new RegExp(`Folded ${escaped(folded)}(~[\\d.]+k?) of those tokens`))[0]
      assert.include(context, `Folded: ${folded}${tokens} of those tokens`)
      assert.include(stats, `folded: ${folded}${tokens} of those tokens.`)
    } else {
      assert.notInclude(context, "Folded:")
      assert.notInclude(stats, "folded:")
    }
    for (const note of [context, stats]) {
      assert.strictEqual(note.includes("config problem in"), expected.problem === true, note)
      assert.strictEqual(note.includes("strategies.nonsense: unknown key"), expected.problem === true, note)
    }
    return wide
  }

  /**
   * Opens the dialog in a terminal `columns` x `rows`, walks its choices with Down, from the first to the first again,
   * and returns what it shows: its lines as one text, each choice's row, and the IDs of the calls it offers to
   * restore. Every choice is highlighted in turn and on screen, and every row outside the dialog's box is as it was.
   */
  const dialogAt = async (ui: Tui, columns: number, rows: number, step: string) => {
    await ui.resize(columns, rows)
    await ui.waitForScreen(
      `the ${columns}x${rows} layout`,
      (screen) =>
        screen.split("\n").length >= rows && screen.split("\n").every((line) => [...line].length <= columns) &&
        (columns < 121 || sidebarOf(screen).includes("Context pruning"))
    )
    const opened = await openDialog(ui)
    await ui.save(`figures-${step}-dialog-${columns}x${rows}`)
    const { left, width } = boxOf(columns)
    const lines = opened.split("\n")
    const inBox = (line: string) => [...line].slice(left, left + width).join("")
    const title = lines.findIndex((line, row) =>
      row >= Math.floor(rows / 4) && inBox(line).trim() === "Context pruning"
    )
    const list = lines.findIndex((line) => inBox(line).trim().startsWith("Sweep and restore"))
    assert.isAbove(title, 0, "the dialog's title on screen")
    assert.isAbove(list, title, "the dialog's choices below its lines")
    // The lines as text: within the box's padding (4 columns each side), less the column of their scrollbar.
    const text = flat(
      lines.slice(title + 1, list).map((line) => [...line].slice(left + 4, left + width - 5).join(""))
        .join("\n")
    )
    // The dialog's box ends on screen, below its last choice: its bottom rows, drawn on the box's own background,
    // hold nothing (the dialog's padding). A dialog taller than the terminal ends in a choice at the screen's foot.
    const box = boxRows(await ui.coloredScreen(), left, title)
    assert.isAtMost(box.bottom, rows - 1)
    assert.strictEqual(
      lines[box.bottom]?.slice(left, left + width).trim() ?? "",
      "",
      "the box's last row is its padding"
    )
    assert.isBelow(lines.findLastIndex((line) => /^\s*(Sweep |Restore all|\d+ {2}\S)/.test(inBox(line))), box.bottom)
    // Down from the first choice through every other and back: each is highlighted in turn, on screen.
    const seen: Array<string> = []
    for (;;) {
      const row = await choice(ui, columns, (now) => seen.length === 0 || !now.startsWith(nameOf(seen.at(-1)!)))
      if (seen.some((earlier) => nameOf(earlier) === nameOf(row))) break
      seen.push(row)
      if (!opened.includes("Restore all")) break
      assert.isBelow(seen.length, 40, "the walk through the choices comes back to the first")
      await ui.press("Down")
    }
    // Up from the first choice: the last, on screen.
    if (seen.length > 1) {
      await ui.press("Up")
      assert.strictEqual(nameOf(await choice(ui, columns, (row) => !row.startsWith("Sweep"))), nameOf(seen.at(-1)!))
      await ui.save(`figures-${step}-dialog-${columns}x${rows}-up`)
    }
    await closeDialog(ui)
    assert.match(seen[0]!, /^Sweep /)
    const calls = seen.filter((row) => /^\d/.test(row))
    return { text, listed: calls.map((row) => row.split(/\s+/)[0]!), rows: calls }
  }
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

const closeDialog = async (ui: Tui) => {
  await ui.press("Escape")
  await ui.waitForScreen("the dialog to close", (screen) => !screen.includes("Sweep and restore"))
}

/** The box of OpenCode's large dialog in a terminal `columns` wide: 88 columns, or the terminal less 2, centred. */
const boxOf = (columns: number) => {
  const width = Math.min(88, columns - 2)
  return { left: Math.floor((columns - width) / 2), width }
}

/**
 * The rows of the dialog's box on a coloured screen: from its title row down, as long as the box's first column has
 * the background it has on the title row (the dialog's panel; around it, the screen under the dialog, dimmed).
 */
const boxRows = (colored: string, left: number, title: number): { readonly bottom: number } => {
  const backgrounds = colored.split("\n").map((line) => cellsOf(line)[left]?.background)
  const panel = backgrounds[title]
  let bottom = title
  while (bottom + 1 < backgrounds.length && backgrounds[bottom + 1] === panel) bottom++
  return { bottom }
}

/**
 * The dialog's highlighted choice, as its row reads, once exactly one is on screen and `ready` (the highlight moved):
 * a choice highlighted off screen, or none, is waited for in vain.
 */
const choice = (ui: Tui, columns: number, ready: (row: string) => boolean = () => true): Promise<string> => {
  const { left, width } = boxOf(columns)
  return waitFor("one highlighted choice on screen", async () => {
    const rows = highlightedRows(await ui.coloredScreen(), /(?<= )(?:Sweep |Restore all|\d+ {2}\S)/, left, width)
    const row = rows.length === 1 ? rows[0]!.replace(/\s{2,}(?=~)/, " ") : undefined
    return row !== undefined && ready(row) ? row : undefined
  }, 100)
}

/** What tells one choice from another: its title (`Sweep`, `Restore all`, `4  bash echo ok`). */
const nameOf = (row: string): string => /^(Sweep|Restore all|\d+ {2}\S+(?: \S+)?)/.exec(row)?.[1] ?? row

/** Moves the dialog's highlight down to the choice whose row matches `row` (the terminal 160 columns wide). */
const moveTo = async (ui: Tui, row: RegExp) => {
  let now = await choice(ui, 160)
  for (let step = 0; step < 40 && !row.test(now); step++) {
    const from = nameOf(now)
    await ui.press("Down")
    now = await choice(ui, 160, (next) => nameOf(next) !== from)
  }
  if (!row.test(now)) throw new Error(`no choice matching ${row} in the dialog`)
}

/** A note or a screen's text as one line of words. */
const flat = (text: string): string => text.replace(/\s+/g, " ").trim()

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** The newest note of the plugin on screen, from its `DCP · ` on, with the conversation's frame taken off. */
const lastNote = (screen: string): string => {
  const at = screen.lastIndexOf("DCP · ")
  if (at < 0) return ""
  const lines = screen.slice(at).split("\n")
  const end = lines.findIndex((line, i) => i > 0 && !/^\s*┃/.test(line))
  return lines.slice(0, end < 0 ? undefined : end).map((line) => line.replace(/^\s*┃\s?/, "").slice(0, 100).trimEnd())
    .join("\n")
}

/** Starts a new session from the prompt (`/new`, a command of the terminal UI itself) and waits for its empty prompt. */
const newSession = async (ui: Tui) => {
  await ui.type("/new")
  await ui.waitForScreen("the autocomplete to list /new", (screen) => /┃ \/new +New session/.test(screen))
  await ui.press("Enter")
  await ui.waitForScreen("the new session's prompt", (screen) => screen.includes("Ask anything"))
}
