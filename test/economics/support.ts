/**
 * Shared set-up for the context-economics tests: tool output of a known size (the test plugin counts about four
 * characters a token), and the plugin under a test root in the cache's `auto` mode, which the pipeline tests
 * otherwise replace with `immediate`.
 */
import type { Effect } from "effect"
import { TestClock } from "effect/testing"
import { tagFor } from "../../src/engine/apply.ts"
import { system } from "../../src/hooks/system.ts"
import { sessionID, tool } from "../support/history.ts"
import { pipelineTest, pipelineUnder, type PluginUnderOptions } from "../pipeline/helpers.ts"

/** `lines` lines of 48 characters: 12 tokens a line with the estimate tokenizer (plus the newlines). */
export const content = (label: string, lines = 200) =>
  Array.from(
    { length: lines },
    (_, i) => `${label} ${String(i + 1).padStart(4, "0")}: ${"x".repeat(40 - label.length)}`
  )
    .join("\n")

export const read = (callID: string, filePath: string, output = content(filePath)) =>
  tool({ tool: "read", callID, input: { filePath }, output })

/** An output sent whole, as every one large enough to prune is: with its `[id N]` tag at its head. */
export const tagged = (id: number, text: string) => tagFor(id) + text

/** Prunes wait for a trigger; a single read's saving (about 2.5k tokens) is far below `minPruneTokens`. */
export const autoCache = { mode: "auto", minPruneTokens: 100_000, pressure: 0.8, ttlSeconds: 300 } as const

/** The plugin under `root` with the cache in auto mode (`cache` keys override `autoCache`) and `config` on top. */
export const autoUnder = (
  root: string,
  cache: Partial<Record<keyof typeof autoCache, unknown>> = {},
  config: object = {},
  options: PluginUnderOptions = {}
) => pipelineUnder(root, { ...config, cache: { ...autoCache, ...cache } }, options)

/** `pipelineTest` with the cache in auto mode (`cache` keys override `autoCache`) and `config` on top. */
export const autoTest = <A, E, R>(
  body: Effect.Effect<A, E, R> | ((root: string) => Effect.Effect<A, E, R>),
  cache: Partial<Record<keyof typeof autoCache, unknown>> = {},
  config: object = {},
  options: PluginUnderOptions = {}
) => pipelineTest(body, { ...config, cache: { ...autoCache, ...cache } }, options)

/** What OpenCode's system hook reports for a request: the model's provider and context window. */
export const modelRequest = (providerID: string, context: number) =>
  system(sessionID, ["You are OpenCode, the best coding agent on the planet."], {
    id: "model-1",
    providerID,
    limit: { context, output: 8000 }
  })

/** The text a prune leaves in place of an output: `[pruned...: ...; recall N]`. */
export const placeholderPattern = /^\[pruned[^\]]*; (?:recall|id) \d+\]$/

/**
 * Test histories are stamped at the epoch, where the test clock starts: a session's first request then looks like one
 * sent right after the history's latest request (a warm cache). This moves the clock past the cache TTL, as when
 * OpenCode is started again long after the session's last request.
 */
export const muchLater = TestClock.adjust("10 minutes")
