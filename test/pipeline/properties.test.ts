import { assert, describe, it } from "@effect/vitest"
import { Effect, type Scope } from "effect"
import fc from "fast-check"
import { isDigest as isFoldDigest } from "../../src/engine/fold.ts"
import { contentInputs } from "../../src/engine/strategies/supersedeWrites.ts"
import {
  build,
  type GeneratedConfig,
  generatedConfig,
  type HistorySpec,
  historySpec,
  matchesProtectedPattern
} from "../support/generate.ts"
import { type Msg, syntheticId, user } from "../support/history.ts"
import { assertNoDanglingPointer, namedCopy, sentWhole, withRepeatsOf } from "../support/pointers.ts"
import { pluginUnder, tempDir } from "../support/layers.ts"
import { projectConfig } from "../support/pluginTest.ts"
import { send, stateOf, withoutTail } from "./helpers.ts"

const session = "ses_property0000000000000001"
const runs = { numRuns: 60 }
const cases: fc.Arbitrary<[HistorySpec, GeneratedConfig]> = fc.tuple(historySpec(), generatedConfig)

const oneIn = (n: number) =>
  fc.oneof({ weight: n - 1, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) })

/** Histories in which some tool calls repeat an earlier completed call exactly (test/support/pointers.ts). */
const withRepeats = (options: { readonly maxMessages: number }): fc.Arbitrary<HistorySpec> =>
  fc.tuple(historySpec(options), fc.array(oneIn(3), { minLength: 48, maxLength: 48 })).map(([spec, repeats]) =>
    withRepeatsOf(spec, repeats)
  )

/**
 * Checks `check` on generated values. Each run is an Effect program with its own scope (temp dirs, layers); a
 * failure is reported with fast-check's shrunk counterexample.
 */
const property = <T>(
  arbitrary: fc.Arbitrary<T>,
  check: (value: T) => Effect.Effect<void, unknown, Scope.Scope>,
  parameters: fc.Parameters<[T]> = runs
) =>
  Effect.promise(() =>
    fc.assert(fc.asyncProperty(arbitrary, (value) => Effect.runPromise(Effect.scoped(check(value)))), parameters)
  )

/**
 * One request in a fresh plugin under a fresh root with `config` as the project config: what it sends, and the stable
 * IDs it gave the calls.
 */
const sendFresh = (messages: Array<Msg>, config: object, host = {}) =>
  Effect.gen(function*() {
    const root = yield* tempDir
    yield* projectConfig(root, config)
    const [output, state] = yield* Effect.all([send(structuredClone(messages)), stateOf(session)]).pipe(
      Effect.provide(pluginUnder(root, { host }))
    )
    return { output, ids: state.ids }
  })

/** A placeholder for the call with stable ID `id`: every kind ends with the ID it can be recalled by. */
const isPlaceholder = (value: unknown, id: number | undefined) =>
  typeof value === "string" && value.startsWith("[") &&
  (value.endsWith(`; recall ${id}]`) || value.endsWith(`; id ${id}]`))

/**
 * A file change's output whose language server errors (everything from OpenCode's `LSP errors detected` heading on)
 * were replaced by a placeholder, the confirmation before them sent as it came.
 */
const errorsReplaced = (sent: unknown, original: unknown, id: number | undefined) => {
  const at = typeof original === "string" ? original.indexOf("\n\nLSP errors detected ") : -1
  return typeof sent === "string" && at >= 0 && sent.startsWith(`${(original as string).slice(0, at)}\n\n`) &&
    isPlaceholder(sent.slice(at + 2), id)
}

/** A text sent as it came, or under the `[id N]` tag of the call with stable ID `id`. */
const sentAsIs = (sent: unknown, original: unknown, id: number | undefined) =>
  sent === original || (typeof original === "string" && id !== undefined && sent === `[id ${id}]\n${original}`)

interface CallView {
  readonly part: Record<string, any>
  readonly turn: number
}

/** Every tool part of the input, with the turn it belongs to (step-start parts before it). */
const callsOf = (messages: ReadonlyArray<Msg>): { calls: Array<CallView>; turns: number } => {
  const calls: Array<CallView> = []
  let turns = 0
  for (const message of messages) {
    for (const part of message.parts) {
      if (part.type === "step-start") turns++
      if (part.type === "tool") calls.push({ part, turn: turns })
    }
  }
  return { calls, turns }
}

const partOf = (messages: ReadonlyArray<Msg>, callID: string) =>
  messages.flatMap((message) => message.parts).find((part) => part.callID === callID) as Record<string, any> | undefined

/** A message the user typed: what opens a turn. */
const typed = (message: Msg) =>
  message.info.role === "user" &&
  message.parts.some((part) => part.type === "text" && part.synthetic !== true && part.ignored !== true)

/** Each message's turn: how many messages the user typed precede it, itself included. */
const turnOfEach = (messages: ReadonlyArray<Msg>): Array<number> => {
  let turn = 0
  return messages.map((message) => (typed(message) ? ++turn : turn))
}

const isDigest = (part: Record<string, any>) => isFoldDigest(part)

/** The stable IDs the digests of folded turns (src/engine/fold.ts) name, and the turns they are in. */
const foldsOf = (output: ReadonlyArray<Msg>) => {
  const named = new Set<number>()
  const turns = new Set<number>()
  const turnOf = turnOfEach(output)
  output.forEach((message, m) => {
    for (const part of message.parts) {
      if (!isDigest(part)) continue
      turns.add(turnOf[m]!)
      for (const [, id] of String(part.text).matchAll(/^#(\d+) /gm)) named.add(Number(id))
    }
  })
  return { named, turns }
}

/**
 * Only content changes: message structure, IDs, roles and tool metadata stay. The one exception is a folded turn,
 * whose tool parts (but those kept in place) and reasoning leave, one digest text naming each call by its ID.
 */
const assertSameStructure = (
  input: ReadonlyArray<Msg>,
  output: ReadonlyArray<Msg>,
  ids: Readonly<Record<string, number>>
) => {
  const extra = output.length - input.length
  assert.isTrue(extra === 0 || (extra === 1 && output[output.length - 1]!.info.id === syntheticId), "message count")
  const folds = foldsOf(output)
  const turnOf = turnOfEach(input)
  const gone: Array<number> = []
  input.forEach((message, i) => {
    const sent = output[i]!
    assert.deepStrictEqual(sent.info, message.info, "message info")
    const inFold = folds.turns.has(turnOf[i]!)
    const expected = message.parts.filter((part) => {
      const folded = part.type === "tool" && folds.named.has(ids[String(part.callID)]!)
      if (folded) gone.push(ids[String(part.callID)]!)
      return !folded && !(inFold && part.type === "reasoning")
    })
    const parts = sent.parts.filter((part) => !isDigest(part))
    assert.strictEqual(parts.length, expected.length, "part count")
    expected.forEach((part, j) => {
      const out = parts[j] as Record<string, any>
      if (part.type !== "tool") {
        assert.deepStrictEqual(out, part, "non-tool part")
        return
      }
      const { state: before, ...fields } = part as Record<string, any>
      const { state: after, ...outFields } = out
      const id = ids[String(part.callID)]
      assert.deepStrictEqual(outFields, fields, "tool part fields (id, callID, tool, ...)")
      assert.strictEqual(after.status, before.status, "status")
      assert.isTrue(sentAsIs(after.error, before.error, id), `error text, under its ID tag at most: ${after.error}`)
      if (!sentAsIs(after.output, before.output, id)) {
        assert.isTrue(
          isPlaceholder(after.output, id) || errorsReplaced(after.output, before.output, id),
          `output replaced by a placeholder: ${String(after.output).slice(0, 80)}`
        )
      }
      assert.deepStrictEqual(
        Object.keys(after.input ?? {}).sort(),
        Object.keys(before.input ?? {}).sort(),
        "input keys"
      )
      for (const [key, value] of Object.entries(before.input ?? {})) {
        if (JSON.stringify(after.input[key]) !== JSON.stringify(value))
          assert.isTrue(isPlaceholder(after.input[key], id), `input ${key}`)
      }
      const { output: _o, input: _i, error: _e, attachments: _a, ...restBefore } = before
      const { output: _o2, input: _i2, error: _e2, attachments: _a2, ...restAfter } = after
      assert.deepStrictEqual(restAfter, restBefore, "other state fields")
    })
  })
  assert.deepStrictEqual(gone.sort((a, b) => a - b), [...folds.named].sort((a, b) => a - b), "calls the digests name")
}

const fileOf = (part: Record<string, any>): string | undefined =>
  ["read", "write", "edit"].includes(part.tool) && typeof part.state?.input?.filePath === "string"
    ? part.state.input.filePath
    : undefined

/** A tool part with the `[id N]` tag of the call with stable ID `id` taken off the head of its output or error. */
const untagged = (part: Record<string, any>, id: number | undefined): Record<string, any> => {
  const state = { ...part.state }
  for (const key of ["output", "error"]) {
    if (typeof state[key] === "string" && state[key].startsWith(`[id ${id}]\n`))
      state[key] = state[key].slice(`[id ${id}]\n`.length)
  }
  return { ...part, state }
}

/**
 * Protected calls are never pruned: always-protected tools and protected files reach the model exactly as they came
 * (write/edit: all but their content inputs and the language server errors their result reported); a turn-protected call may carry its ID tag, which it gets at its first
 * send so that it can be discarded once older, and nothing else changes.
 */
const assertProtectedUntouched = (
  input: ReadonlyArray<Msg>,
  output: ReadonlyArray<Msg>,
  config: GeneratedConfig,
  ids: Readonly<Record<string, number>>
) => {
  const { calls, turns } = callsOf(input)
  const { named } = foldsOf(output)
  for (const { part, turn } of calls) {
    const sent = partOf(output, part.callID)
    const file = fileOf(part)
    const byPattern = file !== undefined &&
      config.protectedFilePatterns.some((pattern) => matchesProtectedPattern(pattern, file))
    const recent = config.turnProtection.enabled && turns - turn < config.turnProtection.turns
    if (sent === undefined) {
      // Folded: never a protected call (a file change may be, once a rule pruned its content).
      assert.isTrue(named.has(ids[part.callID]!), `${part.tool} ${part.callID} named by a digest`)
      assert.isFalse(byPattern || recent || part.tool === "task" || part.tool === "todowrite", `folded ${part.callID}`)
      continue
    }
    if (byPattern || part.tool === "task" || part.tool === "todowrite") {
      assert.deepStrictEqual(sent, part, `protected ${part.tool} ${part.callID}`)
    } else if (recent) {
      assert.deepStrictEqual(untagged(sent, ids[part.callID]), part, `turn-protected ${part.tool} ${part.callID}`)
    } else if (part.tool === "write" || part.tool === "edit") {
      const strip = (p: Record<string, any>) => {
        const input = { ...p.state.input }
        for (const key of contentInputs[p.tool]!) delete input[key]
        return { ...p, state: { ...p.state, input, output: undefined } }
      }
      assert.deepStrictEqual(strip(sent), strip(part), `${part.tool} ${part.callID} beyond its content`)
      const id = ids[part.callID]
      assert.isTrue(
        sent.state.output === part.state.output || errorsReplaced(sent.state.output, part.state.output, id),
        `${part.tool} ${part.callID}: its result as it came, or only the errors it reported replaced`
      )
    }
  }
}

/** A message as a provider receives it, after OpenCode's conversion (src/simulator/wire.ts says how it converts). */
interface ModelMessage {
  readonly role: "user" | "assistant" | "tool"
  readonly calls: ReadonlyArray<string>
  readonly content: number
}

/**
 * The model messages OpenCode makes of what the transform sends: a user message's text and files; an assistant message
 * cut at every step-start, each step an assistant message (text, signed reasoning, tool calls) followed by a tool
 * message with the results of its calls; anything with nothing to send left out.
 */
const modelMessages = (messages: ReadonlyArray<Msg>): Array<ModelMessage> => {
  const out: Array<ModelMessage> = []
  for (const message of messages) {
    if (message.info.role === "user") {
      const content = message.parts.filter((part) =>
        (part.type === "text" && part.ignored !== true && part.text !== "") || part.type === "file"
      ).length
      if (content > 0)
        out.push({ role: "user", calls: [], content })
      continue
    }
    let content = 0
    let calls: Array<string> = []
    const step = () => {
      if (content + calls.length > 0) out.push({ role: "assistant", calls, content })
      if (calls.length > 0) out.push({ role: "tool", calls, content: calls.length })
      content = 0
      calls = []
    }
    for (const part of message.parts) {
      if (part.type === "step-start") step()
      else if (part.type === "text" && part.text !== "") content++
      else if (part.type === "reasoning" && part.metadata?.anthropic?.signature != null) content++
      else if (part.type === "tool") {
        assert.include(["pending", "running", "completed", "error"], part.state?.status, `tool part ${part.callID}`)
        calls.push(String(part.callID))
      }
    }
    step()
  }
  return out
}

/** No tool result without its call, none of a call without its result, each once; the conversation opens with the user. */
const assertProviderShape = (messages: ReadonlyArray<ModelMessage>) => {
  assert.strictEqual(messages[0]?.role, "user", "the first message is the user's")
  const seen = new Set<string>()
  messages.forEach((message, i) => {
    if (message.role === "tool") {
      const call = messages[i - 1]
      assert.strictEqual(call?.role, "assistant", "a tool message follows an assistant message")
      assert.deepStrictEqual(message.calls, call!.calls, "the results of the calls just made, in their order")
    }
    if (message.role === "assistant" && message.calls.length > 0) {
      assert.strictEqual(messages[i + 1]?.role, "tool", "an assistant message's calls are answered next")
      for (const callID of message.calls) {
        assert.isFalse(seen.has(callID), `call ${callID} sent once`)
        seen.add(callID)
      }
    }
  })
}

/** `before` named a copy that `output` no longer sends whole, and `after` is the repeat's own placeholder, naming none. */
const droppedPointer = (before: unknown, after: unknown, id: number | undefined, output: ReadonlyArray<Msg>) => {
  const copy = namedCopy(before)
  return copy !== undefined && sentWhole(output, copy) === undefined &&
    typeof after === "string" && new RegExp(`^\\[pruned(?:: [^;\\]]+)?; (?:recall|id) ${id}\\]$`).test(after)
}

describe("transform properties over generated histories", () => {
  it.effect("never changes message counts, IDs, roles, tool names or callIDs; only content, and folded calls into a digest", () =>
    property(cases, ([spec, config]) =>
      Effect.gen(function*() {
        const messages = build(spec, session)
        const { ids, output } = yield* sendFresh(messages, config)
        assertSameStructure(messages, output, ids)
      })))

  it.effect("what is sent stays valid for every provider: each tool call's result follows it, in order, once", () =>
    property(cases, ([spec, config]) =>
      Effect.gen(function*() {
        const messages = build(spec, session)
        const { output } = yield* sendFresh(messages, config)
        assertProviderShape(modelMessages(output))
      })))

  it.effect("never prunes a protected call: always-protected tools, protected files, turn-protected calls", () =>
    property(cases, ([spec, config]) =>
      Effect.gen(function*() {
        const messages = build(spec, session)
        const { ids, output } = yield* sendFresh(messages, config)
        assertProtectedUntouched(messages, output, config, ids)
      })))

  it.effect("two fresh copies of the same input give byte-identical output, in fresh plugins and in the steady state", () =>
    property(cases, ([spec, config]) =>
      Effect.gen(function*() {
        const messages = build(spec, session)
        const root = yield* tempDir
        yield* projectConfig(root, config)
        const [first, second] = yield* Effect.all([
          send(structuredClone(messages)),
          send(structuredClone(messages))
        ]).pipe(Effect.provide(pluginUnder(root)))
        const { output: other } = yield* sendFresh(messages, config)
        assert.strictEqual(JSON.stringify(other), JSON.stringify(first), "fresh plugin")
        // The trailing note is per request by design: the session's pace changed between the two (a nudge that did
        // not pay back within one request may pay back within two).
        assert.strictEqual(
          JSON.stringify(withoutTail(second)),
          JSON.stringify(withoutTail(first)),
          "second request in the same session"
        )
      })))

  it.effect("a sub-agent session is returned untouched, byte for byte", () =>
    property(cases, ([spec, config]) =>
      Effect.gen(function*() {
        const messages = build(spec, session)
        const before = JSON.stringify(messages)
        const { output } = yield* sendFresh(messages, config, { sessions: { [session]: { parentID: "ses_parent" } } })
        assert.strictEqual(JSON.stringify(output), before)
      })))

  it.effect("a prune once applied stays applied, with the same bytes, as the history grows", () =>
    property(fc.tuple(withRepeats({ maxMessages: 12 }), generatedConfig), ([spec, config]) =>
      Effect.gen(function*() {
        const messages = build(spec, session)
        const root = yield* tempDir
        yield* projectConfig(root, { ...config, strategies: { repeats: { enabled: true } } })
        yield* Effect.gen(function*() {
          const applied = new Map<string, string>()
          const digests = new Set<string>()
          for (let n = 1; n <= messages.length; n++) {
            const output = withoutTail(yield* send(structuredClone(messages.slice(0, n))))
            const { ids } = yield* stateOf(session)
            const sentDigests = new Set(
              output.flatMap((message) => message.parts).filter(isDigest).map((part) => String(part.text))
            )
            for (const digest of digests) assert.isTrue(sentDigests.has(digest), `a digest sent before is sent again`)
            const { named } = foldsOf(output)
            for (const [callID, bytes] of applied) {
              const part = partOf(output, callID)
              // Folded after its prune: its turn's digest stands for it from then on.
              if (part === undefined && named.has(ids[callID]!)) continue
              const sent = JSON.stringify(part)
              // A repeat's pointer goes in the request that stops sending the copy it names (which precedes it).
              const dropped = part !== undefined &&
                droppedPointer(JSON.parse(bytes).state.output, part.state.output, ids[callID], output)
              assert.isTrue(
                sent === bytes || dropped,
                `${callID} was sent as ${bytes.slice(0, 300)}\nthen as ${String(sent).slice(0, 300)}`
              )
            }
            for (const digest of sentDigests) digests.add(digest)
            const { calls } = callsOf(messages.slice(0, n))
            for (const { part } of calls) {
              const sent = partOf(output, part.callID)
              if (sent === undefined) continue
              // A tag is not a prune: a call tagged on its first send may be pruned later.
              if (JSON.stringify(untagged(sent, ids[part.callID])) !== JSON.stringify(part)) {
                applied.set(part.callID, JSON.stringify(sent))
              }
            }
          }
        }).pipe(Effect.provide(pluginUnder(root)))
      })))
  it.effect("no placeholder points at a copy the request does not send whole, in either cache mode", () =>
    property(fc.tuple(withRepeats({ maxMessages: 12 }), generatedConfig), ([spec, config]) =>
      Effect.gen(function*() {
        const messages = build(spec, session)
        for (const mode of ["auto", "immediate"] as const) {
          const root = yield* tempDir
          yield* projectConfig(root, { ...config, cache: { mode }, strategies: { repeats: { enabled: true } } })
          yield* Effect.gen(function*() {
            for (let n = 1; n <= messages.length; n++) {
              const input = messages.slice(0, n)
              assertNoDanglingPointer(input, withoutTail(yield* send(structuredClone(input))))
            }
          }).pipe(Effect.provide(pluginUnder(root)))
        }
      })))

  it.effect("after an undo, what is sent is what a plugin that never saw the undone messages sends", () =>
    property(
      fc.tuple(historySpec({ maxMessages: 12 }), generatedConfig, fc.nat()),
      ([spec, config, cut]) =>
        Effect.gen(function*() {
          // Prunes applied at once, by the rules that look at nothing but the view: then the request is a function of
          // the view alone, and an undo may leave no trace of what it took out. A fold is not: it keeps the calls of a
          // turn that were pruned when it was sent, byte for byte (test/pipeline/fold.test.ts has its undo cases).
          const settings = {
            ...config,
            cache: { mode: "immediate" },
            strategies: { repeats: { enabled: false }, staleOutputs: { enabled: false }, fold: { enabled: false } }
          }
          const messages = build(spec, session)
          const afterUndo = [...messages.slice(0, 1 + cut % messages.length), user("do it another way", { session })]
          const root = yield* tempDir
          yield* projectConfig(root, settings)
          const undone = yield* Effect.gen(function*() {
            for (let n = 1; n <= messages.length; n++) yield* send(structuredClone(messages.slice(0, n)))
            return yield* send(structuredClone(afterUndo))
          }).pipe(Effect.provide(pluginUnder(root)))
          const { output } = yield* sendFresh(afterUndo, settings)
          assert.strictEqual(JSON.stringify(withoutTail(undone)), JSON.stringify(withoutTail(output)))
        })
    ))
})
