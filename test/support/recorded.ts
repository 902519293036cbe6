import type { Msg } from "../../src/host/schema.ts"
import { profiles } from "../../src/pricing/profiles.ts"
import { drive, type DriveOptions } from "../../src/simulator/drive.ts"

/**
 * Builders of a stored OpenCode session for the simulator's tests: a user's text, an assistant message of the given
 * parts (Claude, a step each), a completed tool call; each message created a second after the one before.
 */
export const recordedSession = (sessionID: string) => {
  let clock = 1_000
  const user = (text: string): Msg => ({
    info: { id: `u${clock}`, sessionID, role: "user", time: { created: clock += 1_000 } },
    parts: [{ type: "text", text }]
  })
  const assistant = (...parts: Array<Msg["parts"][number]>): Msg => ({
    info: {
      id: `a${clock}`,
      sessionID,
      role: "assistant",
      time: { created: clock += 1_000 },
      providerID: "anthropic",
      modelID: "claude-sonnet-4-5"
    },
    parts: [{ type: "step-start" }, ...parts]
  })
  const call = (callID: string, tool: string, input: Record<string, unknown>, output: string) => ({
    type: "tool",
    callID,
    tool,
    state: { status: "completed", input, output, time: { start: clock, end: clock + 5 } }
  })
  /** The next message is created at `time`. */
  const startAt = (time: number) => {
    clock = time - 1_000
  }
  return { user, assistant, call, startAt }
}

/** The replay of a session on Claude's 200,000-token window, four characters a token, priced by Anthropic's rules. */
export const replayedOnClaude = (
  options: Pick<DriveOptions, "sessionID" | "messages" | "plugin"> & Partial<DriveOptions>
) =>
  drive({
    system: () => ["You are OpenCode."],
    hostTools: [],
    model: { providerID: "anthropic", modelID: "claude-sonnet-4-5", context: 200_000, output: 32_000 },
    profiles: [profiles.anthropic],
    count: (text) => Math.ceil(text.length / 4),
    ...options
  })
