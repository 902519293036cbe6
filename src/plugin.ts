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
  const config = await runtime.runPromise(Config.use((config) => Effect.succeed(config.current))).then(
    (value) => value,
    () => undefined
  )
  if (config === undefined || !config.enabled) {
    await runtime.dispose()
    return {}
  }
  return makeHooks(runtime, config)
}

export default ContextPruner
