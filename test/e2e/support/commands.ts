import { assert } from "vitest"
import type { Scenario } from "./scenario.ts"
import { waitFor } from "./wait.ts"

/** The texts of a session's ignored parts: notes stored for the user that the model never sees, oldest first. */
export const notes = async (s: Scenario, sessionID: string): Promise<Array<string>> =>
  (await s.messages(sessionID)).flatMap((message) => message.parts)
    .filter((part) => part.ignored === true)
    .map((part) => part.text ?? "")

/** What the plugin asks the model for if it failed to intercept `/dcp` (the command's template). */
const template = "could not be handled"

/**
 * Runs `/dcp <args>` and checks what every subcommand owes: HTTP 200 with the stored note as the answer (or, for a
 * command refused for its arguments, `refused`, HTTP 400 with the note's message), exactly one new ignored note, and
 * no model request (counted once the note is stored and the session is idle again: a model turn would have been
 * requested by then, as the command call itself runs that turn before answering). Returns the note. Wait for the
 * note of an earlier run first, so it cannot be taken for this command's.
 */
export const dcp = async (
  s: Scenario,
  sessionID: string,
  args: string,
  options: { readonly refused?: boolean } = {}
): Promise<string> => {
  const requestsBefore = s.requests().length
  const notesBefore = (await notes(s, sessionID)).length
  const response = await s.command(sessionID, "dcp", args)
  assert.strictEqual(
    response.status,
    options.refused === true ? 400 : 200,
    `/dcp ${args} answered ${JSON.stringify(response.data).slice(0, 1000)}`
  )
  const added = await waitFor(`the note of /dcp ${args}`, async () => {
    const all = await notes(s, sessionID)
    return all.length > notesBefore ? all.slice(notesBefore) : undefined
  })
  await s.waitIdle(sessionID)
  assert.strictEqual(s.requests().length, requestsBefore, `model requests after /dcp ${args}`)
  assert.lengthOf(added, 1)
  const note = added[0]!
  if (options.refused === true) {
    assert.strictEqual(flat(note), `DCP · ${flat(String(response.data))}`)
    return note
  }
  const answered = (response.data as { parts?: ReadonlyArray<{ text?: string; ignored?: boolean }> }).parts ?? []
  assert.deepStrictEqual(answered.map(({ ignored, text }) => ({ text, ignored })), [{ text: note, ignored: true }])
  const stored = JSON.stringify(await s.messages(sessionID))
  assert.notInclude(stored, template)
  return note
}

/**
 * A note as one line of words: every run of spaces and line breaks becomes one space. What the plugin wrote, minus
 * its layout for the terminal UI (lines wrapped to 72 columns, column gaps), for assertions on the wording.
 */
export const flat = (note: string): string => note.replace(/\s+/g, " ")

/** A token figure as the commands print it (`~720`, `~4.2k`, `1,234`), as a number. */
export const tokenFigure = (text: string): number => {
  const match = /^~?([\d,.]+)([kM]?)$/.exec(text)
  if (match === null) throw new Error(`not a token figure: ${text}`)
  const scale = match[2] === "k" ? 1000 : match[2] === "M" ? 1_000_000 : 1
  return Number(match[1]!.replaceAll(",", "")) * scale
}
