import type { TuiPluginApi, TuiThemeCurrent } from "@opencode-ai/plugin/tui"
import { jsx } from "@opentui/solid/jsx-runtime"
import { createMemo } from "solid-js"
import type { Board } from "./board.ts"
import {
  type Action,
  dialogLineRows,
  dialogModel,
  type DialogModel,
  dialogWidth,
  type Line,
  panelLines,
  reportedContext,
  type Situation,
  type Tone
} from "./render.ts"

/**
 * Puts the panel and the dialog of src/tui/render.ts on screen, with OpenCode's own OpenTUI and Solid. `version`
 * moves whenever the board read something new, which is what makes the views follow the status files. Whatever
 * fails here is caught and shown as a line: the panel and the dialog are never worth an error in the UI.
 */

const colorOf = (theme: TuiThemeCurrent, tone: Tone) =>
  tone === "muted" ? theme.textMuted : tone === "warning" ? theme.warning : theme.text

/** One line of text; an empty line keeps its height. */
const textLine = (theme: TuiThemeCurrent, entry: Line) =>
  jsx("text", {
    fg: colorOf(theme, entry.tone),
    children: entry.tone === "title" ? jsx("b", { children: entry.text }) : entry.text === "" ? " " : entry.text
  })

const guarded = <A>(compute: () => A, fallback: (error: unknown) => A): A => {
  try {
    return compute()
  } catch (error) {
    return fallback(error)
  }
}

const failure = (error: unknown): Line => ({
  text: `Context pruning: ${error instanceof Error ? error.message : String(error)}`,
  tone: "warning"
})

/** The terminal's width, which sets the dialog's (OpenTUI's renderer; 160 should a host not say). */
const terminalColumns = (api: TuiPluginApi): number => {
  const width = (api.renderer as { readonly width?: unknown } | undefined)?.width
  return typeof width === "number" && width > 0 ? width : 160
}

/** The terminal's height, which sets how many of the dialog's lines fit (48 should a host not say). */
const terminalRows = (api: TuiPluginApi): number => {
  const height = (api.renderer as { readonly height?: unknown } | undefined)?.height
  return typeof height === "number" && height > 0 ? height : 48
}

/**
 * Rings once at the earliest time it is set for: a view that shows something until a time (the waiting prunes' reason,
 * until the prompt cache goes cold) is drawn again then, with nothing written to any file to say so.
 */
export interface Alarm {
  readonly set: (at: number) => void
  readonly stop: () => void
}

export const createAlarm = (ring: () => void, now: () => number = Date.now): Alarm => {
  let timer: ReturnType<typeof setTimeout> | undefined
  let due: number | undefined
  const stop = () => {
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    due = undefined
  }
  return {
    set: (at) => {
      const wait = at - now()
      if (wait <= 0 || (due !== undefined && due <= at)) return
      stop()
      due = at
      timer = setTimeout(() => {
        timer = undefined
        due = undefined
        ring()
      }, wait) // The UI exits whether or not the alarm is still set.
      ;(timer as { unref?: () => void }).unref?.()
    },
    stop
  }
}

/** Sets the alarm for when the session's waiting prunes' reason expires, if it has not yet. */
const alarmFor = (alarm: Alarm, loaded: ReturnType<Board["get"]>) => {
  const at = loaded?._tag === "ok" ? loaded.status.pending?.expiresAt : undefined
  // A little after: the view is drawn again once the reason has expired, not just before.
  if (at !== undefined) alarm.set(at + 100)
}

/** Calls `changed` whenever the terminal is resized, so the views fit the new width; returns what stops it. */
export const onResize = (api: TuiPluginApi, changed: () => void): () => void => {
  const renderer = api.renderer as
    | { on?: (event: string, listener: () => void) => unknown; off?: (event: string, listener: () => void) => unknown }
    | undefined
  if (typeof renderer?.on !== "function") return () => undefined
  renderer.on("resize", changed)
  return () => void renderer.off?.("resize", changed)
}

const situationOf = (api: TuiPluginApi, sessionID: string): Situation => ({
  subAgent: api.state.session.get(sessionID)?.parentID !== undefined,
  reported: reportedContext(api.state.session.messages(sessionID)),
  now: Date.now()
})

/** The sidebar panel for the session shown, below OpenCode's own context figures. */
export const registerPanel = (api: TuiPluginApi, board: Board, version: () => number, alarm: Alarm) =>
  api.slots.register({
    order: 150,
    slots: {
      sidebar_content(context: { theme: { current: TuiThemeCurrent } }, props: { session_id: string }) {
        const lines = () => {
          version()
          return guarded(() => {
            const loaded = board.get(props.session_id)
            alarmFor(alarm, loaded)
            return panelLines(loaded, situationOf(api, props.session_id))
          }, (error) => [failure(error)])
        }
        return jsx("box", { children: () => lines().map((entry) => textLine(context.theme.current, entry)) })
      }
    }
  })

/** The agent and model of the session's newest user message, so a command runs as the user's turn would. */
const originOf = (api: TuiPluginApi, sessionID: string): { agent?: string; model?: string } => {
  const messages = api.state.session.messages(sessionID)
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i]!
    if (message.role !== "user") continue
    return { agent: message.agent, model: `${message.model.providerID}/${message.model.modelID}` }
  }
  return {}
}

/** The text of the note the server part stored for a command, which its HTTP answer carries. */
const replyOf = (data: unknown): string | undefined => {
  const parts = (data as { parts?: ReadonlyArray<{ text?: unknown }> } | undefined)?.parts
  const text = parts?.map((part) => (typeof part.text === "string" ? part.text : "")).join("\n").trim()
  return text === undefined || text === "" ? undefined : text
}

const describeError = (error: unknown): string => {
  if (typeof error === "string") return error
  if (error instanceof Error) return error.message
  const data = error as { data?: { message?: unknown }; name?: unknown } | undefined
  if (typeof data?.data?.message === "string") return data.data.message
  return typeof data?.name === "string" ? data.name : "the server did not run it"
}

/**
 * `/dcp` in the terminal UI: the dialog opens here, in the TUI process, and sends nothing to the model. Sweep and
 * restore are the server part's `/dcp` subcommands (its state is in that process), which answer without a model turn.
 */
export const openDialog = (
  api: TuiPluginApi,
  board: Board,
  version: () => number,
  alarm: Alarm,
  sessionID: string | undefined
) => {
  if (sessionID === undefined) {
    api.ui.toast({
      variant: "info",
      title: "Context pruning",
      message: "Open a session first: /dcp shows its context."
    })
    return
  }
  void board.refresh(sessionID)
  let busy = false
  const run = async (action: Action) => {
    if (busy) return
    busy = true
    try {
      const result = await api.client.session.command({
        sessionID,
        command: "dcp",
        arguments: action.args,
        ...originOf(api, sessionID)
      })
      if (result.error !== undefined) {
        api.ui.toast({
          variant: "error",
          title: "Context pruning",
          message: `/dcp ${action.args} failed: ${describeError(result.error)}`
        })
      } else {
        api.ui.toast({
          variant: "success",
          title: "Context pruning",
          message: replyOf(result.data) ?? `/dcp ${action.args} is done; its note follows when the session is idle.`
        })
      }
    } catch (error) {
      api.ui.toast({
        variant: "error",
        title: "Context pruning",
        message: `/dcp ${action.args} failed: ${describeError(error)}`
      })
    } finally {
      busy = false
      void board.refresh(sessionID)
    }
  }
  api.ui.dialog.replace(() => {
    const model = createMemo((): DialogModel => {
      version()
      return guarded(
        () => {
          const loaded = board.get(sessionID)
          alarmFor(alarm, loaded)
          // A column less than the dialog's room: the lines' scrollbar takes one when they do not all fit.
          return dialogModel(loaded, situationOf(api, sessionID), dialogWidth(terminalColumns(api)) - 1)
        },
        (error) => ({
          lines: [failure(error)],
          actions: []
        })
      )
    })
    // As many of the lines as the terminal leaves room for above the choices: the rest scroll (the most needed come
    // first), so the dialog never reaches past the screen's bottom, where its list's highlighted row would be lost.
    const lineRows = () => {
      version()
      return guarded(() => dialogLineRows(terminalRows(api), model().actions), () => 1)
    }
    // The choices are a component of their own: rebuilt only when they appear or go, so a status update does not
    // reset the user's place in the list.
    const hasActions = createMemo(() => model().actions.length > 0)
    const byArgs = () => new Map(model().actions.map((action) => [action.args, action]))
    return jsx("box", {
      flexDirection: "column",
      children: [
        jsx("box", {
          paddingLeft: 4,
          paddingRight: 4,
          paddingBottom: 1,
          children: [
            jsx("box", {
              flexDirection: "row",
              justifyContent: "space-between",
              children: [
                jsx("text", { fg: api.theme.current.text, children: jsx("b", { children: "Context pruning" }) }),
                // The list of choices below says "esc" itself.
                () => (hasActions() ? null : jsx("text", { fg: api.theme.current.textMuted, children: "esc" }))
              ]
            }),
            jsx("scrollbox", {
              get maxHeight() {
                return lineRows()
              },
              get height() {
                return Math.min(lineRows(), model().lines.length)
              },
              children: () => model().lines.map((entry) => textLine(api.theme.current, entry))
            })
          ]
        }),
        () =>
          hasActions()
            ? jsx(api.ui.DialogSelect as (props: never) => unknown, {
              title: "Sweep and restore",
              placeholder: "Filter",
              get options() {
                return model().actions.map((action) => ({
                  title: action.title,
                  value: action.args,
                  description: action.description,
                  ...(action.footer === undefined ? {} : { footer: action.footer }),
                  category: action.category
                }))
              },
              onSelect: (option: { value: string }) => {
                const action = byArgs().get(option.value)
                if (action !== undefined) void run(action)
              }
            })
            : null
      ]
    })
  })
  api.ui.dialog.setSize("large")
}
