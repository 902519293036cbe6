import { assert, describe, it } from "vitest"
import { profileFor } from "../../src/pricing/profiles.ts"

const profile = (providerID: string, modelID: string, npm?: string) => profileFor({ providerID, modelID, npm }).name

describe("profileFor: the pricing a provider bills by", () => {
  it("is Anthropic's wherever OpenCode writes Anthropic cache breakpoints", () => {
    assert.strictEqual(profile("anthropic", "claude-sonnet-4-5"), "anthropic")
    assert.strictEqual(profile("amazon-bedrock", "anthropic.claude-opus-4-1"), "anthropic")
    assert.strictEqual(profile("openrouter", "anthropic/claude-haiku-4.5"), "anthropic")
    assert.strictEqual(profile("my-proxy", "sonnet", "@ai-sdk/anthropic"), "anthropic")
    assert.strictEqual(profile("fake", "claude-fake"), "anthropic")
  })

  it("is per request for GitHub Copilot, whatever the model", () => {
    assert.strictEqual(profile("github-copilot", "claude-sonnet-4"), "per-request")
    assert.strictEqual(profile("github-copilot", "gpt-5"), "per-request")
  })

  it("is no cache for local servers, and prefix caching for the rest", () => {
    assert.strictEqual(profile("ollama", "qwen3-coder"), "none")
    assert.strictEqual(profile("openai", "gpt-5"), "openai")
    assert.strictEqual(profile("google", "gemini-2.5-pro"), "openai")
  })
})
