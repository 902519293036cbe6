import { assert, describe, it } from "@effect/vitest"
import { boundedJson } from "../../src/data/boundedJson.ts"

const loose = { maxDepth: 100, maxString: 1_000, maxLength: 100_000 }

describe("boundedJson", () => {
  it("writes what JSON.stringify writes for plain JSON, indented or not", () => {
    const value = { a: [1, "two", null, true, { b: [] }], c: {}, d: 'q"uote\n' }
    assert.strictEqual(boundedJson(value, loose), JSON.stringify(value))
    assert.strictEqual(boundedJson(value, { ...loose, indent: 2 }), JSON.stringify(value, null, 2))
  })

  it("drops what JSON drops and writes dates as JSON does", () => {
    const value = { f: () => 1, u: undefined, s: Symbol("s"), list: [undefined, () => 1], at: new Date(0), n: NaN }
    assert.strictEqual(boundedJson(value, loose), JSON.stringify(value))
  })

  it("writes a cycle, a BigInt, an error and a throwing getter as markers instead of throwing", () => {
    const value: Record<string, unknown> = { big: 12n, error: new TypeError("bad") }
    value.self = value
    Object.defineProperty(value, "trap", {
      enumerable: true,
      get: () => {
        throw new Error("no")
      }
    })
    assert.deepStrictEqual(JSON.parse(boundedJson(value, loose)), {
      big: "12n",
      error: "TypeError: bad",
      self: "[cycle]",
      trap: "[unreadable]"
    })
  })

  it("writes the same object twice when it is not its own ancestor", () => {
    const shared = { x: 1 }
    assert.strictEqual(boundedJson({ a: shared, b: [shared] }, loose), `{"a":{"x":1},"b":[{"x":1}]}`)
  })

  it("stops descending at maxDepth", () => {
    assert.strictEqual(boundedJson({ a: { b: { c: 1 } } }, { ...loose, maxDepth: 2 }), `{"a":{"b":"[nested deeper]"}}`)
  })

  it("cuts long strings and says how much was cut", () => {
    assert.strictEqual(boundedJson("abcdef", { ...loose, maxString: 2 }), `"ab…[+4 characters]"`)
  })

  it("stops writing at maxLength and says so", () => {
    const text = boundedJson(Array.from({ length: 1_000 }, (_, i) => i), { ...loose, maxLength: 20 })
    assert.strictEqual(text, "[0,1,2,3,4,5,6,7,8,9 …[cut at 20 characters]")
  })
})
