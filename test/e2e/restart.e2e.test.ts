import { writeFile } from "node:fs/promises"
import { assert, beforeAll, describe, it } from "vitest"
import { call, done, placeholder, read, sourceFile } from "./support/fixtures.ts"
import type { RecordedRequest } from "./support/model-server.ts"
import { requestAfter, resultOf } from "./support/requests.ts"
import { globalConfig, type Scenario, useScenario } from "./support/scenario.ts"

const files = { "src/a.ts": sourceFile("alpha"), "src/b.ts": sourceFile("beta"), "src/c.ts": sourceFile("gamma") }

const anHour = 3600
/** The TTL the restarted OpenCode reads in the test where the cache has expired. */
const aSecond = 1

const autoWithTtl = (ttlSeconds: number) =>
  `${JSON.stringify({ ...globalConfig, cache: { mode: "auto", ttlSeconds } })}\n`

const withTtlOfAnHour = { ...files, ".opencode/dcp.jsonc": autoWithTtl(anHour) }

/** A session before the restart: its ID, and the request that carried the calls the test follows. */
interface Before {
  readonly session: string
  readonly request: RecordedRequest
}

/** Reads a.ts, b.ts twice, then discards a.ts (a model's decision: a fresh process could not derive it again). */
const discardAndDuplicate = async (s: Scenario): Promise<Before> => {
  const session = await s.newSession()
  s.model.script([
    read(s, "src/a.ts", "rs_1"),
    read(s, "src/b.ts", "rs_2"),
    read(s, "src/b.ts", "rs_3"),
    call("discard", { ids: ["noise", "1"] }, "rs_4"),
    done
  ])
  await s.prompt(session, "read a.ts, b.ts twice, then discard a.ts")
  // The run is over once its note is stored: that is when a user could quit.
  await s.waitForNote(session, "discarded")
  return { session, request: requestAfter(s.requests(), "rs_4") }
}

/**
 * A small duplicate found on a warm cache waits (auto mode, far below `cache.minPruneTokens`). After a restart the
 * plugin has not sent a request of the session yet: whether the cache is still warm comes from the time of the
 * history's latest request, so the duplicate still waits within `cache.ttlSeconds` and is applied after it.
 *
 * Before the restart the TTL is an hour, so the duplicate waits however long the machine takes between requests;
 * `ttlAfterRestart` is the TTL the restarted OpenCode reads.
 */
const pendingDuplicate = async (s: Scenario, ttlAfterRestart: number): Promise<Before> => {
  const session = await s.newSession()
  s.model.script([read(s, "src/a.ts", "ttl_1"), read(s, "src/a.ts", "ttl_2"), done])
  await s.prompt(session, "read a.ts twice")
  await s.waitIdle(session)
  await writeFile(s.path(".opencode/dcp.jsonc"), autoWithTtl(ttlAfterRestart))
  return { session, request: requestAfter(s.requests(), "ttl_2") }
}

/** The first request after the restart: the duplicate's first read as sent then. */
const afterRestart = async (s: Scenario, session: string) => {
  s.model.script([done])
  await s.prompt(session, "thanks")
  const request = s.requests().at(-1)!
  // The plugin is at work in the restarted process either way: the newer read carries its stable ID.
  assert.match(resultOf(request, "ttl_2") ?? "", /^\[id 2\]\n/)
  return resultOf(request, "ttl_1")
}

/**
 * A restart of OpenCode with sessions of three projects on it, each test following one of them. Their sessions are
 * made before one restart, which the three share: a restart costs OpenCode's start-up and each project's again.
 */
describe("a restart of OpenCode", () => {
  const survivor = useScenario({ files })
  const withinTtl = useScenario({ files: withTtlOfAnHour })
  const pastTtl = useScenario({ files: withTtlOfAnHour })
  const before: {
    survivor?: Before
    withinTtl?: Before
    pastTtl?: Before
  } = {}

  beforeAll(async () => {
    before.survivor = await discardAndDuplicate(survivor())
    before.withinTtl = await pendingDuplicate(withinTtl(), anHour)
    before.pastTtl = await pendingDuplicate(pastTtl(), aSecond)
    await survivor().restart()
  })

  it("pruned state and stable IDs survive it", async () => {
    const s = survivor()
    const { session, request } = before.survivor!
    const discarded = resultOf(request, "rs_1")
    const duplicate = resultOf(request, "rs_2")
    assert.match(discarded ?? "", placeholder("[pruned: src/a.ts lines 1-60; id 1]"))
    assert.match(duplicate ?? "", placeholder("[pruned duplicate: src/b.ts lines 1-60; id 2]"))

    s.model.script([read(s, "src/c.ts", "rs_5"), done])
    await s.prompt(session, "now read c.ts")

    const after = requestAfter(s.requests(), "rs_5")
    assert.strictEqual(resultOf(after, "rs_1"), discarded)
    assert.strictEqual(resultOf(after, "rs_2"), duplicate)
    assert.match(resultOf(after, "rs_3") ?? "", /^\[id 3\]\n[\s\S]*beta line 59/)
    assert.match(resultOf(after, "rs_5") ?? "", /^\[id 5\]\n/)
  })

  it("within cache.ttlSeconds of the session's latest request keeps a pending prune waiting: the provider's cache is still warm", async () => {
    const { session, request } = before.withinTtl!
    assert.include(resultOf(request, "ttl_1"), 'alpha59 = "alpha line 59"')
    assert.include(await afterRestart(withinTtl(), session), 'alpha59 = "alpha line 59"')
  })

  it("longer than cache.ttlSeconds after the session's latest request applies the pending prune on the first request: the cache has expired", async () => {
    const { session, request } = before.pastTtl!
    assert.include(resultOf(request, "ttl_1"), 'alpha59 = "alpha line 59"')
    // Past the TTL since the history's latest request, however long the restart took: the plugin's clock is ahead.
    const sent = await pastTtl().clockAhead(aSecond + 1, () => afterRestart(pastTtl(), session))
    assert.match(sent ?? "", placeholder("[pruned duplicate: src/a.ts lines 1-60; id 1]"))
  })
})
