import type { Plugin } from "@opencode-ai/plugin"
import { Effect, ManagedRuntime } from "effect"
import { makeHooks } from "./hooks/index.ts"
import { layer } from "./layers/main.ts"
import { Config } from "./services/Config.ts"

/**
 * The OpenCode plugin. One runtime per plugin instance, built from the composed live layer; the layer cannot fail
 * on bad user input (config problems are reported, defaults used), so a failed build means a broken install, and
 * then the plugin registers nothing rather than taking OpenCode down with it.
 */
const ContextPruner: Plugin = async (input) => {
  const runtime = ManagedRuntime.make(layer(input))
  const enabled = await runtime.runPromise(Config.use((config) => Effect.succeed(config.current.enabled))).then(
    (value) => value,
    () => false
  )
  if (!enabled) {
    await runtime.dispose()
    return {}
  }
  return makeHooks(runtime)
}

export default ContextPruner
