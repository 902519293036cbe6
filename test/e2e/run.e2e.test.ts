import { assert, describe, it } from "vitest"
import { done, read, sourceFile } from "./support/fixtures.ts"
import { runOpenCode } from "./support/opencode.ts"
import { useScenario } from "./support/scenario.ts"

const scenario = useScenario({ files: { "src/a.ts": sourceFile("alpha"), "src/b.ts": sourceFile("beta") } })

interface RunEvent {
  readonly type: string
  readonly sessionID: string
  readonly part?: { readonly text?: string; readonly ignored?: boolean }
}

const events = (stdout: string): Array<RunEvent> =>
  stdout.split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as RunEvent)

/** A session whose one prompt read two files: what `/dcp context` shows is this session's. */
const sessionWithReads = async (s: ReturnType<typeof scenario>, id: string) => {
  const session = await s.newSession()
  s.model.script([read(s, "src/a.ts", `${id}_1`), read(s, "src/b.ts", `${id}_2`), done])
  await s.prompt(session, "read a.ts and b.ts")
  await s.waitIdle(session)
  return session
}

/**
 * The first test runs OpenCode as `opencode run` starts it, a process of its own whose plugin has seen no request of the
 * session. What the others look at, the command line's output and exit status and the session `opencode run` makes, is
 * the same from a client of the running server (`--attach`), which spares each an OpenCode start-up.
 */
describe("/dcp from opencode run", () => {
  it("--command dcp context --session prints that session's note on standard output", async () => {
    const s = scenario()
    const session = await sessionWithReads(s, "run")
    const result = await runOpenCode(s.opencode(), ["--command", "dcp", "context", "--session", session])
    assert.strictEqual(result.code, 0, result.stderr)
    assert.match(result.stdout, /^DCP · Context: [\d,]+ tokens/)
    assert.match(result.stdout, /^ {2}Tools \(2\) +[█░]{24}/m)
  })

  it("with --format json, the note is one text event, as a reply of the model would be", async () => {
    const s = scenario()
    const session = await sessionWithReads(s, "json")
    const result = await runOpenCode(
      s.opencode(),
      ["--command", "dcp", "stats", "--session", session, "--format", "json"],
      true
    )
    assert.strictEqual(result.code, 0, result.stderr)
    const texts = events(result.stdout).filter((event) => event.type === "text")
    assert.lengthOf(texts, 1)
    assert.deepStrictEqual({ sessionID: texts[0]!.sessionID, part: { ignored: texts[0]!.part?.ignored } }, {
      sessionID: session,
      part: { ignored: true }
    })
    assert.match(texts[0]!.part!.text ?? "", /^DCP · This session: /)
    assert.include(texts[0]!.part!.text, "\nAll sessions: ")
  })

  it("without --session, the note is printed and the session made for the command is not left behind", async () => {
    const s = scenario()
    const before = (await s.opencode().api<Array<{ id: string }>>("GET", "/session")).data.map((session) => session.id)
    const result = await runOpenCode(s.opencode(), ["--command", "dcp", "stats", "--format", "json"], true)
    assert.strictEqual(result.code, 0, result.stderr)
    const [text] = events(result.stdout).filter((event) => event.type === "text")
    assert.match(text!.part!.text ?? "", /^DCP · This session: nothing pruned yet\./)
    assert.include(text!.part!.text, "\nAll sessions: ")
    assert.strictEqual((await s.opencode().api("GET", `/session/${text!.sessionID}`)).status, 404)
    const after = (await s.opencode().api<Array<{ id: string }>>("GET", "/session")).data.map((session) => session.id)
    assert.deepStrictEqual(after, before)
  })

  it("an unknown subcommand exits with 1 and prints what is valid, with no model turn", async () => {
    const s = scenario()
    const session = await sessionWithReads(s, "bad")
    const requests = s.requests().length
    const result = await runOpenCode(s.opencode(), ["--command", "dcp", "nonsense", "--session", session], true)
    assert.strictEqual(result.code, 1, result.stdout)
    const message = `Unknown subcommand "nonsense": /dcp takes context, stats, sweep [n], restore <id|all> or help.`
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the colour codes OpenCode prints around "Error:"
    assert.include(result.stderr.replace(/\u001b\[[\d;]*m/g, ""), `Error: ${message}`)
    assert.strictEqual(result.stdout.replace(/\s+/g, " ").trim(), `DCP · ${message}`)
    assert.strictEqual(s.requests().length, requests)
  })
})
