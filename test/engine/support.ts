/**
 * Helpers for the pure engine tests: a `ToolCall` factory (the indexed form of a tool part, built directly without
 * the ToolCache), protection rules over a fixed worktree, and a synchronous indexer for OpenCode-shaped histories.
 */
import { NodePath } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { defaultConfig, type PluginConfig } from "../../src/config/schema.ts"
import { applyRendered, render } from "../../src/engine/apply.ts"
import { fileFieldsOf, keyParameterOf, signatureOf, type ToolCall } from "../../src/engine/calls.ts"
import { type RecallHint, idOnlyHint } from "../../src/engine/placeholders.ts"
import { makeProtection, type Protection, type ProtectionOptions } from "../../src/engine/protection.ts"
import type { Reason } from "../../src/engine/reasons.ts"
import type { Candidate } from "../../src/engine/strategies/candidate.ts"
import { trackView, type ViewState, viewCandidates } from "../../src/engine/view.ts"
import type { PruneRecord } from "../../src/state/schema.ts"
import type { ToolStatus } from "../../src/host/schema.ts"
import { Tokenizer } from "../../src/services/Tokenizer.ts"
import type { ToolIndex } from "../../src/engine/calls.ts"
import { ToolCache } from "../../src/services/ToolCache.ts"
import { sessionID } from "../support/history.ts"
import { pathsUnder } from "../support/paths.ts"
import { tokenizerWith } from "../support/layers.ts"

/** The worktree of `pathsUnder("/root")`, so calls built here and calls indexed by the ToolCache agree. */
export const worktree = "/root/project"

export interface CallSpec {
  readonly tool: string
  readonly input?: Record<string, unknown>
  readonly callID?: string
  readonly status?: ToolStatus
  readonly error?: string
  /** Completed calls have a string output unless this is false. */
  readonly hasTextOutput?: boolean
  readonly compacted?: boolean
  readonly outputTokens?: number
  /** Of those, in the language server's errors a file change's output reports (default none). */
  readonly diagnosticsTokens?: number
  /** Defaults to about four characters a token for every non-empty string input, as the estimate tokenizer counts. */
  readonly inputTokens?: Record<string, number>
  readonly turn?: number
  readonly userTurn?: number
  readonly frameTokens?: number
  readonly exitCode?: number
  /** A read's first and last numbered line (default none). */
  readonly lines?: readonly [number, number]
  readonly position?: number
  readonly messageIndex?: number
  readonly partIndex?: number
  /** The project directory paths are resolved against, and shown relative to (default `worktree`). */
  readonly directory?: string
}

let counter = 0

/** One indexed tool call, with key argument, file path and signature derived exactly as the ToolCache does. */
export const call = (spec: CallSpec): ToolCall => {
  const input = spec.input ?? {}
  const status = spec.status ?? (spec.error === undefined ? "completed" : "error")
  const inputTokens: Record<string, number> = {}
  for (const [key, value] of Object.entries(input)) {
    if (typeof value === "string" && value.length > 0) inputTokens[key] = Math.ceil(value.length / 4)
  }
  const hasTextOutput = status === "completed" && (spec.hasTextOutput ?? true)
  const compacted = spec.compacted ?? false
  const outputTokens = hasTextOutput && !compacted ? (spec.outputTokens ?? 500) : 0
  const tokensIn = spec.inputTokens ?? inputTokens
  return {
    callID: spec.callID ?? `call_${++counter}`,
    tool: spec.tool,
    input,
    status,
    error: status === "error" ? (spec.error ?? "failed") : undefined,
    hasTextOutput,
    compacted,
    resultLength: -1,
    ...fileFieldsOf(spec.tool, input, spec.directory ?? worktree),
    keyParameter: keyParameterOf(spec.tool, input, spec.directory ?? worktree),
    signature: signatureOf(spec.tool, input),
    outputTokens,
    diagnosticsTokens: spec.diagnosticsTokens ?? 0,
    inputTokens: tokensIn,
    totalTokens: Object.values(tokensIn).reduce((sum, n) => sum + n, outputTokens),
    frameTokens: spec.frameTokens ?? 0,
    exitCode: spec.exitCode,
    lines: spec.lines,
    id: undefined,
    turn: spec.turn ?? 1,
    userTurn: spec.userTurn ?? 0,
    position: spec.position ?? 0,
    messageIndex: spec.messageIndex ?? 0,
    partIndex: spec.partIndex ?? 0,
    seen: 1,
    finalPass: status === "completed" || status === "error" ? 1 : undefined
  }
}

/** Calls in the order the model sees them: positions follow the array, call IDs default to `c1`, `c2`, ... */
export const history = (specs: ReadonlyArray<CallSpec>): Array<ToolCall> =>
  specs.map((spec, i) => call({ callID: `c${i + 1}`, position: i, ...spec }))

/** Protection over `worktree`: no patterns, turn protection off, unless given. */
export const protect = (options: Partial<ProtectionOptions> = {}): Protection =>
  makeProtection({
    patterns: [],
    roots: [worktree],
    turnProtection: { enabled: false, turns: 4 },
    currentTurn: 1,
    ...options
  })

/** The default strategy settings with some keys replaced. */
export const strategies = (
  overrides: { readonly [K in keyof PluginConfig["strategies"]]?: Partial<PluginConfig["strategies"][K]> } = {}
): PluginConfig["strategies"] => ({
  deduplication: { ...defaultConfig.strategies.deduplication, ...overrides.deduplication },
  supersedeWrites: { ...defaultConfig.strategies.supersedeWrites, ...overrides.supersedeWrites },
  purgeErrors: { ...defaultConfig.strategies.purgeErrors, ...overrides.purgeErrors },
  staleOutputs: { ...defaultConfig.strategies.staleOutputs, ...overrides.staleOutputs },
  repeats: { ...defaultConfig.strategies.repeats, ...overrides.repeats },
  fold: { ...defaultConfig.strategies.fold, ...overrides.fold }
})

/** The default strategy settings with only `name` enabled, with some of its keys replaced. */
export const alone = <K extends keyof PluginConfig["strategies"]>(
  name: K,
  settings: Partial<PluginConfig["strategies"][K]> = {}
): PluginConfig["strategies"] => {
  const off = { enabled: false }
  return strategies({
    deduplication: off,
    supersedeWrites: off,
    purgeErrors: off,
    staleOutputs: off,
    repeats: off,
    fold: off,
    [name]: { enabled: true, ...settings }
  })
}

/**
 * The request path's state of the view `calls` built afresh (`trackView` with no earlier state): what it builds on a
 * session's first request and whenever the state is rebuilt. A state extended request by request must give the same
 * (test/engine/view.test.ts).
 */
export const freshViewState = (
  calls: ReadonlyArray<ToolCall>,
  options: {
    readonly pruned?: ReadonlyMap<string, PruneRecord>
    readonly protection?: Protection
    readonly config?: PluginConfig
  } = {}
): ViewState => {
  for (const call of calls) call.id ??= call.position + 1
  return trackView(undefined, {
    calls,
    reReads: new Map(),
    pass: 1,
    previousPass: undefined,
    appendOnly: false,
    pruned: options.pruned ?? new Map(),
    revision: 0,
    nudgeAfter: 0,
    config: options.config ?? defaultConfig,
    protection: options.protection ?? protect(),
    recallHint: idOnlyHint,
    messages: [],
    folds: new Map(),
    userTurns: [],
    byCallId: new Map()
  })
}

/** The automatic rules' candidates as the request path finds them in a view built afresh (`freshView`). */
export const automaticCandidates = (input: {
  readonly calls: ReadonlyArray<ToolCall>
  readonly pruned: ReadonlySet<string> | ReadonlyMap<string, unknown>
  readonly restored?: ReadonlySet<string>
  readonly protection: Protection
  readonly strategies: PluginConfig["strategies"]
  readonly currentTurn: number
  readonly contextTokens?: number
}): Array<Candidate> => {
  const viewState = freshViewState(input.calls, {
    pruned: new Map([...input.pruned.keys()].map((callID) => [callID, { reason: "discard", tokens: 0, at: 0 }])),
    protection: input.protection,
    config: { ...defaultConfig, strategies: input.strategies }
  })
  return viewCandidates(viewState, input)
}

/** A prune as the request path applies it. */
export interface AppliedPrune {
  readonly call: ToolCall
  readonly reason: Reason
  readonly id: number
}

/**
 * Writes prunes into `messages` the way the request path's view does (`render`, then `applyRendered`); returns how
 * many parts changed.
 */
export const applyPrunes = (
  messages: ReadonlyArray<unknown>,
  prunes: Iterable<AppliedPrune>,
  recallHint: RecallHint
): number => {
  let changed = 0
  for (const { call, id, reason } of prunes) {
    const texts = render(call, { reason }, id, recallHint)
    if (texts !== undefined && applyRendered(messages, call, texts)) changed++
  }
  return changed
}

/** About four characters a token: predictable counts for the indexed histories. */
const quarterTokens = (text: string) => Math.ceil(text.length / 4)

const indexLayer = (tokenizer: Layer.Layer<Tokenizer>) =>
  ToolCache.layer.pipe(
    Layer.provide(tokenizer),
    Layer.provide(pathsUnder("/root")),
    Layer.provide(NodePath.layer)
  )

/** Indexes OpenCode-shaped `messages` with a fresh ToolCache, as the transform does before running the engine. */
export const indexOf = (messages: ReadonlyArray<unknown>): ToolIndex =>
  Effect.runSync(
    Effect.gen(function*() {
      return yield* (yield* ToolCache).sync(sessionID, messages)
    }).pipe(
      Effect.provide(indexLayer(tokenizerWith(quarterTokens)))
    )
  )

/**
 * Indexes several views of one session in order (e.g. before and after a compaction) with the same ToolCache,
 * returning the index of each.
 */
export const indexViews = (views: ReadonlyArray<ReadonlyArray<unknown>>): Array<ToolIndex> =>
  Effect.runSync(
    Effect.gen(function*() {
      const cache = yield* ToolCache
      return yield* Effect.forEach(views, (view) => cache.sync(sessionID, view))
    }).pipe(
      Effect.provide(indexLayer(tokenizerWith(quarterTokens)))
    )
  )

/** The ToolCache over the real o200k tokenizer, and that tokenizer, for tests that measure what is sent. */
export const realIndexLayer = ToolCache.layer.pipe(
  Layer.provide(pathsUnder("/root")),
  Layer.provide(NodePath.layer),
  Layer.provideMerge(Tokenizer.layer)
)

/**
 * The `patchText` of an OpenCode `apply_patch` call, from sections made by `updateFile`, `addFile` and `deleteFile`.
 */
export const patchText = (...sections: ReadonlyArray<string>): string =>
  ["*** Begin Patch", ...sections, "*** End Patch"].join("\n")

const hunkLines = (lines: number, make: (i: number) => ReadonlyArray<string>) =>
  Array.from({ length: lines }, (_, i) => make(i)).flat()

/** A section updating `path` (moving it to `moveTo` when given): `lines` changed lines. */
export const updateFile = (path: string, lines = 10, moveTo?: string): string =>
  [
    `*** Update File: ${path}`,
    ...(moveTo === undefined ? [] : [`*** Move to: ${moveTo}`]),
    "@@ export const config = {",
    ...hunkLines(lines, (i) => [`-  old${i}: ${i},`, `+  new${i}: ${i},`])
  ].join("\n")

/** A section adding `path` with `lines` lines. */
export const addFile = (path: string, lines = 10): string =>
  [`*** Add File: ${path}`, ...hunkLines(lines, (i) => [`+export const line${i} = ${i}`])].join("\n")

export const deleteFile = (path: string): string => `*** Delete File: ${path}`
