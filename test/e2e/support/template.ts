import { access, readFile } from "node:fs/promises"
import { join } from "node:path"
import { inject } from "vitest"
import { waitFor } from "./wait.ts"

/**
 * The `~/.config/opencode` in which OpenCode's first-start install is done, once the run's global setup
 * (./global-setup.ts) has it ready; its failure, when it failed.
 */
export const configTemplate = (): Promise<string> => {
  const template = inject("opencodeConfigTemplate")
  return waitFor("OpenCode's first-start install (test/e2e/support/global-setup.ts)", async () => {
    const failure = await readFile(`${template}.failed`, "utf8").catch(() => undefined)
    if (failure !== undefined) throw new Error(`OpenCode's first-start install failed: ${failure}`)
    return access(join(template, "package-lock.json")).then(() => template, () => undefined)
  }, 500)
}
