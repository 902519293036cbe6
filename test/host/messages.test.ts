import { describe, expect, it } from "vitest"
import { latestRequestAt } from "../../src/host/messages.ts"

const message = (role: string, time?: unknown) => ({ info: { role, sessionID: "ses_x", ...(time === undefined ? {} : { time }) }, parts: [] })

describe("latestRequestAt", () => {
  it("is the creation time of the newest assistant message", () => {
    expect(latestRequestAt([message("user", { created: 1 }), message("assistant", { created: 2 }), message("assistant", { created: 5 }), message("user", { created: 9 })]))
      .toBe(5)
  })

  it("is undefined without an assistant message", () => {
    expect(latestRequestAt([message("user", { created: 1 })])).toBeUndefined()
    expect(latestRequestAt([])).toBeUndefined()
  })

  it("is undefined when the newest assistant message has no usable time", () => {
    for (const time of [undefined, null, {}, { created: "yesterday" }, { created: Number.NaN }]) {
      expect(latestRequestAt([message("assistant", { created: 3 }), message("assistant", time)])).toBeUndefined()
    }
  })

  it("skips entries that are not messages", () => {
    expect(latestRequestAt([message("assistant", { created: 4 }), null, 42, { info: "x" }])).toBe(4)
  })
})
