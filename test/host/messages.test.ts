import { assert, describe, it } from "vitest"
import { requestTimes } from "../../src/host/messages.ts"

const message = (role: string, time?: unknown) => ({
  info: { role, sessionID: "ses_x", ...(time === undefined ? {} : { time }) },
  parts: []
})

describe("requestTimes", () => {
  it("is the creation time of every assistant message, oldest first", () => {
    assert.deepStrictEqual(
      requestTimes([
        message("user", { created: 1 }),
        message("assistant", { created: 2 }),
        message("assistant", { created: 5 }),
        message("user", { created: 9 })
      ]),
      [2, 5]
    )
  })

  it("is empty without an assistant message", () => {
    assert.deepStrictEqual(requestTimes([message("user", { created: 1 })]), [])
    assert.deepStrictEqual(requestTimes([]), [])
  })

  it("skips assistant messages with no usable time", () => {
    for (const time of [undefined, null, {}, { created: "yesterday" }, { created: Number.NaN }]) {
      assert.deepStrictEqual(requestTimes([message("assistant", { created: 3 }), message("assistant", time)]), [3])
    }
  })

  it("skips entries that are not messages", () => {
    assert.deepStrictEqual(requestTimes([message("assistant", { created: 4 }), null, 42, { info: "x" }]), [4])
  })
})
