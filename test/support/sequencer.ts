import { BaseSequencer, type TestSpecification } from "vitest/node"

/**
 * The unit tier's files first, then the end-to-end tier's, each in vitest's own order (the longest first, by the last
 * run's durations, else by size). vitest would run the end-to-end tier first (projects by name); after the unit tier,
 * its first files find OpenCode's first-start install, which a clean clone runs in the global setup, done
 * (test/e2e/support/global-setup.ts), and the run ends on the short end-to-end files, both workers busy to the end.
 */
export class UnitFirst extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const sorted = await super.sort(files)
    return [
      ...sorted.filter((file) => file.project.name !== "e2e"),
      ...sorted.filter((file) => file.project.name === "e2e")
    ]
  }
}
