/**
 * What the replay needs from the plugin, in one module: bundled with Bun (like dist/) for the measured runs, so
 * module loading and memory look like production; imported from source for profiles, so frames name src/ files.
 */
export { tool } from "@opencode-ai/plugin"
export { Clock, Effect, Layer, ManagedRuntime, Ref } from "effect"
export { makeHooks } from "../src/hooks/index.ts"
export { compose } from "../src/layers/main.ts"
export { Config } from "../src/services/Config.ts"
export { Host, HostRecorder } from "../src/services/Host.ts"
export { Paths } from "../src/services/Paths.ts"
export { SessionStore } from "../src/services/SessionStore.ts"
export { Tokenizer } from "../src/services/Tokenizer.ts"
