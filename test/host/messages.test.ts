import { describe, expect, it } from "vitest"
import { requestTimes } from "../../src/host/messages.ts"

const message = (role: string, time?: unknown) => ({
  info: { role, sessionID: "ses_x", ...(time === undefined ? {} : { time }) },
  parts: []
})

describe("requestTimes", () => {
  it("is the creation time of every assistant message, oldest first", () => {
    expect(
      requestTimes([
        message("user", { created: 1 }),
        message("assistant", { created: 2 }),
        message("assistant", { created: 5 }),
        message("user", { created: 9 })
      ])
    )
      .toEqual([2, 5])
  })

  it("is empty without an assistant message", () => {
    expect(requestTimes([message("user", { created: 1 })])).toEqual([])
    expect(requestTimes([])).toEqual([])
  })

  it("skips assistant messages with no usable time", () => {
    for (const time of [undefined, null, {}, { created: "yesterday" }, { created: Number.NaN }]) {
      expect(requestTimes([message("assistant", { created: 3 }), message("assistant", time)])).toEqual([3])
    }
  })

  it("skips entries that are not messages", () => {
    expect(requestTimes([message("assistant", { created: 4 }), null, 42, { info: "x" }])).toEqual([4])
  })
})
