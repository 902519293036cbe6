import { expect, it } from "vitest"
import { call, done, placeholder, read, sourceFile } from "./support/fixtures.ts"
import { lastMessageText, requestAfter, resultOf } from "./support/requests.ts"
import { useScenario } from "./support/scenario.ts"

const scenario = useScenario({
  files: { "src/a.ts": sourceFile("alpha"), "src/b.ts": sourceFile("beta"), "src/c.ts": sourceFile("gamma") }
})

it("pruned state and stable IDs survive a restart of OpenCode", async () => {
  const s = scenario()
  const session = await s.newSession()
  // A discard is the model's decision: a fresh process could not derive it again from the history.
  s.model.script([
    read(s, "src/a.ts", "rs_1"),
    read(s, "src/b.ts", "rs_2"),
    read(s, "src/b.ts", "rs_3"),
    call("discard", { ids: ["noise", "1"] }, "rs_4"),
    done
  ])
  await s.prompt(session, "read a.ts, b.ts twice, then discard a.ts")
  const before = requestAfter(s.requests(), "rs_4")
  const discarded = resultOf(before, "rs_1")
  const duplicate = resultOf(before, "rs_2")
  expect(discarded).toMatch(placeholder("[pruned: read src/a.ts, ~N tokens; id 1]"))
  expect(duplicate).toMatch(placeholder("[pruned duplicate: read src/b.ts, ~N tokens; id 2]"))
  // The run is over once its note is stored: that is when a user could quit.
  await s.waitForNote(session, "discarded")

  await s.restart()
  s.model.script([read(s, "src/c.ts", "rs_5"), done])
  await s.prompt(session, "now read c.ts")

  const after = requestAfter(s.requests(), "rs_5")
  expect(resultOf(after, "rs_1")).toBe(discarded)
  expect(resultOf(after, "rs_2")).toBe(duplicate)
  expect(resultOf(after, "rs_3")).toContain("beta line 59")
  const list = lastMessageText(after)
  expect(list).toMatch(/^3: read, src\/b\.ts/m)
  expect(list).toMatch(/^5: read, src\/c\.ts/m)
  expect(list).not.toMatch(/^[124]: /m)
})
