import type { HostClient } from "../../src/services/Host.ts"

export interface FakeClient extends HostClient {
  readonly calls: Array<{ readonly method: string; readonly body: unknown }>
}

/**
 * A stand-in for OpenCode's SDK client as the plugin factory receives it. `mode: "throws"` makes every method
 * throw synchronously, `"rejects"` makes every promise reject: a host that is shutting down or broken.
 */
export const fakeClient = (
  options: { readonly mode?: "ok" | "throws" | "rejects"; readonly parents?: Readonly<Record<string, string>> } = {}
): FakeClient => {
  const calls: Array<{ method: string; body: unknown }> = []
  const respond = (method: string, body: unknown, data: unknown) => {
    calls.push({ method, body })
    if (options.mode === "throws") throw new Error(`${method} exploded`)
    if (options.mode === "rejects") return Promise.reject(new Error(`${method} failed`))
    return Promise.resolve({ data, error: undefined })
  }
  return {
    calls,
    session: {
      get: (request) =>
        respond("session.get", request, { id: request.path.id, parentID: options.parents?.[request.path.id] }),
      messages: (request) => respond("session.messages", request, []),
      prompt: (request) => respond("session.prompt", request, { info: { id: "msg_note", role: "user" }, parts: [] }),
      status: () => respond("session.status", undefined, {}),
      abort: (request) => respond("session.abort", request, true),
      delete: (request) => respond("session.delete", request, true),
      summarize: (request) => respond("session.summarize", request, true)
    },
    tui: { showToast: (request) => respond("tui.showToast", request, true) },
    app: { log: (request) => respond("app.log", request, true) }
  }
}
