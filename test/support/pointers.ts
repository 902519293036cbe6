/**
 * Repeats and the pointers their placeholders are (src/engine/strategies/repeats.ts): histories in which some calls
 * repeat an earlier one exactly, and the check that every pointer sent finds its copy in the same request, read off
 * what is sent and the history it came from, never the plugin's state.
 */
import { assert } from "@effect/vitest"
import type { HistorySpec, MessageSpec, ToolCallSpec } from "./generate.ts"
import type { Msg } from "./history.ts"

/**
 * `spec` with some tool calls (where `repeats` says, cyclically) replaced by an earlier completed call with a long
 * output, tool, input and output alike, as an unchanged re-read is: generated histories alone almost never repeat a
 * call, and a repeat is pruned at its first send, before any other rule meets it.
 */
export const withRepeatsOf = (spec: HistorySpec, repeats: ReadonlyArray<boolean>): HistorySpec => {
  const earlier: Array<ToolCallSpec> = []
  let k = 0
  const messages = spec.messages.map((message): MessageSpec => {
    if (message.kind !== "assistant") return message
    const parts = message.parts.map((part) => {
      if (part.kind !== "tool") return part
      const copy = repeats[k % repeats.length]! && earlier.length > 0 ? earlier[k % earlier.length]! : part
      k++
      if (copy.status === "completed" && typeof copy.output !== "string") earlier.push(copy)
      return copy
    })
    return { ...message, parts }
  })
  return { messages }
}

const toolParts = (messages: ReadonlyArray<Msg>) =>
  messages.flatMap((message) => message.parts).filter((part) => part.type === "tool") as Array<Record<string, any>>

/**
 * Each tool part with the key it keeps through the transform: its message's ID, its call ID and how many parts of that
 * message had the same call ID before it (a host may reuse a call ID; a fold drops parts, never renames them).
 */
const keyedToolParts = (messages: ReadonlyArray<Msg>) =>
  messages.flatMap((message) => {
    const seen = new Map<string, number>()
    return message.parts.filter((part) => part.type === "tool").map((part: Record<string, any>) => {
      const nth = seen.get(part.callID) ?? 0
      seen.set(part.callID, nth + 1)
      return { key: `${message.info.id}/${part.callID}/${nth}`, part }
    })
  })

/** The ID of the earlier copy a repeat's placeholder names, when it names one by ID. */
export const namedCopy = (text: unknown): number | undefined => {
  const match = typeof text === "string"
    ? /^\[(?:same output as id|these lines are unchanged in the output of id) (\d+); /.exec(text)
    : null
  return match === null ? undefined : Number(match[1])
}

/** A tool part of `output` that carries the `[id N]` tag of the call with stable ID `id`: an output sent whole. */
export const sentWhole = (output: ReadonlyArray<Msg>, id: number) =>
  toolParts(output).find((part) =>
    typeof part.state?.output === "string" && part.state.output.startsWith(`[id ${id}]\n`)
  )

/**
 * Every placeholder that points at an earlier copy finds it in the same request: "same output as id N" a tool output
 * tagged `[id N]` holding exactly the repeat's original output, "these lines are unchanged in the output of id N" one
 * holding its numbered lines, "the same content as the earlier write of this file" a write of that file whose content
 * is sent as it came.
 */
export const assertNoDanglingPointer = (input: ReadonlyArray<Msg>, output: ReadonlyArray<Msg>) => {
  const calls = keyedToolParts(input)
  const sentParts = new Map(keyedToolParts(output).map(({ key, part }) => [key, part]))
  for (const { key, part } of calls) {
    const sent = sentParts.get(key)?.state?.output
    if (typeof sent !== "string") continue
    const original = String(part.state.output)
    const copy = namedCopy(sent)
    if (copy !== undefined) {
      const whole = sentWhole(output, copy)
      const lines = original.split("\n").filter((line) => /^\d+: /.test(line)).join("\n")
      assert.isTrue(
        whole !== undefined &&
          (sent.startsWith("[same output") ? whole.state.output === `[id ${copy}]\n${original}` : whole.state.output
            .includes(lines)),
        `${part.callID} is sent as ${sent}, and the request holds no such copy`
      )
    }
    if (sent.startsWith("[the same content as the earlier write of this file")) {
      const writes = calls.filter(({ key, part: call }) =>
        call.tool === "write" && call.state.input?.filePath === part.state.input?.filePath &&
        sentParts.get(key)?.state?.input?.content === call.state.input?.content
      )
      assert.isNotEmpty(writes, `${part.callID} is sent as ${sent}, and no write of the file is sent whole`)
    }
  }
}
