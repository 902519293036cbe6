import { access, cp, mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { TestProject } from "vitest/node"
import { startOpenCode } from "./opencode.ts"
import { waitFor } from "./wait.ts"

declare module "vitest" {
  export interface ProvidedContext {
    /**
     * Where the `~/.config/opencode` in which OpenCode's first-start install is done will be: wait for it with
     * `configTemplate` (./template.ts).
     */
    readonly opencodeConfigTemplate: string
  }
}

const repo = new URL("../../../", import.meta.url).pathname
const cacheDir = join(repo, ".e2e-cache")

const exists = (path: string) => access(path).then(() => true, () => false)

/**
 * On a fresh HOME, OpenCode `npm install`s `@opencode-ai/plugin` into `~/.config/opencode` when the first request
 * reaches a project (~10 s), and again in a project `.opencode/`. Done once per OpenCode version and cached in
 * `template`; every scenario gets the result (see `seedConfigDir`).
 */
const prepareConfigTemplate = async (template: string): Promise<void> => {
  const root = await mkdtemp(join(tmpdir(), "dcp-e2e-setup-"))
  try {
    const opencode = await startOpenCode({ root, modelUrl: "http://127.0.0.1:9/v1" })
    const config = join(opencode.env.XDG_CONFIG_HOME!, "opencode")
    try {
      await opencode.api("GET", "/config")
      // package.json and package-lock.json are written when the install has finished.
      await waitFor("OpenCode's first-start install", () => exists(join(config, "package-lock.json")))
      await waitFor(
        "OpenCode's first-start install",
        () => exists(join(config, "node_modules", "@opencode-ai", "plugin", "package.json"))
      )
    } catch (error) {
      throw new Error(`${String(error)}\n--- opencode log tail ---\n${opencode.logs().slice(-3000)}`)
    } finally {
      await opencode.stop()
    }
    await mkdir(cacheDir, { recursive: true })
    const staging = `${template}.tmp-${process.pid}`
    await cp(config, staging, { recursive: true })
    // Another run may have finished the same preparation meanwhile: its copy is as good as ours.
    await rename(staging, template).catch(() => rm(staging, { recursive: true, force: true }))
  } finally {
    await rm(root, { recursive: true, force: true })
  }
}

export default async function setup(project: TestProject) {
  // Failure reports (request bodies, logs) of the previous run.
  await rm(join(cacheDir, "failures"), { recursive: true, force: true })
  const { version } = JSON.parse(await readFile(join(repo, "node_modules", "opencode-ai", "package.json"), "utf8")) as {
    version: string
  }
  const template = join(cacheDir, `opencode-config-${version}`)
  project.provide("opencodeConfigTemplate", template)
  await rm(`${template}.failed`, { force: true })
  if (await exists(join(template, "package-lock.json"))) return
  // On a clean clone the install takes a core for half a minute: it goes on while the unit tier runs (its files come
  // first, test/support/sequencer.ts), and the scenarios wait for its result. A failure is left for them to report.
  void prepareConfigTemplate(template).catch((error: unknown) =>
    writeFile(`${template}.failed`, error instanceof Error ? (error.stack ?? error.message) : String(error))
  )
}
