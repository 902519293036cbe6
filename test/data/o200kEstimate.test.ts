import { readFileSync } from "node:fs"
import { countTokens } from "gpt-tokenizer/encoding/o200k_base"
import { assert, describe, it } from "vitest"
import { generate } from "../../src/simulator/generator/generate.ts"
import { estimateO200k } from "../../src/data/o200kEstimate.ts"

const exact = (text: string) => countTokens(text, { disallowedSpecial: new Set() })
const file = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), "utf8")
const ratio = (text: string) => estimateO200k(text) / exact(text)

// The kinds of content a session sends: code, JSON, Markdown prose, and (from the generator) line-numbered reads,
// grep and build output.
const corpus: ReadonlyArray<readonly [string, string]> = [
  ["TypeScript source", file("src/hooks/transform.ts")],
  ["TypeScript source with tables", file("src/data/o200kEstimate.ts")],
  ["JSON schema", file("schema/dcp.schema.json")],
  ["Markdown", file("docs/benchmarks.md")],
  ["an OpenCode export", file("examples/session.json")],
  [
    "French prose",
    "Le greffon remplace les sorties d'outils périmées par de courts espaces réservés avant chaque requête, " +
    "et l'historique enregistré n'est jamais modifié. ".repeat(20)
  ]
]

const outputs = (() => {
  const texts: Array<string> = []
  for (const message of generate({ seed: 5, toolCalls: 150 }).messages) {
    for (const part of message.parts as unknown as ReadonlyArray<{ type: string; state?: { output?: unknown } }>) {
      if (part.type === "tool" && typeof part.state?.output === "string" && part.state.output.length > 200) {
        texts.push(part.state.output)
      }
    }
  }
  return texts
})()

describe("estimateO200k", () => {
  it("is 0 for an empty text and counts short words exactly", () => {
    assert.strictEqual(estimateO200k(""), 0)
    assert.strictEqual(estimateO200k("a"), 1)
    assert.strictEqual(estimateO200k("hello world"), 2)
  })

  it.each(corpus)("estimates %s within 6% of the exact o200k count", (_, text) => {
    assert.isAbove(ratio(text), 0.94)
    assert.isBelow(ratio(text), 1.06)
  })

  it("estimates each generated tool output within 15%, and their sum within 3%", () => {
    let estimated = 0
    let counted = 0
    for (const text of outputs) {
      const e = estimateO200k(text)
      const x = exact(text)
      assert.isBelow(Math.abs(e - x) / x, 0.15)
      estimated += e
      counted += x
    }
    assert.isAbove(outputs.length, 50)
    assert.isBelow(Math.abs(estimated - counted) / counted, 0.03)
  })

  it("estimates Cyrillic prose within 15%", () => {
    const russian = "Плагин заменяет устаревшие результаты инструментов короткими заглушками перед каждым запросом. "
      .repeat(20)
    assert.isAbove(ratio(russian), 0.85)
    assert.isBelow(ratio(russian), 1.15)
  })
})
