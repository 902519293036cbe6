/**
 * The end-to-end tier with the plugin switched off (`DCP_E2E_DISABLED=1`, test/e2e/support/scenario.ts), read for what
 * it shows: every test must fail, but the controls, named `control: ...`, which check what holds with the plugin or
 * without it (OpenCode's own behaviour, the run without the plugin that a cost is compared with), each beside a test
 * that fails. Lists the tests that passed without being a control, and exits 1 if there is any.
 *
 *   node scripts/e2e-off.ts                          the whole tier (several minutes: run it alone)
 *   node scripts/e2e-off.ts test/e2e/mcp.e2e.test.ts one file
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, relative, resolve } from "node:path"

const repo = resolve(import.meta.dirname, "..")
const dir = mkdtempSync(join(tmpdir(), "dcp-e2e-off-"))
const output = join(dir, "results.json")

interface Assertion {
  readonly fullName: string
  readonly title: string
  readonly status: string
  readonly failureMessages?: ReadonlyArray<string>
}
interface Results {
  readonly testResults: ReadonlyArray<{ readonly name: string; readonly assertionResults: ReadonlyArray<Assertion> }>
}

try {
  // As `npm test` runs it: the project's Node first on PATH (some tests start `node` by name), whoever started this.
  const path = `${join(repo, "node_modules", ".bin")}:${process.env.PATH ?? ""}`
  spawnSync(
    process.execPath,
    [
      join(repo, "node_modules", "vitest", "vitest.mjs"),
      ...["run", "--project", "e2e", "--reporter=json", `--outputFile=${output}`, ...process.argv.slice(2)]
    ],
    { cwd: repo, stdio: ["ignore", "ignore", "inherit"], env: { ...process.env, PATH: path, DCP_E2E_DISABLED: "1" } }
  )
  const results = JSON.parse(readFileSync(output, "utf8")) as Results
  const rows = results.testResults.flatMap((file) =>
    file.assertionResults.map((test) => ({ file: relative(repo, file.name), ...test }))
  )
  const control = (test: Assertion) => test.title.startsWith("control: ")
  const unexpected = rows.filter((test) => test.status === "passed" && !control(test))
  const controls = rows.filter(control)
  const failed = rows.filter((test) => test.status === "failed" && !control(test))
  console.log(`With the plugin off: ${failed.length} failed, ${controls.length} controls, ${unexpected.length} passed`)
  for (const test of controls) {
    console.log(`  control (${test.status}): ${test.file} > ${test.fullName}`)
    // A control holds with the plugin or without it: a failed one failed for another reason, worth reading.
    for (const message of test.failureMessages ?? [])
      console.log(`    ${message.split("\n").slice(0, 6).join("\n    ")}`)
  }
  for (const test of unexpected) console.log(`  PASSED WITHOUT THE PLUGIN: ${test.file} > ${test.fullName}`)
  process.exitCode = unexpected.length > 0 ? 1 : 0
} finally {
  rmSync(dir, { recursive: true, force: true })
}
