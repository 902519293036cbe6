import type { TuiPluginApi } from "@opencode-ai/plugin/tui"

type Session = TuiPluginApi["client"]["session"]

/**
 * `/dcp` alone in the terminal UI opens the dialog, with one `/dcp` entry in the prompt's autocomplete.
 *
 * OpenCode 1.18's autocomplete lists every command the server registered, and a TUI plugin's slash command beside it:
 * registered in both parts, `/dcp` showed twice, and a server command cannot be hidden from that list (only skills
 * are). So the TUI part registers no slash command. The prompt sends the server's `/dcp` through the SDK client it
 * shares with plugins (`api.client`); the bare form (no arguments) is taken over there and opens the dialog, with no
 * note and no model turn, and everything else goes to the server as before: `/dcp sweep`, the dialog's own sweep and
 * restore, `opencode run --command dcp`. Should a later OpenCode send commands through another client, bare `/dcp`
 * reaches the server again, which answers with its help: nothing breaks. Returns what undoes it.
 */
export const openDialogOnBareCommand = (api: TuiPluginApi, open: (sessionID: string) => void): () => void => {
  const session: Session = api.client.session
  const original = session.command
  if (typeof original !== "function") return () => undefined
  const replacement = function(this: Session, ...args: Parameters<Session["command"]>) {
    const [parameters] = args
    if (parameters?.command === "dcp" && (parameters.arguments ?? "").trim() === "") {
      try {
        open(parameters.sessionID)
        // What a command the server answered without data returns; the prompt does not read it.
        return Promise.resolve({ data: undefined, error: undefined })
      } catch {
        // The dialog could not open: the server answers instead.
      }
    }
    return original.apply(this, args)
  } as Session["command"]
  session.command = replacement
  return () => {
    if (session.command === replacement) session.command = original
  }
}
