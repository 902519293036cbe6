import { join } from "node:path"
import { inject } from "vitest"

/**
 * The bundle of a script that tests run as a child process under Node, by its name (`stalled-worker` for
 * test/persistence/stalled-worker.ts): built for the run by test/support/build.ts, which lists them.
 */
export const childScript = (name: string): string => join(inject("childScripts"), `${name}.js`)
