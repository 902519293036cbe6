import type { TuiPlugin, TuiPluginModule } from "@opencode-ai/plugin/tui"
import { createSignal } from "solid-js"
import { openDialogOnBareCommand } from "./tui/bare.ts"
import { createBoard, statusDirectory } from "./tui/board.ts"
import { createAlarm, onResize, openDialog, registerPanel } from "./tui/view.ts"

/**
 * The terminal UI part: a sidebar panel for the session shown and a `/dcp` dialog, both fed by the status files the
 * server part (src/plugin.ts) writes. The two parts load separately and share nothing else, so either works
 * without the other; nothing here may throw into OpenCode's UI.
 */
const tui: TuiPlugin = async (api) => {
  try {
    const board = createBoard(statusDirectory())
    api.lifecycle.onDispose(() => board.close())
    const [version, setVersion] = createSignal(0)
    api.lifecycle.onDispose(board.subscribe(() => setVersion((value) => value + 1)))
    // The dialog's lines are laid out for the terminal's width.
    api.lifecycle.onDispose(onResize(api, () => setVersion((value) => value + 1)))
    // Watching the directory is the way updates arrive; the end of a run is a second chance where it reports nothing.
    api.lifecycle.onDispose(api.event.on("session.idle", (event) => void board.refresh(event.properties.sessionID)))
    // Drawn again when what the views show expires (the waiting prunes' reason, with the prompt cache).
    const alarm = createAlarm(() => setVersion((value) => value + 1))
    api.lifecycle.onDispose(alarm.stop)
    registerPanel(api, board, version, alarm)
    const currentSession = () => {
      const route = api.route.current
      return route.name === "session" && typeof route.params?.sessionID === "string"
        ? route.params.sessionID
        : undefined
    }
    // In the command palette; `/dcp` in the prompt opens it too (./tui/bare.ts), through the server's command.
    api.lifecycle.onDispose(api.keymap.registerLayer({
      commands: [{
        name: "dcp.dialog",
        title: "Context pruning",
        desc: "context breakdown, sweep and restore",
        category: "Session",
        namespace: "palette",
        run: () => openDialog(api, board, version, alarm, currentSession())
      }]
    }))
    api.lifecycle.onDispose(
      openDialogOnBareCommand(api, (sessionID) => openDialog(api, board, version, alarm, sessionID))
    )
  } catch (error) {
    try {
      api.ui.toast({
        variant: "warning",
        title: "Context pruning",
        message: `The terminal UI part could not start: ${error instanceof Error ? error.message : String(error)}`
      })
    } catch {
      // A host that cannot show a toast either: the server part works on without this one.
    }
  }
}

const plugin: TuiPluginModule & { id: string } = { id: "opencode-context-pruner", tui }

export default plugin
