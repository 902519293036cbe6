/// <reference types="bun-types" />
// Bundles the plugin into dist/ with Bun (the runtime OpenCode loads plugins in), and the offline analyser for Node.
// One bundle keeps start-up fast: importing Effect unbundled costs 0.35-1.2 s, bundled 30-50 ms.
// `splitting` keeps the lazily imported tokenizer in its own chunk so it loads on first use only, and lets the two
// parts of the plugin (server and terminal UI) share one copy of what both use.
// dist/ is all a user installs: every bundle imports only Node built-ins, plus, in the terminal UI part, the two
// modules OpenCode's UI hands its plugins (`hostModules`), so the package has no run-time dependencies.
import { rm } from "node:fs/promises"
import { jsoncEsm } from "./jsonc-esm.ts"

const outdir = new URL("../dist/", import.meta.url).pathname
await rm(outdir, { recursive: true, force: true })

/**
 * OpenCode's terminal UI resolves these for every TUI plugin to its own instances (a second copy of Solid would
 * render nothing): they must stay imports. See src/tui/host.d.ts.
 */
const hostModules = ["solid-js", "@opentui/solid/jsx-runtime"]

const build = async (entries: ReadonlyArray<string>, target: "bun" | "node") => {
  const result = await Bun.build({
    entrypoints: entries.map((entry) => new URL(entry, import.meta.url).pathname),
    outdir,
    target,
    plugins: target === "node" ? [jsoncEsm] : [],
    external: target === "bun" ? hostModules : [],
    format: "esm",
    splitting: true,
    minify: { syntax: true, whitespace: true, identifiers: false },
    // No source maps: they would more than double what users install, for stack traces only we read.
    sourcemap: "none",
    naming: { entry: "[name].js", chunk: "chunk-[hash].js" }
  })
  if (!result.success) {
    for (const log of result.logs) console.error(log)
    process.exit(1)
  }
  for (const output of result.outputs) {
    if (target === "bun") await spaceHostImports(output.path)
    console.log(`${output.path.slice(outdir.length)}  ${(output.size / 1024).toFixed(0)} KiB`)
  }
}

/**
 * OpenCode 1.18 hands `hostModules` to a TUI plugin by rewriting the plugin's import statements as text, with a
 * pattern that wants whitespace after `from`; minified, Bun writes `from"solid-js"`, which it would not see, and
 * the import would then fail to resolve. So those imports get their space back.
 */
const spaceHostImports = async (file: string) => {
  const names = hostModules.map((name) => name.replace(/[/.]/g, "\\$&")).join("|")
  const text = await Bun.file(file).text()
  const spaced = text.replace(new RegExp(`\\bfrom"(${names})"`, "g"), 'from "$1"')
  if (spaced !== text) await Bun.write(file, spaced)
}

// The plugin's server and terminal UI parts, for OpenCode's Bun.
await build(["../src/plugin.ts", "../src/tui.ts"], "bun")
// The offline analyser (`bin` dcp-analyse), for whatever Node runs `npx`: bundled, it runs on Node 20 as well.
await build(["../src/analyse.ts"], "node")
