import { assert, describe, it } from "vitest"
import { dcpConfig, done, read, sourceFile } from "./support/fixtures.ts"
import { resultOf } from "./support/requests.ts"
import { useScenario } from "./support/scenario.ts"

/**
 * A provider keeps its prompt cache per model: the first request after the user picks another model is written whole
 * whatever the plugin does, so automatic prunes waiting on a warm cache go out with it, for free. The default cache
 * mode (prunes wait); repeats off, so a second read of an unchanged file makes the first a duplicate, which waits.
 */
const scenario = useScenario({
  mainModel: "claude-fake",
  otherModels: ["claude-fake-2"],
  variants: ["high"],
  files: { "src/a.ts": sourceFile("alpha", 400), ...dcpConfig({ cache: { mode: "auto" } }) }
})

const whole = /^\[id 1\]\n<path>[\s\S]*alpha line 399/

describe("a switch of model", () => {
  for (const next of ["claude-fake-2", "claude-fake"]) {
    const switched = next !== "claude-fake"
    it(`a duplicate waiting on a warm cache goes out ${switched ? "pruned in the first request to another model" : "whole in the next request to the same model"}`, async () => {
      const s = scenario()
      const session = await s.newSession()
      s.model.script([read(s, "src/a.ts", "mod_1"), read(s, "src/a.ts", "mod_2"), done])
      await s.prompt(session, "read a.ts twice")
      const warm = s.requests().at(-1)!
      assert.match(resultOf(warm, "mod_1") ?? "", whole)

      s.model.script([done])
      await s.prompt(session, "go on", next)
      const after = s.requests().at(-1)!
      assert.strictEqual(after.model, next)
      if (switched)
        assert.match(resultOf(after, "mod_1") ?? "", /^\[pruned duplicate: src\/a\.ts lines 1-400; recall 1\]$/)
      else assert.match(resultOf(after, "mod_1") ?? "", whole)
    })
  }

  it("a duplicate waiting on a warm cache goes out pruned in the first request with another variant of the model", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([read(s, "src/a.ts", "var_1"), read(s, "src/a.ts", "var_2"), done])
    await s.prompt(session, "read a.ts twice")
    assert.match(resultOf(s.requests().at(-1)!, "var_1") ?? "", whole)

    s.model.script([done])
    await s.prompt(session, "go on", undefined, "high")
    assert.match(
      resultOf(s.requests().at(-1)!, "var_1") ?? "",
      /^\[pruned duplicate: src\/a\.ts lines 1-400; recall 1\]$/
    )
  })
})
