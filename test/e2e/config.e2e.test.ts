import { readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { type ParseError, parse } from "jsonc-parser"
import { assert, describe, it } from "vitest"
import { call, done, placeholder, read, sourceFile } from "./support/fixtures.ts"
import { argumentsOf, requestAfter, requestText, resultOf } from "./support/requests.ts"
import { globalConfig, useScenario } from "./support/scenario.ts"
import { waitFor } from "./support/wait.ts"

describe("purge errors with strategies.purgeErrors.turns = 1 in the project config", () => {
  const scenario = useScenario({
    files: {
      "src/a.ts": sourceFile("alpha"),
      "src/b.ts": sourceFile("beta"),
      ".opencode/dcp.jsonc":
        '{\n  // purge failed inputs one turn later\n  "strategies": { "purgeErrors": { "turns": 1 } },\n}\n'
    }
  })

  it("a failed call's large input is gone after the configured turns, its error kept", async () => {
    const s = scenario()
    const session = await s.newSession()
    const marker = "PURGE_MARKER_e41c"
    // webfetch rejects a non-HTTP URL before any network access: a failed call with a large string input.
    const url = `ftp://example.invalid/${marker}/${Array.from({ length: 30 }, (_, i) => `segment-${i}`).join("/")}`
    s.model.script([
      call("webfetch", { url }, "err_1"),
      read(s, "src/a.ts", "err_2"),
      read(s, "src/b.ts", "err_3"),
      done
    ])
    await s.prompt(session, "fetch that URL")
    const requests = s.requests()

    const error = resultOf(requestAfter(requests, "err_1"), "err_1")!
    assert.include(error, "URL must start with http")
    // Right after the failure the input is still there; one turn later it is purged and the error text stays
    // (with the default of 4 turns it would still be there at the end of this script).
    assert.strictEqual(argumentsOf(requestAfter(requests, "err_1"), "err_1")?.url, url)
    for (const request of [requestAfter(requests, "err_2"), requests.at(-1)!]) {
      assert.match(
        String(argumentsOf(request, "err_1")?.url),
        placeholder("[pruned url of a failed call; id 1]")
      )
      assert.strictEqual(resultOf(request, "err_1"), error)
      assert.notInclude(requestText(request), marker)
    }
  })
})

describe("an invalid project config", () => {
  const scenario = useScenario({
    files: {
      "src/a.ts": sourceFile("alpha"),
      ".opencode/dcp.jsonc": '{ "strategies": { "purgeErrors": { "turns": 0 } } }\n'
    }
  })

  it("is reported in a toast naming the key, and pruning still works with the defaults", async () => {
    const s = scenario()
    const events = await s.subscribe()
    try {
      const session = await s.newSession()
      s.model.script([read(s, "src/a.ts", "bad_1"), read(s, "src/a.ts", "bad_2"), done])
      await s.prompt(session, "read a.ts twice")

      const toast = await waitFor(
        "a toast naming strategies.purgeErrors.turns",
        () =>
          events.events.find((event) =>
            event.type === "tui.toast.show" && String(event.properties.message).includes("strategies.purgeErrors.turns")
          )
      )
      assert.include(String(toast.properties.message), ".opencode/dcp.jsonc")
      assert.match(
        resultOf(requestAfter(s.requests(), "bad_2"), "bad_1") ?? "",
        placeholder("[pruned duplicate: src/a.ts lines 1-60; id 1]")
      )
    } finally {
      events.close()
    }
  })
})

describe("a fresh HOME (no global dcp.jsonc)", () => {
  const scenario = useScenario({
    freshHome: true,
    files: {
      "src/a.ts": sourceFile("alpha"),
      ".opencode/dcp.jsonc": `${JSON.stringify(globalConfig)}\n`
    }
  })

  it("the plugin writes the commented default global config when OpenCode loads it, and prunes", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([read(s, "src/a.ts", "fresh_1"), read(s, "src/a.ts", "fresh_2"), done])
    await s.prompt(session, "read a.ts twice")

    const file = join(s.opencode().env.XDG_CONFIG_HOME!, "opencode", "dcp.jsonc")
    const text = await waitFor("the default global config", () => readFile(file, "utf8").catch(() => undefined))
    // Every default is there as a commented-out line to edit, so the file changes nothing until the user edits it.
    assert.include(text, '// "enabled": true,')
    assert.include(text, '// "minPruneTokens": 2000,')
    const errors: Array<ParseError> = []
    const written = parse(text, errors, { allowTrailingComma: true }) as Record<string, unknown>
    assert.deepStrictEqual(errors, [])
    assert.match(String(written.$schema), /dcp\.schema\.json$/)
    assert.match(
      resultOf(requestAfter(s.requests(), "fresh_2"), "fresh_1") ?? "",
      placeholder("[pruned duplicate: src/a.ts lines 1-60; id 1]")
    )
  })
})

describe("a project config edited while OpenCode runs", () => {
  const scenario = useScenario({
    files: {
      "src/a.ts": sourceFile("alpha"),
      ".opencode/dcp.jsonc": '{ "strategies": { "deduplication": { "enabled": false } } }\n'
    }
  })

  it("applies from the next request on, without a restart, and a toast says so", async () => {
    const s = scenario()
    const events = await s.subscribe()
    try {
      const session = await s.newSession()
      s.model.script([read(s, "src/a.ts", "live_1"), read(s, "src/a.ts", "live_2"), done])
      await s.prompt(session, "read a.ts twice")
      assert.include(resultOf(s.requests().at(-1)!, "live_1"), "alpha line 59")

      await writeFile(s.path(".opencode/dcp.jsonc"), '{ "strategies": { "deduplication": { "enabled": true } } }\n')
      s.model.script([done])
      await s.prompt(session, "go on")

      assert.match(
        resultOf(s.requests().at(-1)!, "live_1") ?? "",
        placeholder("[pruned duplicate: src/a.ts lines 1-60; id 1]")
      )
      const toast = await waitFor(
        "the reload's toast",
        () =>
          events.events.find((event) =>
            event.type === "tui.toast.show" && event.properties.title === "DCP: config reloaded"
          )
      )
      assert.include(
        String(toast.properties.message),
        ".opencode/dcp.jsonc\nIts settings apply from the next request on."
      )
    } finally {
      events.close()
    }
  })
})
