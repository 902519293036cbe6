/**
 * Histories for the folding tests (test/pipeline/fold*.test.ts): a first turn that becomes old once two later ones
 * follow it (`keepTurns` 2, the default), and the settings under which masking takes every output older than the newest
 * call at once, so that an old turn's outputs are pruned as soon as it is old.
 */
import { isDigest } from "../../src/engine/fold.ts"
import { assistant, lines, type Msg, text, tool, user } from "./history.ts"

export const foldConfig = {
  strategies: { staleOutputs: { trigger: 0, keepRecent: 1, keepFiles: 0, clearAtLeast: 0 } }
}

/** The first turn: the user's request, the model reading, testing, editing, and its answer. */
export const firstTurn = (): Array<Msg> => [
  user("fix the failing test", { id: "msg_u1" }),
  assistant([
    text("Let me look at the test first."),
    tool({ tool: "read", callID: "r1", input: { filePath: "src/a.ts" }, output: lines(200) }),
    tool({
      tool: "bash",
      callID: "b1",
      input: { command: "npm test" },
      output: lines(60, "FAIL"),
      metadata: { exit: 1 }
    })
  ], { id: "msg_a1" }),
  assistant([
    tool({
      tool: "edit",
      callID: "e1",
      input: { filePath: "src/a.ts", oldString: lines(20, "old"), newString: lines(20, "new") },
      output: "Edit applied successfully."
    }),
    text("Fixed: the comparison was inverted.")
  ], { id: "msg_a2" })
]

/** Two later turns: after them, the first is old. */
export const laterTurns = (): Array<Msg> => [
  user("now add a test for it", { id: "msg_u2" }),
  assistant([tool({ tool: "read", callID: "r2", input: { filePath: "src/b.ts" }, output: lines(100, "b") })], {
    id: "msg_a3"
  }),
  user("thanks, and run the suite once more", { id: "msg_u3" }),
  assistant([tool({ tool: "bash", callID: "b2", input: { command: "npm test" }, output: lines(30, "PASS") })], {
    id: "msg_a4"
  })
]

/** The digests a request sends, in order, as texts. */
export const digestsOf = (messages: ReadonlyArray<Msg>): Array<string> =>
  messages.flatMap((message) => message.parts).flatMap((part) => (isDigest(part) ? [String(part.text)] : []))
