import type { Hooks } from "@opencode-ai/plugin"
import { Cause, Effect, type ManagedRuntime } from "effect"
import type { Services } from "../layers/main.ts"
import { compacting, event, reportConfigProblems, userMessage } from "./session.ts"
import { transform } from "./transform.ts"

type Runtime = ManagedRuntime.ManagedRuntime<Services, never>

/**
 * Every hook runs as an Effect program on the plugin's one runtime. A failure inside is logged and the hook
 * returns normally: whatever goes wrong in the plugin, the user's chat goes on, with messages unmodified.
 */
export const makeHooks = (runtime: Runtime): Hooks => {
  const run = (name: string, program: Effect.Effect<unknown, unknown, Services>): Promise<void> =>
    runtime.runPromise(
      program.pipe(
        Effect.asVoid,
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.logError(`${name} failed`, cause)
        )
      )
    ).catch(() => undefined)

  return {
    "experimental.chat.messages.transform": (_input, output) =>
      run("messages.transform", reportConfigProblems.pipe(Effect.andThen(transform(output.messages)))),
    "chat.message": (input) =>
      run(
        "chat.message",
        userMessage(input.sessionID, { agent: input.agent, model: input.model, variant: input.variant })
      ),
    "experimental.session.compacting": (input) => run("session.compacting", compacting(input.sessionID)),
    event: (input) => run("event", event(input.event)),
    dispose: () => runtime.dispose()
  }
}
