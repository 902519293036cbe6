import { execFileSync } from "node:child_process"
import { join } from "node:path"

const repo = new URL("../../", import.meta.url).pathname

/**
 * Builds dist/ once per run, before any project's tests: the end-to-end tier loads the plugin from it (OpenCode imports
 * the package's `exports["./server"]`), and the analyser's tests run its bin, `dist/analyse.js`.
 */
export default function setup() {
  execFileSync(join(repo, "node_modules", ".bin", "bun"), ["scripts/build.ts"], { cwd: repo, stdio: "pipe" })
}
