/// <reference types="bun-types" />
// `bun test/support/bundle-children.ts <outdir> <script.ts>...`: bundles scripts that tests run as child processes
// under Node, one `<name>.js` each in `outdir`, as scripts/build.ts bundles the analyser.
import { jsoncEsm } from "../../scripts/jsonc-esm.ts"

const [outdir, ...entrypoints] = process.argv.slice(2)
if (outdir === undefined || entrypoints.length === 0)
  throw new Error("usage: bundle-children.ts <outdir> <script.ts>...")
const result = await Bun.build({
  entrypoints,
  outdir,
  target: "node",
  plugins: [jsoncEsm],
  format: "esm",
  splitting: true,
  naming: { entry: "[name].js", chunk: "chunk-[hash].js" }
})
if (!result.success) {
  for (const log of result.logs) console.error(log)
  process.exit(1)
}
