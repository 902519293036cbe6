import { assert, describe, it } from "@effect/vitest"
import fc from "fast-check"
import * as Jsonc from "jsonc-parser"
import { parseJsonc } from "../../src/config/jsonc.ts"

/** Pieces of JSONC, valid and not, so that generated texts hit every branch of the parser's error recovery. */
const piece = fc.constantFrom(
  "{",
  "}",
  "[",
  "]",
  ",",
  ":",
  " ",
  "\n",
  `"a"`,
  `"b"`,
  `"a\\u0041"`,
  `"bad\\x"`,
  `"open`,
  "1",
  "-2.5e3",
  "1e",
  "0x1",
  "true",
  "false",
  "null",
  "nul",
  "// c\n",
  "/* c */",
  "/* open",
  "@",
  "\u00a0"
)
const jsoncText = fc.oneof(
  fc.array(piece, { maxLength: 40 }).map((pieces) => pieces.join("")),
  // Valid JSON, so values are compared too (jsonc-parser mishandles __proto__: see the last test).
  fc.json({ maxDepth: 4 }).filter((text) => !text.includes("__proto__"))
)

/** Nested objects and lists, `depth` levels deep, around `inner`. */
const nested = (depth: number, inner: string, open = `{"a":`, close = "}") =>
  open.repeat(depth) + inner + close.repeat(depth)

describe("parseJsonc", () => {
  it("reports exactly the errors jsonc-parser reports, and builds the same value", () => {
    fc.assert(
      fc.property(jsoncText, (text) => {
        const errors: Array<Jsonc.ParseError> = []
        const expected = Jsonc.parse(text, errors, { allowTrailingComma: true, allowEmptyContent: true })
        const actual = parseJsonc(text)
        assert.deepStrictEqual(actual.errors, errors)
        // With errors the file is ignored whole, and jsonc-parser's partial values are its own business.
        if (errors.length === 0) assert.deepStrictEqual(actual.value, expected)
      }),
      { numRuns: 3000 }
    )
  })

  it("parses 100,000 levels of objects and of lists", () => {
    const objects = parseJsonc(nested(100_000, "1"))
    assert.deepStrictEqual(objects.errors, [])
    let value: unknown = objects.value
    for (let depth = 0; depth < 100_000; depth++) value = (value as Record<string, unknown>).a
    assert.strictEqual(value, 1)

    const lists = parseJsonc(nested(100_000, "", "[", "]"))
    assert.deepStrictEqual(lists.errors, [])
  })

  it("reports an unclosed deep nesting as a syntax error", () => {
    const { errors } = parseJsonc(`{"a":`.repeat(100_000))
    assert.strictEqual(Jsonc.printParseErrorCode(errors[0]!.error), "ValueExpected")
  })

  it("keeps __proto__ as an own key, and the object's prototype as it was", () => {
    const { value, errors } = parseJsonc(`{ "__proto__": { "polluted": true }, "a": { "__proto__": [] } }`)
    assert.deepStrictEqual(errors, [])
    const object = value as Record<string, Record<string, unknown>>
    assert.deepStrictEqual(Object.keys(object), ["__proto__", "a"])
    assert.strictEqual(Object.getPrototypeOf(object), Object.prototype)
    assert.strictEqual(Object.getPrototypeOf(object.a), Object.prototype)
    assert.deepStrictEqual(Object.getOwnPropertyDescriptor(object, "__proto__")?.value, { polluted: true })
    assert.isUndefined(object.polluted)
  })
})
