/// <reference types="bun-types" />
// Bundles the plugin into dist/ with Bun (the runtime OpenCode loads plugins in).
// One bundle keeps start-up fast: importing Effect unbundled costs 0.35-1.2 s, bundled 30-50 ms.
// `splitting` keeps the lazily imported tokenizer in its own chunk so it loads on first use only.
import { rm } from "node:fs/promises"

const outdir = new URL("../dist/", import.meta.url).pathname
await rm(outdir, { recursive: true, force: true })

const result = await Bun.build({
  entrypoints: [new URL("../src/plugin.ts", import.meta.url).pathname],
  outdir,
  target: "bun",
  format: "esm",
  splitting: true,
  minify: { syntax: true, whitespace: true, identifiers: false },
  sourcemap: "linked",
  naming: { entry: "[name].js", chunk: "chunk-[hash].js" }
})

if (!result.success) {
  for (const log of result.logs) console.error(log)
  process.exit(1)
}
for (const output of result.outputs) {
  console.log(`${output.path.slice(outdir.length)}  ${(output.size / 1024).toFixed(0)} KiB`)
}
