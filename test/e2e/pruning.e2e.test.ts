import { describe, expect, it } from "vitest"
import { call, done, placeholder, read, sourceFile } from "./support/fixtures.ts"
import {
  argumentsOf,
  lastMessageText,
  occurrences,
  requestAfter,
  requestText,
  resultOf,
  systemText,
  toolNames
} from "./support/requests.ts"
import { useScenario } from "./support/scenario.ts"

// The default configuration (with prunes applied at once, see scenario.ts). Each test runs in its own session of one
// shared `opencode serve`, so stable IDs start at 1 in each.
const scenario = useScenario({
  files: { "src/a.ts": sourceFile("alpha"), "src/b.ts": sourceFile("beta"), "src/c.ts": sourceFile("gamma") }
})

const block = /^<prunable-tools>\n[\s\S]*\n<\/prunable-tools>$/

describe("the plugin in a main session", () => {
  it("loads: discard and extract are offered, the system section is sent", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([done])
    await s.prompt(session, "hello")

    const [first] = s.requests()
    expect(toolNames(first!)).toEqual(expect.arrayContaining(["discard", "extract"]))
    expect(systemText(first!)).toContain("## Context pruning")
  })

  it("deduplication: the older of two identical reads reaches the model as a placeholder", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([read(s, "src/a.ts", "dup_1"), read(s, "src/a.ts", "dup_2"), done])
    await s.prompt(session, "read a.ts twice")

    const request = requestAfter(s.requests(), "dup_2")
    expect(resultOf(request, "dup_1")).toMatch(placeholder("[pruned duplicate: read src/a.ts, ~N tokens; id 1]"))
    expect(resultOf(request, "dup_2")).toContain('alpha59 = "alpha line 59"')
    expect(await s.waitForNote(session, "duplicate")).toMatch(/\b1 {2}read src\/a\.ts {2}duplicate\b/)
  })

  it("supersede writes: written content that was read back reaches the model once", async () => {
    const s = scenario()
    const session = await s.newSession()
    const marker = "SUPERSEDE_MARKER_7f3a"
    const content = `export const marker = "${marker}"\n${sourceFile("delta", 40)}`
    s.model.script([
      call("write", { filePath: s.path("src/new.ts"), content }, "write_1"),
      read(s, "src/new.ts", "write_2"),
      done
    ])
    await s.prompt(session, "write new.ts, then read it")

    const beforeRead = requestAfter(s.requests(), "write_1")
    expect(occurrences(requestText(beforeRead), marker)).toBe(1)
    const afterRead = requestAfter(s.requests(), "write_2")
    expect(occurrences(requestText(afterRead), marker)).toBe(1)
    expect(resultOf(afterRead, "write_2")).toContain(marker)
    expect(argumentsOf(afterRead, "write_1")?.content).toMatch(
      placeholder("[pruned content: ~N tokens; the file was read again later; id 1]")
    )
  })

  it("the <prunable-tools> block is the last message of every request, listing calls by stable ID", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([read(s, "src/a.ts", "tail_1"), read(s, "src/b.ts", "tail_2"), done])
    await s.prompt(session, "read a.ts and b.ts")

    const requests = s.requests()
    expect(requests.length).toBe(3)
    for (const request of requests) {
      expect(systemText(request)).toContain("## Context pruning")
      expect(lastMessageText(request).trim()).toMatch(block)
    }
    const last = lastMessageText(requestAfter(requests, "tail_2"))
    expect(last).toMatch(/^1: read, src\/a\.ts\b/m)
    expect(last).toMatch(/^2: read, src\/b\.ts\b/m)
  })

  it("discard and extract called by the model: outputs pruned, distillation kept, cooldown, one note", async () => {
    const s = scenario()
    const session = await s.newSession()
    const finding = "FINDING_MARKER_b52e beta exports beta0 to beta59"
    s.model.script([
      read(s, "src/a.ts", "dx_1"),
      read(s, "src/b.ts", "dx_2"),
      call("discard", { ids: ["noise", "1"] }, "dx_3"),
      read(s, "src/c.ts", "dx_4"),
      call("extract", { ids: ["2"], distillation: [finding] }, "dx_5"),
      done
    ])
    await s.prompt(session, "read, then prune")
    const requests = s.requests()

    const afterDiscard = requestAfter(requests, "dx_3")
    expect(resultOf(afterDiscard, "dx_3")).toContain("Discarded 1 output")
    expect(resultOf(afterDiscard, "dx_1")).toMatch(placeholder("[pruned: read src/a.ts, ~N tokens; id 1]"))
    expect(resultOf(afterDiscard, "dx_2")).toContain("beta line 59")
    expect(lastMessageText(afterDiscard)).toContain("Context was just pruned")

    // After the next tool call the list is back, without the discarded call.
    const listedAgain = lastMessageText(requestAfter(requests, "dx_4"))
    expect(listedAgain).toMatch(/^2: read, src\/b\.ts/m)
    expect(listedAgain).toMatch(/^4: read, src\/c\.ts/m)
    expect(listedAgain).not.toMatch(/^1: /m)

    const afterExtract = requestAfter(requests, "dx_5")
    expect(resultOf(afterExtract, "dx_5")).toContain("Extracted 1 output")
    expect(resultOf(afterExtract, "dx_2")).toMatch(placeholder("[pruned after extract: read src/b.ts, ~N tokens; id 2]"))
    expect(argumentsOf(afterExtract, "dx_5")?.distillation).toEqual([finding])
    expect(occurrences(requestText(afterExtract), "beta line 59")).toBe(0)
    expect(lastMessageText(afterExtract)).toContain("Context was just pruned")

    const note = await s.waitForNote(session, "extracted")
    expect(note).toMatch(/\b1 {2}read src\/a\.ts {2}discarded\b/)
    expect(note).toMatch(/\b2 {2}read src\/b\.ts {2}extracted\b/)
  })
})

// Still to add, when the features land: every `/dcp` subcommand and the `recall` tool.
describe("to add when /dcp commands and recall land", () => {
  it.todo("/dcp lists the subcommands in an ignored note, with no model turn")
  it.todo("/dcp context shows the token breakdown (system, user, assistant, tools) and the pruned share")
  it.todo("/dcp stats shows this session's and the lifetime totals after a prune")
  it.todo("/dcp sweep prunes every call since the last user message; /dcp sweep 2 the last two; a bad n is an error")
  it.todo("/dcp restore <id> and /dcp restore all send the original output again from the next request")
  it.todo("recall({ ids }) returns a pruned call's original content to the model")
  it.todo("commands.enabled: false removes /dcp")
  it.todo('cache.mode "auto" (the default): automatic prunes wait until worth it; discard and extract apply at once')
})
