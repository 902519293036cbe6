import { configDefaults, defineConfig } from "vitest/config"
import { UnitFirst } from "./test/support/sequencer.ts"

// Time limits here are guards against a hang, never a measure of speed: a test waits for events, and these machines
// may run the suite on 2 busy cores.
export default defineConfig({
  test: {
    // Runs once per run, whatever the projects: builds dist/.
    globalSetup: ["test/support/build.ts"],
    // Both projects in one pool (vitest groups projects of equal maxWorkers; the default would be the cores less
    // one): these machines have 2 cores, and each end-to-end file runs its own `opencode serve`.
    maxWorkers: 2,
    sequence: { sequencer: UnitFirst },
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, "test/e2e/**"],
          // The files share one module graph per worker: imported afresh for each file, Effect and the plugin cost
          // most of the tier's time. A test that changes process-wide state (process.env) restores it.
          isolate: false,
          testTimeout: 120_000,
          hookTimeout: 120_000
        }
      },
      {
        // The real OpenCode binary against a scripted model (test/e2e/support/scenario.ts). Alone:
        // `npx vitest run --project e2e`; with the plugin switched off, to see the assertions fail:
        // `DCP_E2E_DISABLED=1 npx vitest run --project e2e`.
        extends: true,
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.e2e.test.ts"],
          globalSetup: ["test/e2e/support/global-setup.ts"],
          // A worker's files share one process, and with it the OpenCode servers they can share (support/scenario.ts).
          isolate: false,
          testTimeout: 300_000,
          hookTimeout: 300_000
        }
      }
    ]
  }
})
