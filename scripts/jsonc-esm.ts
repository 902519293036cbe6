/// <reference types="bun-types" />
import type { BunPlugin } from "bun"

/**
 * `jsonc-parser` has no `exports`; for Node, Bun picks its `main`, a UMD build whose `require("./impl/format")` does
 * not survive bundling. Its ESM build (`module`) bundles cleanly: use that.
 */
export const jsoncEsm: BunPlugin = {
  name: "jsonc-parser-esm",
  setup(build) {
    const esm = new URL("../node_modules/jsonc-parser/lib/esm/main.js", import.meta.url).pathname
    build.onResolve({ filter: /^jsonc-parser$/ }, () => ({ path: esm }))
  }
}
