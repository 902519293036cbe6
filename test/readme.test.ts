import { readFileSync } from "node:fs"
import { assert, describe, it } from "vitest"
import { defaultOf, settingPaths } from "./support/settings.ts"

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8")

describe("README", () => {
  it("fits the first screens: at most 150 lines", () => {
    assert.isAtMost(readme.trimEnd().split("\n").length, 150)
  })

  it("lists a handful of settings, each a config key with the default the schema gives it", () => {
    const section = readme.slice(readme.indexOf("## Settings people change"), readme.indexOf("## Documentation"))
    const rows = [...section.matchAll(/^\| `([^`]+)` \| `([^`]+)` \|/gm)].map(([, key, value]) => ({ key, value }))
    assert.isAtLeast(rows.length, 5)
    const keys = new Set(settingPaths())
    const wrong = rows.filter(({ key, value }) => !keys.has(key!) || JSON.stringify(defaultOf(key!)) !== value)
    assert.deepStrictEqual(wrong, [])
  })

  it("names exactly the two set-up commands CI runs", () => {
    const ci = readFileSync(new URL("../.ci/run", import.meta.url), "utf8")
    assert.include(readme, "npm ci")
    assert.include(readme, "npm test")
    assert.include(ci, "npm ci")
    assert.include(ci, "npm test")
  })
})
