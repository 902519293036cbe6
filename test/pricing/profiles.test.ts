import { describe, expect, it } from "vitest"
import { profileFor } from "../../src/pricing/profiles.ts"

const profile = (providerID: string, modelID: string, npm?: string) => profileFor({ providerID, modelID, npm }).name

describe("profileFor: the pricing a provider bills by", () => {
  it("is Anthropic's wherever OpenCode writes Anthropic cache breakpoints", () => {
    expect(profile("anthropic", "claude-sonnet-4-5")).toBe("anthropic")
    expect(profile("amazon-bedrock", "anthropic.claude-opus-4-1")).toBe("anthropic")
    expect(profile("openrouter", "anthropic/claude-haiku-4.5")).toBe("anthropic")
    expect(profile("my-proxy", "sonnet", "@ai-sdk/anthropic")).toBe("anthropic")
    expect(profile("fake", "claude-fake")).toBe("anthropic")
  })

  it("is per request for GitHub Copilot, whatever the model", () => {
    expect(profile("github-copilot", "claude-sonnet-4")).toBe("per-request")
    expect(profile("github-copilot", "gpt-5")).toBe("per-request")
  })

  it("is no cache for local servers, and prefix caching for the rest", () => {
    expect(profile("ollama", "qwen3-coder")).toBe("none")
    expect(profile("openai", "gpt-5")).toBe("openai")
    expect(profile("google", "gemini-2.5-pro")).toBe("openai")
  })
})
