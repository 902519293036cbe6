import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    /** The directory of the bundled child scripts (test/support/childScripts.ts). */
    readonly childScripts: string
  }
}

const repo = new URL("../../", import.meta.url).pathname
const bun = join(repo, "node_modules", ".bin", "bun")

/**
 * Scripts that tests run as child processes under Node. Bundled, as dist/ is: a child then starts in about 0.2 s of
 * CPU, where loading the sources as TypeScript, with Effect unbundled, takes about 1.4 s, and the tests start dozens.
 */
const childScripts = [
  "test/persistence/discard-worker.ts",
  "test/persistence/lifetime-worker.ts",
  "test/persistence/session-worker.ts",
  "test/persistence/stalled-worker.ts",
  "test/plugin/quiet-run.ts"
]

/**
 * Builds dist/ once per run, before any project's tests: the end-to-end tier loads the plugin from it (OpenCode imports
 * the package's `exports["./server"]`), and the analyser's tests run its bin, `dist/analyse.js`. Then bundles the
 * child scripts into a directory of the run's own.
 */
export default function setup(project: TestProject) {
  execFileSync(bun, ["scripts/build.ts"], { cwd: repo, stdio: "pipe" })
  const dir = mkdtempSync(join(tmpdir(), "dcp-child-scripts-"))
  execFileSync(bun, ["test/support/bundle-children.ts", dir, ...childScripts], { cwd: repo, stdio: "pipe" })
  project.provide("childScripts", dir)
  return () => rmSync(dir, { recursive: true, force: true })
}
