import { writeFile } from "node:fs/promises"
import { setTimeout as sleep } from "node:timers/promises"
import { assert, describe, it } from "vitest"
import { call, done, placeholder, read, sourceFile } from "./support/fixtures.ts"
import { requestAfter, resultOf } from "./support/requests.ts"
import { globalConfig, type Scenario, useScenario } from "./support/scenario.ts"

const files = { "src/a.ts": sourceFile("alpha"), "src/b.ts": sourceFile("beta"), "src/c.ts": sourceFile("gamma") }

describe("a restart of OpenCode", () => {
  const scenario = useScenario({ files })

  it("pruned state and stable IDs survive it", async () => {
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
    assert.match(discarded ?? "", placeholder("[pruned; id 1]"))
    assert.match(duplicate ?? "", placeholder("[pruned duplicate; id 2]"))
    // The run is over once its note is stored: that is when a user could quit.
    await s.waitForNote(session, "discarded")

    await s.restart()
    s.model.script([read(s, "src/c.ts", "rs_5"), done])
    await s.prompt(session, "now read c.ts")

    const after = requestAfter(s.requests(), "rs_5")
    assert.strictEqual(resultOf(after, "rs_1"), discarded)
    assert.strictEqual(resultOf(after, "rs_2"), duplicate)
    assert.match(resultOf(after, "rs_3") ?? "", /^\[id 3\]\n[\s\S]*beta line 59/)
    assert.match(resultOf(after, "rs_5") ?? "", /^\[id 5\]\n/)
  })
})

const anHour = 3600

const autoWithTtl = (ttlSeconds: number) =>
  `${JSON.stringify({ ...globalConfig, cache: { mode: "auto", ttlSeconds } })}\n`

/**
 * A small duplicate found on a warm cache waits (auto mode, far below `cache.minPruneTokens`). After a restart the
 * plugin has not sent a request of the session yet: whether the cache is still warm comes from the time of the
 * history's latest request, so the duplicate still waits within `cache.ttlSeconds` and is applied after it.
 *
 * Before the restart the TTL is an hour, so the duplicate waits however long the machine takes between requests;
 * `ttlAfterRestart` is the TTL the restarted OpenCode reads.
 */
const pendingDuplicateThenRestart = async (s: Scenario, ttlAfterRestart: number) => {
  const session = await s.newSession()
  s.model.script([read(s, "src/a.ts", "ttl_1"), read(s, "src/a.ts", "ttl_2"), done])
  await s.prompt(session, "read a.ts twice")
  assert.include(resultOf(requestAfter(s.requests(), "ttl_2"), "ttl_1"), 'alpha59 = "alpha line 59"')
  await s.waitIdle(session)
  const latest = s.model.times.at(-1)!
  await writeFile(s.path(".opencode/dcp.jsonc"), autoWithTtl(ttlAfterRestart))
  await s.restart()
  // Past the TTL since the history's latest request (a wait only when the restart took less).
  if (ttlAfterRestart < anHour) await sleep(Math.max(0, latest + (ttlAfterRestart + 1) * 1000 - Date.now()))
  s.model.script([done])
  await s.prompt(session, "thanks")
  const request = s.requests().at(-1)!
  // The plugin is at work in the restarted process either way: the newer read carries its stable ID.
  assert.match(resultOf(request, "ttl_2") ?? "", /^\[id 2\]\n/)
  return resultOf(request, "ttl_1")
}

const withTtlOfAnHour = { ...files, ".opencode/dcp.jsonc": autoWithTtl(anHour) }

describe("a restart within cache.ttlSeconds of the session's latest request", () => {
  const scenario = useScenario({ files: withTtlOfAnHour })

  it("keeps a pending prune waiting: the provider's cache is still warm", async () => {
    assert.include(await pendingDuplicateThenRestart(scenario(), anHour), 'alpha59 = "alpha line 59"')
  })
})

describe("a restart longer than cache.ttlSeconds after the session's latest request", () => {
  const scenario = useScenario({ files: withTtlOfAnHour })

  it("applies the pending prune on the first request: the cache has expired", async () => {
    assert.match(await pendingDuplicateThenRestart(scenario(), 1) ?? "", placeholder("[pruned duplicate; id 1]"))
  })
})
