import { assert, describe, it } from "vitest"
import { thresholdFor } from "../../src/engine/compaction.ts"

describe("the context at which a turn's end compacts", () => {
  it("auto: 30% of the window OpenCode compacts at, the window less the output it reserves (at most 32,000)", () => {
    assert.strictEqual(thresholdFor("auto", { contextLimit: 200_000, outputLimit: 64_000 }), 50_400)
    assert.strictEqual(thresholdFor("auto", { contextLimit: 200_000, outputLimit: 8_192 }), 57_542)
  })

  it("auto: a larger window compacts later, so the user who chose it keeps about as much history against OpenCode alone", () => {
    assert.strictEqual(thresholdFor("auto", { contextLimit: 1_000_000, outputLimit: 32_000 }), 290_400)
  })

  it("auto: at least 25,000, below which a compaction's summary and kept messages would leave little less", () => {
    assert.strictEqual(thresholdFor("auto", { contextLimit: 32_768, outputLimit: 4_096 }), 25_000)
  })

  it("auto: 50,000 when the host gives no window", () => {
    assert.strictEqual(thresholdFor("auto", undefined), 50_000)
    assert.strictEqual(thresholdFor("auto", { contextLimit: undefined, outputLimit: undefined }), 50_000)
  })

  it("a number is taken as it is, whatever the window", () => {
    assert.strictEqual(thresholdFor(80_000, { contextLimit: 1_000_000, outputLimit: 32_000 }), 80_000)
  })
})
