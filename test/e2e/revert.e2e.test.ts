import { assert, describe, it } from "vitest"
import { call, done, placeholder, read, sourceFile } from "./support/fixtures.ts"
import { requestAfter, resultOf } from "./support/requests.ts"
import { useScenario } from "./support/scenario.ts"

const scenario = useScenario({
  files: {
    "src/a.ts": sourceFile("alpha"),
    "src/b.ts": sourceFile("beta")
  }
})

describe("OpenCode's undo", () => {
  it("takes back the prunes made in the undone turn: the next request sends those outputs whole", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([read(s, "src/a.ts", "undo_1"), read(s, "src/b.ts", "undo_2"), done])
    await s.prompt(session, "read a.ts and b.ts")
    s.model.script([read(s, "src/a.ts", "undo_3"), call("discard", { ids: ["noise", "2"] }, "undo_4"), done])
    await s.prompt(session, "read a.ts again, then drop b.ts")
    const pruned = requestAfter(s.requests(), "undo_4")
    assert.match(resultOf(pruned, "undo_1") ?? "", placeholder("[pruned duplicate: src/a.ts lines 1-60; id 1]"))
    assert.match(resultOf(pruned, "undo_2") ?? "", placeholder("[pruned: src/b.ts lines 1-60; id 2]"))

    const second = (await s.messages(session)).find((message) =>
      message.parts.some((part) => part.text === "read a.ts again, then drop b.ts")
    )!
    const reverted = await s.opencode().api("POST", `/session/${session}/revert`, { messageID: second.info.id })
    assert.strictEqual(reverted.status, 200)
    s.model.script([done])
    await s.prompt(session, "never mind")

    const after = s.requests().at(-1)!
    assert.isUndefined(resultOf(after, "undo_3"))
    assert.match(resultOf(after, "undo_1") ?? "", /^\[id 1\]\n<path>[\s\S]*alpha line 59/)
    assert.match(resultOf(after, "undo_2") ?? "", /^\[id 2\]\n<path>[\s\S]*beta line 59/)
  })
})
