import { assert, describe, it } from "vitest"
import {
  agentSwitch as agentSwitchOf,
  latestTurn,
  modelSwitched as modelSwitchedOf,
  requestTimes
} from "../../src/host/messages.ts"

const message = (role: string, time?: unknown) => ({
  info: { role, sessionID: "ses_x", ...(time === undefined ? {} : { time }) },
  parts: []
})

describe("requestTimes", () => {
  it("is the creation time of every assistant message, oldest first", () => {
    assert.deepStrictEqual(
      requestTimes([
        message("user", { created: 1 }),
        message("assistant", { created: 2 }),
        message("assistant", { created: 5 }),
        message("user", { created: 9 })
      ]),
      [2, 5]
    )
  })

  it("is empty without an assistant message", () => {
    assert.deepStrictEqual(requestTimes([message("user", { created: 1 })]), [])
    assert.deepStrictEqual(requestTimes([]), [])
  })

  it("skips assistant messages with no usable time", () => {
    for (const time of [undefined, null, {}, { created: "yesterday" }, { created: Number.NaN }]) {
      assert.deepStrictEqual(requestTimes([message("assistant", { created: 3 }), message("assistant", time)]), [3])
    }
  })

  it("skips entries that are not messages", () => {
    assert.deepStrictEqual(requestTimes([message("assistant", { created: 4 }), null, 42, { info: "x" }]), [4])
  })
})

const modelSwitched = (messages: ReadonlyArray<unknown>) => modelSwitchedOf(latestTurn(messages))
const agentSwitch = (messages: ReadonlyArray<unknown>) => agentSwitchOf(latestTurn(messages))

const asked = (modelID: string, providerID = "anthropic", variant?: string) => ({
  info: {
    role: "user",
    sessionID: "ses_x",
    model: { providerID, modelID, ...(variant === undefined ? {} : { variant }) }
  },
  parts: []
})
const answered = (modelID: string, providerID = "anthropic", variant?: string) => ({
  info: { role: "assistant", sessionID: "ses_x", providerID, modelID, ...(variant === undefined ? {} : { variant }) },
  parts: []
})

describe("modelSwitched", () => {
  it("is true when the newest user message asks another model than the one that answered last", () => {
    assert.isTrue(modelSwitched([asked("claude-sonnet"), answered("claude-sonnet"), asked("claude-opus")]))
  })

  it("is true when only the provider differs", () => {
    assert.isTrue(modelSwitched([asked("claude-sonnet"), answered("claude-sonnet"), asked("claude-sonnet", "bedrock")]))
  })

  it("is true when the user picked another variant (a Claude model's thinking settings) of the same model", () => {
    assert.isTrue(
      modelSwitched([asked("claude-sonnet"), answered("claude-sonnet"), asked("claude-sonnet", "anthropic", "high")])
    )
    assert.isTrue(
      modelSwitched([
        asked("claude-sonnet", "anthropic", "high"),
        answered("claude-sonnet", "anthropic", "high"),
        asked("claude-sonnet", "anthropic", "max")
      ])
    )
  })

  it('is false for the same variant, and takes OpenCode\'s "default" variant for none', () => {
    assert.isFalse(
      modelSwitched([
        asked("claude-sonnet", "anthropic", "high"),
        answered("claude-sonnet", "anthropic", "high"),
        asked("claude-sonnet", "anthropic", "high")
      ])
    )
    assert.isFalse(
      modelSwitched([asked("claude-sonnet"), answered("claude-sonnet"), asked("claude-sonnet", "anthropic", "default")])
    )
  })

  it("is false for the same model, in a new turn or within one", () => {
    assert.isFalse(modelSwitched([asked("claude-sonnet"), answered("claude-sonnet"), asked("claude-sonnet")]))
    assert.isFalse(modelSwitched([asked("claude-opus"), answered("claude-opus"), answered("claude-opus")]))
  })

  it("is false within the turn after a switch, once the new model has answered", () => {
    assert.isFalse(
      modelSwitched([asked("claude-sonnet"), answered("claude-sonnet"), asked("claude-opus"), answered("claude-opus")])
    )
  })

  it("is false on a session's first request, and when either message does not say its model", () => {
    assert.isFalse(modelSwitched([asked("claude-sonnet")]))
    assert.isFalse(modelSwitched([asked("claude-sonnet"), message("assistant"), message("user")]))
    assert.isFalse(modelSwitched([asked("claude-sonnet"), message("assistant")]))
    assert.isFalse(modelSwitched([]))
  })
})

const by = (role: string, agent?: string) => ({
  info: { role, sessionID: "ses_x", ...(agent === undefined ? {} : { agent }) },
  parts: []
})

describe("agentSwitch", () => {
  it("names the agent that answered last and the one the newest user message goes to, when they differ", () => {
    assert.deepStrictEqual(agentSwitch([by("user", "build"), by("assistant", "build"), by("user", "reviewer")]), {
      from: "build",
      to: "reviewer"
    })
  })

  it("is undefined for the same agent, and within the turn after a switch once the new agent has answered", () => {
    assert.isUndefined(agentSwitch([by("user", "build"), by("assistant", "build"), by("user", "build")]))
    assert.isUndefined(
      agentSwitch([by("user", "build"), by("assistant", "build"), by("user", "plan"), by("assistant", "plan")])
    )
  })

  it("reads the agent of an assistant message that names it as its mode only", () => {
    const answeredIn = (mode: string) => ({ info: { role: "assistant", sessionID: "ses_x", mode }, parts: [] })
    assert.deepStrictEqual(agentSwitch([by("user", "build"), answeredIn("build"), by("user", "docs")]), {
      from: "build",
      to: "docs"
    })
  })

  it("is undefined on a session's first request, and when either message does not say its agent", () => {
    assert.isUndefined(agentSwitch([by("user", "build")]))
    assert.isUndefined(agentSwitch([by("user", "build"), by("assistant"), by("user", "plan")]))
    assert.isUndefined(agentSwitch([by("user", "build"), by("assistant", "build"), by("user")]))
  })
})
