import fc from "fast-check"
import { assert, describe, it } from "vitest"
import { defaultConfig, type PluginConfig } from "../../src/config/schema.ts"
import type { ToolCall, ToolIndex } from "../../src/engine/calls.ts"
import { idOnlyHint } from "../../src/engine/placeholders.ts"
import { applyView, notePrunes, trackView, type ViewState, viewCandidates, viewContext } from "../../src/engine/view.ts"
import type { PruneRecord } from "../../src/state/schema.ts"
import { history, protectedPatterns } from "../support/generate.ts"
import { fresh, type Msg, sessionID } from "../support/history.ts"
import { estimateContext } from "./oracle.ts"
import { indexViews, protect, worktree } from "./support.ts"

/**
 * The request path keeps the state of a view between requests and extends it with each request's new calls.
 * Whatever happens between requests (calls added, messages reverted, prunes applied by the request path or by the
 * model's tools, restores), it must give exactly what a view state built afresh from the same request gives.
 */

type Step =
  | { readonly kind: "grow"; readonly messages: number }
  | { readonly kind: "revert"; readonly messages: number }
  | { readonly kind: "toolPrune"; readonly pick: number }
  | { readonly kind: "restore"; readonly pick: number }

const steps: fc.Arbitrary<Array<Step>> = fc.array(
  fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({ kind: fc.constant("grow" as const), messages: fc.integer({ min: 0, max: 3 }) })
    },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant("revert" as const), messages: fc.integer({ min: 1, max: 2 }) })
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("toolPrune" as const), pick: fc.nat() }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("restore" as const), pick: fc.nat() }) }
  ),
  { minLength: 1, maxLength: 30 }
)

const configs = fc.record({
  patterns: fc.subarray([...protectedPatterns]),
  turnProtection: fc.record({ enabled: fc.boolean(), turns: fc.integer({ min: 1, max: 3 }) }),
  trigger: fc.constantFrom(0, 500, 40_000),
  nudgeFrequency: fc.integer({ min: 1, max: 4 }),
  nudgeMinTokens: fc.constantFrom(0, 200, 8000)
})

describe("the request path's incremental view state", () => {
  it("gives what a view state built afresh gives, request after request", () => {
    fc.assert(
      fc.property(history(sessionID, { maxMessages: 30 }), steps, configs, (messages, plan, options) => {
        const config: PluginConfig = {
          ...defaultConfig,
          protectedFilePatterns: options.patterns,
          turnProtection: options.turnProtection,
          strategies: {
            ...defaultConfig.strategies,
            staleOutputs: {
              ...defaultConfig.strategies.staleOutputs,
              trigger: options.trigger,
              keepRecent: 3,
              clearAtLeast: 300
            }
          },
          tools: {
            ...defaultConfig.tools,
            settings: {
              ...defaultConfig.tools.settings,
              nudgeFrequency: options.nudgeFrequency,
              nudgeMinTokens: options.nudgeMinTokens
            }
          }
        }
        // The views the requests send, in order, then indexed by one ToolCache as the transform does.
        const views: Array<Array<Msg>> = []
        let length = 1
        for (const step of plan) {
          if (step.kind === "grow") length = Math.min(messages.length, length + step.messages)
          if (step.kind === "revert") length = Math.max(1, length - step.messages)
          views.push(fresh(messages.slice(0, length)))
        }
        const indexes = indexViews(views)
        const ids = new Map<string, number>()
        const idOf = (call: ToolCall) => {
          let id = ids.get(call.callID)
          if (id === undefined) ids.set(call.callID, id = ids.size + 1)
          return id
        }
        const pruned = new Map<string, PruneRecord>()
        const restored = new Set<string>()
        let revision = 0
        let nudgeAfter = 0
        let kept: ViewState | undefined

        plan.forEach((step, i) => {
          const index: ToolIndex = indexes[i]!
          const calls = index.calls
          for (const call of calls) call.id = idOf(call)
          // The ToolCache's own map follows its latest pass; this request's calls are these.
          const byCallId = new Map(calls.map((call) => [call.callID, call] as const))
          if (step.kind === "toolPrune" && calls.length > 0) {
            const call = calls[step.pick % calls.length]!
            if (!pruned.has(call.callID)) pruned.set(call.callID, { reason: "discard", tokens: 5, at: 0 })
            nudgeAfter = ids.size
            revision++
          }
          if (step.kind === "restore" && pruned.size > 0) {
            const callID = [...pruned.keys()][step.pick % pruned.size]!
            pruned.delete(callID)
            restored.add(callID)
            revision++
          }
          const protection = protect({
            patterns: options.patterns,
            turnProtection: options.turnProtection,
            currentTurn: index.turns
          })
          const input = (previous: ViewState | undefined) =>
            trackView(previous, {
              calls,
              reReads: new Map(),
              pass: index.pass,
              previousPass: index.previousPass,
              appendOnly: index.appendOnly,
              pruned,
              revision,
              nudgeAfter,
              config,
              protection,
              recallHint: idOnlyHint,
              messages: views[i]!,
              folds: new Map(),
              userTurns: index.userTurns,
              byCallId
            })
          const incremental = input(kept)
          kept = incremental
          // Repeats found at their first send are pruned at once, as the request path does.
          for (const { call, copy } of incremental.copies) {
            pruned.set(call.callID, {
              reason: "repeat",
              tokens: 3,
              at: 0,
              of: { id: idOf(calls[copy.source]!), kind: copy.kind }
            })
          }
          if (incremental.copies.length > 0) revision++
          notePrunes(incremental, incremental.copies.map(({ call }) => call), pruned, revision)
          const afresh = input(undefined)
          assert.deepStrictEqual(afresh.copies, [])

          const query = { calls, pruned, restored, protection, currentTurn: index.turns }
          const context = viewContext(incremental, index.textChars, 100)
          assert.strictEqual(context, viewContext(afresh, index.textChars, 100))
          assert.strictEqual(context, estimateContext({ calls, textChars: index.textChars, systemTokens: 100, pruned }))
          const candidates = viewCandidates(incremental, { ...query, contextTokens: context })
          assert.deepStrictEqual(candidates, viewCandidates(afresh, { ...query, contextTokens: context }))

          // Prunes the request path applies itself (every candidate, as in immediate mode) keep the view state current.
          for (const { callID } of candidates) pruned.set(callID, { reason: "deduplication", tokens: 7, at: 0 })
          if (candidates.length > 0) revision++
          notePrunes(
            incremental,
            candidates.map(({ callID }) => byCallId.get(callID)!),
            pruned,
            revision
          )
          const rebuilt = input(undefined)
          assert.deepStrictEqual(incremental.tagged, rebuilt.tagged)
          assert.strictEqual(incremental.resultsSince, rebuilt.resultsSince)
          assert.strictEqual(viewContext(incremental, index.textChars, 100), viewContext(rebuilt, index.textChars, 100))
          assert.strictEqual(
            viewContext(incremental, index.textChars, 100),
            estimateContext({ calls, textChars: index.textChars, systemTokens: 100, pruned })
          )
          const sent = fresh(views[i]!)
          const expected = fresh(views[i]!)
          applyView(incremental, sent, calls, pruned)
          applyView(rebuilt, expected, calls, pruned)
          assert.deepStrictEqual(sent, expected)
        })
      }),
      { numRuns: 150 }
    )
  })

  it("reuses what it derived while the view only grows", () => {
    const [first, second] = indexViews([
      fresh(viewWith(["a"])),
      fresh(viewWith(["a", "b"]))
    ])
    const input = (index: ToolIndex, previous: ViewState | undefined) => {
      for (const call of index.calls) call.id ??= call.position + 1
      return trackView(previous, {
        calls: index.calls,
        reReads: new Map(),
        pass: index.pass,
        previousPass: index.previousPass,
        appendOnly: index.appendOnly,
        pruned: new Map(),
        revision: 0,
        nudgeAfter: 0,
        config: defaultConfig,
        protection: protect(),
        recallHint: idOnlyHint,
        messages: [],
        folds: new Map(),
        userTurns: index.userTurns,
        byCallId: index.byCallId
      })
    }
    const viewState = input(first!, undefined)
    assert.strictEqual(second!.appendOnly, true)
    assert.strictEqual(input(second!, viewState), viewState)
    assert.strictEqual(viewState.count, 2)
  })
})

/** A user message, then one assistant message per file, each reading it. */
const viewWith = (files: ReadonlyArray<string>): Array<Msg> => [
  { info: { id: "msg_u", sessionID, role: "user", time: { created: 1 } }, parts: [{ type: "text", text: "go" }] },
  ...files.map((file, i) => ({
    info: { id: `msg_a${i}`, sessionID, role: "assistant", time: { created: 2 + i } },
    parts: [
      { type: "step-start" },
      {
        type: "tool",
        callID: `c_${file}`,
        tool: "read",
        state: { status: "completed", input: { filePath: `${worktree}/${file}.ts` }, output: "x".repeat(800) }
      }
    ]
  }))
]
