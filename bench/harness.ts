/**
 * What the replay needs from the plugin, in one module: bundled with Bun (like dist/) for the measured runs, so
 * module loading and memory look like production; imported from source for profiles, so frames name src/ files.
 */
export { replayedPlugin } from "../src/simulator/plugin.ts"
export { Tokenizer } from "../src/services/Tokenizer.ts"
