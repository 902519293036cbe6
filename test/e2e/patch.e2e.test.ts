import { readFile } from "node:fs/promises"
import { assert, describe, it } from "vitest"
import { call, done, holdsPlaceholder, placeholder, read, sourceFile } from "./support/fixtures.ts"
import {
  argumentsOf,
  contentText,
  messageText,
  occurrences,
  requestAfter,
  requestText,
  resultOf,
  toolNames
} from "./support/requests.ts"
import type { RecordedRequest } from "./support/model-server.ts"
import { useScenario } from "./support/scenario.ts"

type Message = RecordedRequest["messages"][number]

// OpenCode 1.18 gives models whose ID names GPT (but not gpt-4 or an open-weights one) `apply_patch` instead of
// `write` and `edit`: their file changes are patches.
const scenario = useScenario({ mainModel: "gpt-5-fake", files: { "src/a.ts": sourceFile("alpha") } })

const marker = "PATCH_MARKER_5c1e"

/** A patch of the sections' lines, as a GPT model sends it. */
const patch = (...lines: ReadonlyArray<string>): string => ["*** Begin Patch", ...lines, "*** End Patch"].join("\n")

/** The lines of a section adding `path` with `content`. */
const adding = (path: string, content: string): ReadonlyArray<string> => [
  `*** Add File: ${path}`,
  ...content.trimEnd().split("\n").map((line) => `+${line}`)
]

/** The lines of a section replacing line 3 of a `sourceFile(name)` with `line`. */
const changingLine3 = (path: string, name: string, line: string): ReadonlyArray<string> => [
  `*** Update File: ${path}`,
  "@@",
  `-export const ${name}3 = "${name} line 3"`,
  `+${line}`
]

const patchText = patch(
  ...changingLine3("src/a.ts", "alpha", `export const alpha3 = "${marker} in a.ts"`),
  ...adding("src/new.ts", `export const added = "${marker} in new.ts"\n${sourceFile("added", 40)}`)
)

/**
 * The messages of the model's requests (those offering `apply_patch`: not OpenCode's title agent's) that differ from
 * what the previous request sent at the same place; the user's context notes, which the plugin stores and OpenCode
 * sends once, left out.
 */
const changedMessages = (requests: ReadonlyArray<RecordedRequest>) => {
  const bodies = requests.filter((body) => toolNames(body).includes("apply_patch"))
  const isNote = (message: Message) =>
    message.role === "user" && contentText(message.content).startsWith("[Context note")
  const changed: Array<{ readonly after: Message; readonly at: string }> = []
  for (let k = 1; k < bodies.length; k++) {
    const before = bodies[k - 1]!.messages.filter((message) => !isNote(message))
    const after = bodies[k]!.messages
    for (let m = 0; m < before.length; m++) {
      if (JSON.stringify(before[m]) !== JSON.stringify(after[m]))
        changed.push({ after: after[m]!, at: `request ${k}, message ${m}` })
    }
  }
  return changed
}

describe("a GPT model's file changes (apply_patch)", () => {
  it("a patch reaches the model as a placeholder once every file it changed was read again; the note names its files; recall returns it", async () => {
    const s = scenario()
    const session = await s.newSession()
    s.model.script([
      read(s, "src/a.ts", "patch_1"),
      call("apply_patch", { patchText }, "patch_2"),
      read(s, "src/a.ts", "patch_3"),
      read(s, "src/new.ts", "patch_4"),
      call("recall", { ids: [2] }, "patch_5"),
      done
    ])
    await s.prompt(session, "change a.ts and add new.ts in one patch, read both, then recall the patch")

    const first = s.requests()[0]!
    assert.include(toolNames(first), "apply_patch")
    assert.notInclude(toolNames(first), "edit")
    assert.include(await readFile(s.path("src/a.ts"), "utf8"), `${marker} in a.ts`)
    assert.include(await readFile(s.path("src/new.ts"), "utf8"), `${marker} in new.ts`)

    // One of its two files read again: the patch is still sent as the model wrote it.
    const halfRead = requestAfter(s.requests(), "patch_3")
    assert.deepStrictEqual(argumentsOf(halfRead, "patch_2"), { patchText })

    const bothRead = requestAfter(s.requests(), "patch_4")
    assert.match(
      String(argumentsOf(bothRead, "patch_2")?.patchText),
      placeholder("[pruned patchText; the files were read again later; id 2]")
    )
    assert.strictEqual(occurrences(requestText(bothRead), `${marker} in new.ts`), 1)
    assert.include(resultOf(bothRead, "patch_4"), `${marker} in new.ts`)

    assert.match(
      await s.waitForNote(session, "apply_patch"),
      /\b2 {2}apply_patch src\/a\.ts, src\/new\.ts {2}superseded write\b/
    )
    const recalled = requestAfter(s.requests(), "patch_5")
    assert.include(resultOf(recalled, "patch_5"), "*** Add File: src/new.ts")
    assert.include(resultOf(recalled, "patch_5"), `${marker} in a.ts`)
  })

  it("every message a request sent is sent again byte-identical, except where the patch's prune now applies", async () => {
    const s = scenario()
    const session = await s.newSession()
    const first = s.requests().length
    s.model.script([
      read(s, "src/a.ts", "same_1"),
      call("apply_patch", { patchText: patchText.replaceAll("src/new.ts", "src/other.ts") }, "same_2"),
      read(s, "src/a.ts", "same_3"),
      read(s, "src/other.ts", "same_4"),
      done
    ])
    await s.prompt(session, "change a.ts and add other.ts in one patch, then read both")

    const changed = changedMessages(s.requests().slice(first))
    assert.isAbove(changed.length, 0)
    for (const { after, at } of changed) assert.strictEqual(holdsPlaceholder(messageText(after)), true, at)
  })
})

describe("a GPT model's read-backs and working files, with repeats on and stale outputs masked after the 2 most recent calls", () => {
  const working = useScenario({
    mainModel: "gpt-5-fake",
    files: {
      "src/a.ts": sourceFile("alpha"),
      "src/b.ts": sourceFile("beta"),
      "src/c.ts": sourceFile("gamma"),
      ".opencode/dcp.jsonc": `${
        JSON.stringify({
          strategies: { repeats: { enabled: true }, staleOutputs: { trigger: 1000, keepRecent: 2, clearAtLeast: 0 } }
        })
      }\n`
    }
  })

  it("the patch that added a file being changed stays in full, as its only copy; an older file's read is masked", async () => {
    const s = working()
    const session = await s.newSession()
    const made = `MADE_MARKER_9d04`
    const add = patch(...adding("src/made.ts", `export const made = "${made}"\n${sourceFile("made", 40)}`))
    const update = patch(...changingLine3("src/made.ts", "made", 'export const made3 = "made line three"'))
    s.model.script([
      read(s, "src/a.ts", "made_1"),
      call("apply_patch", { patchText: add }, "made_2"),
      read(s, "src/b.ts", "made_3"),
      read(s, "src/c.ts", "made_4"),
      call("apply_patch", { patchText: update }, "made_5"),
      call("bash", { command: "echo one", description: "Print one" }, "made_6"),
      call("bash", { command: "echo two", description: "Print two" }, "made_7"),
      done
    ])
    await s.prompt(session, "read a.ts, add made.ts, read two files, change made.ts, then run two commands")

    assert.include(await readFile(s.path("src/made.ts"), "utf8"), "made line three")
    // The working files are made.ts (added, then patched last), c.ts and b.ts; a.ts was read before all three.
    const last = requestAfter(s.requests(), "made_7")
    assert.deepStrictEqual(argumentsOf(last, "made_2"), { patchText: add })
    assert.match(resultOf(last, "made_1") ?? "", placeholder("[pruned: src/a.ts lines 1-60; id 1]"))
    assert.include(resultOf(last, "made_4"), 'gamma59 = "gamma line 59"')
  })

  it("the read-back of a file the patch just added reaches the model as a pointer to the patch, sent whole, from its first send", async () => {
    const s = working()
    const session = await s.newSession()
    const added = patch(...adding("src/back.ts", sourceFile("back", 40)))
    const first = s.requests().length
    s.model.script([
      call("apply_patch", { patchText: added }, "back_1"),
      read(s, "src/back.ts", "back_2"),
      call("bash", { command: "echo read", description: "Print read" }, "back_3"),
      done
    ])
    await s.prompt(session, "add back.ts, read it, then run a command")

    assert.include(await readFile(s.path("src/back.ts"), "utf8"), 'back39 = "back line 39"')
    const readBack = requestAfter(s.requests(), "back_2")
    assert.match(
      resultOf(readBack, "back_2") ?? "",
      placeholder("[the same content as the earlier write of this file; id 2]")
    )
    assert.deepStrictEqual(argumentsOf(readBack, "back_1"), { patchText: added })
    // The pointer was there from the read's first send: every request sends what the one before it sent, unchanged.
    assert.deepStrictEqual(changedMessages(s.requests().slice(first)), [])
  })
})

describe("a GPT model in a subdirectory of a git repository (a monorepo package)", () => {
  const nested = useScenario({
    mainModel: "gpt-5-fake",
    inGitSubdirectory: true,
    files: { "src/a.ts": sourceFile("alpha") }
  })

  it("a patch's paths are the package's, as OpenCode resolves them: a read of the file supersedes the patch", async () => {
    const s = nested()
    const session = await s.newSession()
    const update = patch(...changingLine3("src/a.ts", "alpha", `export const alpha3 = "${marker} in the package"`))
    s.model.script([call("apply_patch", { patchText: update }, "pkg_1"), read(s, "src/a.ts", "pkg_2"), done])
    await s.prompt(session, "change a.ts, then read it")

    assert.include(await readFile(s.path("src/a.ts"), "utf8"), `${marker} in the package`)
    const afterRead = requestAfter(s.requests(), "pkg_2")
    // OpenCode names the file relative to the repository: the worktree is not the directory.
    assert.match(resultOf(afterRead, "pkg_1") ?? "", /\bM pkg\/src\/a\.ts\b/)
    assert.match(
      String(argumentsOf(afterRead, "pkg_1")?.patchText),
      placeholder("[pruned patchText; the file was read again later; id 1]")
    )
  })
})
