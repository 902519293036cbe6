/**
 * Sessions whose requests do not only grow: the changes a host bug, another plugin's transform or a future host may
 * make to the history it hands the transform, each for one request, the real history coming back on the next. A
 * scenario is a generated history (test/support/generate.ts) and the requests made of it: prefixes of growing length,
 * some changed, some sent again out of order.
 */
import fc from "fast-check"
import { type GeneratedConfig, type HistorySpec, historySpec } from "./generate.ts"
import type { Msg } from "./history.ts"

type Change =
  /** A tool part moved to the start of the next assistant message, before or after its step-start. */
  | { readonly kind: "move"; readonly at: number; readonly beforeStep: boolean }
  /** A message in the middle missing (a user message when there is one). */
  | { readonly kind: "drop"; readonly at: number; readonly user: boolean }
  /** A call sent with another call's tool and input under its own ID. */
  | { readonly kind: "swap"; readonly at: number; readonly from: number }
  /** A call sent under an earlier call's ID. */
  | { readonly kind: "reuse"; readonly at: number; readonly from: number }
  /** A completed call's output changed under the same ID. */
  | { readonly kind: "output"; readonly at: number }

export interface Step {
  /** How many messages of the history the request holds: a step after the newest so far goes back (out of order). */
  readonly grow: number
  readonly change: Change | undefined
}

export interface Scenario {
  readonly spec: HistorySpec
  readonly steps: ReadonlyArray<Step>
}

/** Parts moved and messages missing meet a fold's places more rarely than a changed call meets its number: more often. */
const change: fc.Arbitrary<Change> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("move" as const), at: fc.nat(), beforeStep: fc.boolean() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("drop" as const), at: fc.nat(), user: fc.boolean() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("swap" as const), at: fc.nat(), from: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("reuse" as const), at: fc.nat(), from: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("output" as const), at: fc.nat() }) }
)

/**
 * Steps of a session: mostly one message more than the request before, with a change in about one request of two;
 * now and then a request of fewer messages (an older request arriving late), after which the history grows again.
 */
const steps: fc.Arbitrary<ReadonlyArray<Step>> = fc.array(
  fc.record({
    grow: fc.oneof({ weight: 6, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.integer({ min: -3, max: 0 }) }),
    change: fc.oneof({ weight: 1, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: change })
  }),
  { minLength: 1, maxLength: 40, size: "max" }
)

export const scenario = (
  options: { readonly maxMessages?: number; readonly userWeight?: number } = {}
): fc.Arbitrary<Scenario> => fc.record({ spec: historySpec(options), steps })

/** The requests of a scenario over the built history: each the messages the host hands the transform. */
export const requestsOf = (history: ReadonlyArray<Msg>, scenarioSteps: ReadonlyArray<Step>): Array<Array<Msg>> => {
  const requests: Array<Array<Msg>> = []
  let newest = 0
  for (const step of scenarioSteps) {
    if (newest >= history.length && step.grow > 0) break
    const length = step.grow > 0 ? ++newest : Math.max(1, newest + step.grow)
    const messages = structuredClone(history.slice(0, length)) as Array<Msg>
    if (step.change !== undefined) changed(messages, step.change)
    requests.push(messages)
  }
  return requests
}

type Part = Record<string, any>

const toolParts = (messages: ReadonlyArray<Msg>): Array<{ readonly m: number; readonly p: number; part: Part }> =>
  messages.flatMap((message, m) =>
    message.parts.flatMap((part, p) => (part.type === "tool" ? [{ m, p, part: part as Part }] : []))
  )

/**
 * The `at`th of `items`, counted among the older half: old turns are the ones folded, so that is where a change meets a
 * fold.
 */
const older = <T>(items: ReadonlyArray<T>, at: number): T => items[at % Math.ceil(items.length / 2)]!

/** Applies `change` to one request's messages, in place; a change with nothing to act on leaves them as they are. */
const changed = (messages: Array<Msg>, change: Change): void => {
  const calls = toolParts(messages)
  switch (change.kind) {
    case "move": {
      if (calls.length === 0) return
      const { m, p } = older(calls, change.at)
      const next = messages.findIndex((message, i) => i > m && message.info.role === "assistant")
      if (next < 0) return
      const [part] = messages[m]!.parts.splice(p, 1)
      const target = messages[next]!.parts
      const at = !change.beforeStep && target[0]?.type === "step-start" ? 1 : 0
      target.splice(at, 0, { ...part, messageID: messages[next]!.info.id })
      return
    }
    case "drop": {
      const middle = messages.slice(1, -1).flatMap((message, i) =>
        !change.user || message.info.role === "user" ? [i + 1] : []
      )
      if (middle.length === 0) return
      messages.splice(older(middle, change.at), 1)
      return
    }
    case "swap": {
      if (calls.length < 2) return
      const target = older(calls, change.at).part
      const source = calls[change.from % calls.length]!.part
      if (source.tool === target.tool) return
      target.tool = source.tool
      target.state = structuredClone(source.state)
      return
    }
    case "reuse": {
      if (calls.length < 2) return
      const target = calls[change.at % calls.length]!
      const source = older(calls, change.from)
      if (source === target) return
      target.part.callID = source.part.callID
      return
    }
    case "output": {
      const completed = calls.filter(({ part }) => part.state.status === "completed")
      if (completed.length === 0) return
      const { part } = older(completed, change.at)
      part.state.output = `${String(part.state.output)}\nchanged`
      return
    }
  }
}

/**
 * `config` with masking that takes every output but the newest at once, so that a turn folds as soon as `keepTurns`
 * newer ones follow it, and repeats on or off.
 */
export const eagerFolding = (
  config: GeneratedConfig,
  options: { readonly repeats: boolean; readonly keepTurns: number }
) => ({
  ...config,
  strategies: {
    repeats: { enabled: options.repeats },
    staleOutputs: { trigger: 0, keepRecent: 1, keepFiles: 0, clearAtLeast: 0 },
    fold: { keepTurns: options.keepTurns }
  }
})
