import { assert, describe, it } from "@effect/vitest"
import { Clock, Effect, Layer, type Scope } from "effect"
import { replayedClock } from "../../src/simulator/clock.ts"
import fc from "fast-check"
import { build, type HistorySpec, historySpec } from "../support/generate.ts"
import { assistant, fresh, type Msg, tool, toolPart, user } from "../support/history.ts"
import { pluginUnder, tempDir } from "../support/layers.ts"
import { send } from "../pipeline/helpers.ts"
import { projectConfig } from "../support/pluginTest.ts"
import { syntheticId } from "../support/history.ts"

/**
 * The prompt cache only pays when what a request sent is sent again, byte for byte, by every later request: OpenCode
 * places the provider's cache breakpoints on the last two messages, so any earlier byte that moves or changes makes
 * every entry after it useless. The invariant, request after request of generated sessions: every message the
 * previous request sent (its trailing note aside) is sent again identical, except the tool parts of calls whose prune
 * this request applies and the messages of a turn it folds; and the previous request's messages come first, in order.
 */

const session = "ses_appendonly000000000000001"

interface Case {
  readonly spec: HistorySpec
  readonly config: { readonly cache: { readonly mode: string } }
  /** Minutes between consecutive requests: some longer than the cache's life. */
  readonly pauses: ReadonlyArray<number>
}

const cases: fc.Arbitrary<Case> = fc.record({
  spec: historySpec({ maxMessages: 20 }).map((spec) => ({
    // A compaction replaces the history OpenCode sends: the invariant holds between compactions.
    messages: spec.messages.map((message) => (message.kind === "assistant" ? { ...message, summary: false } : message))
  })),
  config: fc.record({
    cache: fc.record({
      mode: fc.constantFrom("auto", "immediate"),
      minPruneTokens: fc.constantFrom(0, 2000),
      horizon: fc.constantFrom("auto", 1000)
    }),
    strategies: fc.record({
      staleOutputs: fc.record({
        trigger: fc.constantFrom(0, 2000, 20_000),
        keepRecent: fc.constantFrom(1, 3),
        keepFiles: fc.constantFrom(0, 2),
        clearAtLeast: fc.constantFrom(0, 500)
      }),
      repeats: fc.record({ enabled: fc.boolean() })
    }),
    tools: fc.record({
      settings: fc.record({ nudgeFrequency: fc.constantFrom(1, 3), nudgeMinTokens: fc.constantFrom(0, 8000) })
    })
  }),
  pauses: fc.array(fc.constantFrom(0, 1, 1, 1, 10), { minLength: 30, maxLength: 30 })
})

const withoutNote = (messages: ReadonlyArray<Msg>) =>
  messages.length > 0 && messages[messages.length - 1]!.info.id === syntheticId ? messages.slice(0, -1) : [...messages]

/**
 * What a prune leaves in place of content: one bracketed line that ends with the handle that brings it back
 * (`[pruned duplicate; recall 17]`, `[same output as id 12; recall 18]`, `id 17` with recall off).
 */
const placeholder = /\[[^\n[\]]*(?:recall|id) (\d+)\]/

/** The stable ID a call's content carries: its `[id N]` tag, or its placeholder's handle. */
const idIn = (part: Record<string, any>): string | undefined => {
  const state = part.state ?? {}
  for (const value of [state.output, state.error, ...Object.values(state.input ?? {})]) {
    if (typeof value !== "string") continue
    const id = /^\[id (\d+)\]\n/.exec(value)?.[1] ?? placeholder.exec(value)?.[1]
    if (id !== undefined) return id
  }
  return undefined
}

/**
 * Whether `after` is `before` with some of its content pruned: the same call, tool, status and metadata, and every
 * string of its output and inputs either unchanged or become a placeholder (a file change's output keeping its
 * confirmation around the placeholder of its language server errors); attachments may go with the output.
 */
const prunedFrom = (before: Record<string, any>, after: Record<string, any>): boolean => {
  if (before.type !== "tool" || after.type !== "tool" || before.callID !== after.callID) return false
  const { state: a, ...restA } = before
  const { state: b, ...restB } = after
  if (JSON.stringify(restA) !== JSON.stringify(restB)) return false
  const becamePlaceholder = (old: unknown, now: unknown) =>
    old === now ||
    (typeof old === "string" && typeof now === "string" && placeholder.test(now) && now.length < old.length + 80)
  const { output: outA, input: inA, attachments: _a, ...stateA } = a ?? {}
  const { output: outB, input: inB, attachments: attachmentsB, ...stateB } = b ?? {}
  if (JSON.stringify(stateA) !== JSON.stringify(stateB)) return false
  if (attachmentsB !== undefined && JSON.stringify(attachmentsB) !== JSON.stringify(a.attachments)) return false
  if (!becamePlaceholder(outA, outB)) return false
  const keys = new Set([...Object.keys(inA ?? {}), ...Object.keys(inB ?? {})])
  return [...keys].every((key) => becamePlaceholder(inA?.[key], inB?.[key]))
}

/** The call IDs named by the lines of the folds' digests in `messages`: `#N ...`. */
const digestIds = (messages: ReadonlyArray<Msg>): Set<string> =>
  new Set(
    messages.flatMap((message) => message.parts).flatMap((part) =>
      part.type === "text" ? [...String(part.text).matchAll(/^#(\d+) /gm)].map((match) => match[1]!) : []
    )
  )

/**
 * Where `next` breaks the invariant against `previous`, or undefined. Read from the two requests alone: a part may
 * change only into its pruned form; a message may lose parts only as a fold takes them (tool calls, each named by
 * its ID in a digest, and reasoning), with the digest's text in their place and every other part as it was.
 */
const violation = (previous: ReadonlyArray<Msg>, next: ReadonlyArray<Msg>): string | undefined => {
  const sent = withoutNote(previous)
  if (next.length < sent.length) return `request shrank from ${sent.length} to ${next.length} messages`
  const named = digestIds(next)
  for (let m = 0; m < sent.length; m++) {
    const before = sent[m]!
    const after = next[m]!
    if (JSON.stringify(before.info) !== JSON.stringify(after.info)) return `message ${m}: info changed`
    if (JSON.stringify(before.parts) === JSON.stringify(after.parts)) continue
    // Walk both, matching what stayed (or became a placeholder); what left must be a folded call, named in a digest,
    // or reasoning, and what came in its place a digest.
    let q = 0
    for (const a of before.parts) {
      const b = after.parts[q]
      if (b !== undefined && (JSON.stringify(a) === JSON.stringify(b) || prunedFrom(a, b))) {
        q++
        continue
      }
      if (b !== undefined && b.type === "text" && /^#\d+ /m.test(String(b.text))) q++
      if (a.type === "reasoning") continue
      if (a.type !== "tool") {
        return `message ${m}: a ${String(a.type)} part changed or left:\n` +
          `  before: ${JSON.stringify(a).slice(0, 300)}\n  after:  ${JSON.stringify(b).slice(0, 300)}`
      }
      const id = idIn(a)
      if (id !== undefined && !named.has(id)) {
        return `message ${m}: call ${
          String(a.callID)
        } (id ${id}) changed, not into a placeholder, or left for no digest:\n` +
          `  before: ${JSON.stringify(a).slice(0, 300)}\n  after:  ${JSON.stringify(b).slice(0, 300)}`
      }
    }
    for (; q < after.parts.length; q++) {
      const b = after.parts[q]!
      if (b.type !== "text" || !/^#\d+ /m.test(String(b.text))) return `message ${m}: a part came that is no digest`
    }
  }
  return undefined
}

/** Tools whose calls deduplication never prunes, and the tools the generator makes that it may. */
const deduplicated = new Set(["read", "bash", "grep", "glob"])

/** An input as deduplication compares it: null and undefined dropped, keys sorted at every depth. */
const canonical = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(canonical)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(
      Object.entries(value).filter(([, inner]) => inner !== null && inner !== undefined).sort(([a], [b]) =>
        a < b ? -1 : 1
      ).map(([key, inner]) => [key, canonical(inner)])
    )
    : value

/**
 * A separate model of deduplication, for a request in `immediate` mode: of two completed calls of one tool with one
 * input, the older's output (large enough to be worth a placeholder) is not sent as it was; its part is pruned or
 * folded away.
 */
const duplicateSentWhole = (history: ReadonlyArray<Msg>, sent: ReadonlyArray<Msg>): string | undefined => {
  const calls = history.flatMap((message) => message.parts).filter((part) =>
    part.type === "tool" && part.state?.status === "completed" && deduplicated.has(String(part.tool))
  )
  const newest = new Map<string, string>()
  for (const part of calls) newest.set(`${part.tool} ${JSON.stringify(canonical(part.state.input))}`, part.callID)
  const sentParts = new Map(
    sent.flatMap((message) => message.parts).filter((part) => part.type === "tool").map((part) => [part.callID, part])
  )
  for (const part of calls) {
    const output = String(part.state.output)
    if (newest.get(`${part.tool} ${JSON.stringify(canonical(part.state.input))}`) === part.callID) continue
    if (output.length < 1000) continue
    const now = sentParts.get(part.callID)
    if (now !== undefined && String(now.state.output).endsWith(output)) {
      return `${String(part.callID)} (${String(part.tool)}) is a duplicate, sent whole`
    }
  }
  return undefined
}

/** A message the user typed: what opens a turn. */
const typed = (message: Msg) =>
  message.info.role === "user" &&
  message.parts.some((part) => part.type === "text" && part.synthetic !== true && part.ignored !== true)

/** The number of turns in `messages` (after the first) whose messages hold a digest: folds seen on the wire. */
const foldedTurns = (messages: ReadonlyArray<Msg>): number => {
  let turns = 0
  let counted = false
  for (const message of messages) {
    if (typed(message)) counted = false
    if (!counted && message.parts.some((part) => part.type === "text" && /^#\d+ /m.test(String(part.text)))) {
      turns++
      counted = true
    }
  }
  return turns
}

// Each generated case runs in its own scope, closed before the next case: its temp dirs and layers do not pile up.
const property = (check: (value: Case) => Effect.Effect<void, unknown, Scope.Scope>) =>
  Effect.promise(() =>
    fc.assert(
      fc.asyncProperty(cases, (value) => Effect.runPromise(Effect.scoped(check(value)))),
      { numRuns: 60 }
    )
  )

describe("what is sent is append-only", () => {
  it.effect("every request sends what the previous one sent, changed only into placeholders and folds", () => {
    let folded = 0
    let deduplicatedChecks = 0
    return Effect.tap(
      property(({ config, pauses, spec }) =>
        Effect.gen(function*() {
          const root = yield* tempDir
          yield* projectConfig(root, config)
          const history = build(spec, session)
          const time = { now: 0 }
          const clock = replayedClock(yield* Clock.clockWith((clock) => Effect.succeed(clock)), time)
          yield* Effect.gen(function*() {
            let previous: Array<Msg> | undefined
            // One request per assistant message (what OpenCode sends before it), and a last one with everything.
            const ends = [
              ...history.flatMap((message, i) => (message.info.role === "assistant" ? [i] : [])),
              history.length
            ]
            for (const [k, end] of ends.entries()) {
              time.now += pauses[k % pauses.length]! * 60_000
              const sent = yield* send(structuredClone(history.slice(0, end)))
              if (previous !== undefined) {
                const problem = violation(previous, sent)
                assert.isUndefined(problem, `request ${k} of ${ends.length}: ${problem}`)
              }
              previous = sent
            }
            folded += foldedTurns(previous ?? [])
            if (config.cache.mode === "immediate") {
              deduplicatedChecks++
              const problem = duplicateSentWhole(history, previous ?? [])
              assert.isUndefined(problem, `the last request: ${problem}`)
            }
          }).pipe(Effect.provide(pluginUnder(root).pipe(Layer.provideMerge(Layer.succeed(Clock.Clock, clock)))))
        })
      ),
      () =>
        Effect.sync(() => {
          assert.isAbove(folded, 0, "some generated sessions fold old turns")
          assert.isAbove(deduplicatedChecks, 0, "some generated sessions run in immediate mode")
        })
    )
  })

  it.effect("in auto mode, a small prune found on a warm cache waits: the next request sends the output unchanged", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      yield* projectConfig(root, { cache: { mode: "auto" } })
      // a.ts read, then read again after a change: the first read is a duplicate (same input), not a repeat.
      const read = (callID: string, value: number) =>
        tool({
          tool: "read",
          callID,
          input: { filePath: "src/a.ts" },
          output: `export const a = ${value}\n`.repeat(40)
        })
      const first: Array<Msg> = [user("look at a.ts", { id: "msg_u1" }), assistant([read("c1", 1)])]
      const second: Array<Msg> = [...first, assistant([read("c2", 2)])]
      const time = { now: 0 }
      const clock = replayedClock(yield* Clock.clockWith((clock) => Effect.succeed(clock)), time)
      const [warm, cold] = yield* Effect.gen(function*() {
        yield* send(fresh(first))
        time.now += 60_000
        const warm = yield* send(fresh(second))
        time.now += 10 * 60_000
        return [warm, yield* send(fresh(second))] as const
      }).pipe(Effect.provide(pluginUnder(root).pipe(Layer.provideMerge(Layer.succeed(Clock.Clock, clock)))))
      // A minute later the cache is warm: the duplicate (~200 tokens) waits, c1 is sent as the first request sent it.
      assert.strictEqual(toolPart(warm, "c1").state.output, `[id 1]\n${"export const a = 1\n".repeat(40)}`)
      // Ten minutes later the cache has expired: the prune costs no rebuild and applies.
      assert.strictEqual(toolPart(cold, "c1").state.output, "[pruned duplicate; recall 1]")
    }))

  it("the check itself catches a message the previous request sent that changed", () => {
    const message = (id: string, output: string, parts: Array<Record<string, any>> = []): Msg => ({
      info: { id, role: "assistant" },
      parts: [...parts, { id: `${id}-p`, type: "tool", callID: `${id}-c`, state: { status: "completed", output } }]
    })
    const before = [message("a", "[id 1]\none"), message("b", "[id 2]\ntwo")]
    assert.isUndefined(violation(before, [...before, message("c", "three")]))
    assert.isDefined(violation(before, [message("a", "[id 1]\none"), message("b", "TWO")]))
    assert.isUndefined(violation(before, [message("a", "[id 1]\none"), message("b", "[pruned; recall 2]")]))
    assert.isDefined(violation(before, [message("a", "[id 1]\none")]))
    const digest = { id: "a-folded", type: "text", text: "[folded tool calls]\n#1 read a.ts" }
    assert.isUndefined(violation(before, [{ info: before[0]!.info, parts: [digest] }, before[1]!]))
    const wrongDigest = { ...digest, text: "[folded tool calls]\n#7 read a.ts" }
    assert.isDefined(violation(before, [{ info: before[0]!.info, parts: [wrongDigest] }, before[1]!]))
    const withText = [message("a", "[id 1]\none", [{ type: "text", text: "Let me look." }]), before[1]!]
    assert.isDefined(violation(withText, [{ info: before[0]!.info, parts: [digest] }, before[1]!]))
  })

  it("the model of deduplication catches an older duplicate sent whole", () => {
    const output = "x".repeat(2000)
    const part = (callID: string, sentOutput = output) => ({
      type: "tool",
      tool: "read",
      callID,
      state: { status: "completed", input: { filePath: "a.ts", offset: null }, output: sentOutput }
    })
    const history: Array<Msg> = [{ info: { id: "m", role: "assistant" }, parts: [part("c1"), part("c2")] }]
    assert.isDefined(duplicateSentWhole(history, history))
    const sent: Array<Msg> = [{
      info: { id: "m", role: "assistant" },
      parts: [part("c1", "[pruned; recall 1]"), part("c2")]
    }]
    assert.isUndefined(duplicateSentWhole(history, sent))
  })
})
