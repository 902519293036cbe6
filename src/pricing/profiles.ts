/**
 * How a provider bills the input of a request, and so what a prune is worth: the one definition of prices and cache
 * rules shared by the plugin (when to apply prunes, what `/dcp stats` reports) and the cost model of the offline
 * analyser and the benchmark (src/analysis/cost.ts). Prices are relative to an uncached input token (1). The price of
 * an output token matters only where the plugin changes what the model writes: the summaries of the compactions a
 * session makes (Claude and GPT-5 models bill output at 5x and 8x their input).
 *
 * - `anthropic`: explicit breakpoints. OpenCode 1.18 marks the first 2 system messages and the last 2 non-system
 *   messages of the request it sends. An entry is written only at a breakpoint, for the prefix ending there; a request
 *   reads an entry whose prefix ends at most `lookbackBlocks` content blocks before one of its own breakpoints;
 *   prefixes under `minTokens` are not cached; an entry lives `ttlSeconds` from its last use. Read 0.1, write 1.25
 *   (`anthropic-1h`: the 1-hour TTL, written at 2). So a change anywhere but the last few blocks makes the provider
 *   write everything after the system prompt again.
 * - `openai`: automatic prefix caching from `minTokens` in 128-token steps, no write premium, cached reads 0.1 (GPT-5
 *   family); Gemini's implicit caching bills the same way.
 * - `per-request`: GitHub Copilot bills by request, whatever its size: only room in the context window matters.
 * - `none`: no prompt cache (local servers, or a provider without one): every token sent costs 1.
 */
export type PricingKind = "anthropic" | "openai" | "per-request" | "none"

export const pricingNames = ["anthropic", "anthropic-1h", "openai", "per-request", "none"] as const
export type PricingName = (typeof pricingNames)[number]

export interface PricingProfile {
  readonly name: PricingName
  readonly kind: PricingKind
  /** Price of an input token read from the cache. */
  readonly read: number
  /** Price of an input token written to the cache (1 where writing costs nothing extra). */
  readonly write: number
  /** How long an entry lives after its last use. */
  readonly ttlSeconds: number
  /** The shortest prefix the provider caches, in tokens. */
  readonly minTokens: number
  /** Anthropic: how many content blocks before a breakpoint a request still finds an earlier entry. */
  readonly lookbackBlocks: number
  /** Price of an output token (0 where a request costs the same whatever it holds). */
  readonly output: number
}

export const profiles: Readonly<Record<PricingName, PricingProfile>> = {
  anthropic: {
    name: "anthropic",
    kind: "anthropic",
    read: 0.1,
    write: 1.25,
    ttlSeconds: 300,
    minTokens: 1024,
    lookbackBlocks: 20,
    output: 5
  },
  "anthropic-1h": {
    name: "anthropic-1h",
    kind: "anthropic",
    read: 0.1,
    write: 2,
    ttlSeconds: 3600,
    minTokens: 1024,
    lookbackBlocks: 20,
    output: 5
  },
  openai: {
    name: "openai",
    kind: "openai",
    read: 0.1,
    write: 1,
    ttlSeconds: 300,
    minTokens: 1024,
    lookbackBlocks: 0,
    output: 8
  },
  "per-request": {
    name: "per-request",
    kind: "per-request",
    read: 1,
    write: 1,
    ttlSeconds: 0,
    minTokens: 0,
    lookbackBlocks: 0,
    output: 0
  },
  none: { name: "none", kind: "none", read: 1, write: 1, ttlSeconds: 0, minTokens: 0, lookbackBlocks: 0, output: 1 }
}

/** The model of a request as far as pricing goes. `npm`: the AI SDK package OpenCode uses for it, when known. */
export interface PricedModel {
  readonly providerID: string
  readonly modelID: string
  readonly npm?: string | undefined
}

const names = (model: PricedModel) => [model.providerID, model.modelID].map((name) => name.toLowerCase())

/**
 * The profile a provider bills by. GitHub Copilot bills per request, whatever the model. Anthropic's rules exactly
 * where OpenCode 1.18 writes cache breakpoints: a provider or model whose name says Anthropic or Claude (direct,
 * Bedrock, Vertex, OpenRouter), or the Anthropic SDK package. Local servers bill nothing per token. Everyone else is priced as automatic prefix
 * caching (OpenAI, Gemini, DeepSeek, xAI and most others cache that way).
 */
export const profileFor = (model: PricedModel): PricingProfile => {
  const [provider, id] = names(model)
  if (provider!.includes("github-copilot")) return profiles["per-request"]
  if (
    model.npm === "@ai-sdk/anthropic" ||
    [provider!, id!].some((name) => name.includes("anthropic") || name.includes("claude"))
  ) {
    return profiles.anthropic
  }
  if (localProviders.has(provider!)) return profiles.none
  return profiles.openai
}

const localProviders: ReadonlySet<string> = new Set(["ollama", "lmstudio", "llama.cpp", "llamacpp", "vllm", "local"])
