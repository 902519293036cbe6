/**
 * The history the persistence workers replay: `count` turns, each a user message and an assistant message holding one
 * completed read of 40 lines (`call_00001`, the file `fileOf(i)`), as OpenCode stores them.
 */
export const pad = (i: number) => String(i).padStart(5, "0")

export const assistantOf = (i: number) => `msg_a${pad(i)}`

export const readHistory = (sessionID: string, count: number, fileOf: (i: number) => string): Array<any> =>
  Array.from({ length: count }, (_, index) => {
    const i = index + 1
    const base = { sessionID, messageID: assistantOf(i) }
    return [
      {
        info: { id: `msg_u${pad(i)}`, sessionID, role: "user", time: { created: i * 1000 } },
        parts: [{ id: `prt_u${pad(i)}`, type: "text", text: `step ${i}` }]
      },
      {
        info: { id: assistantOf(i), sessionID, role: "assistant", time: { created: i * 1000 + 1 } },
        parts: [
          { id: `prt_s${pad(i)}`, ...base, type: "step-start" },
          {
            id: `prt_t${pad(i)}`,
            ...base,
            type: "tool",
            callID: `call_${pad(i)}`,
            tool: "read",
            state: {
              status: "completed",
              input: { filePath: fileOf(i) },
              output: Array.from({ length: 40 }, (_, line) => `file ${i} line ${line}`).join("\n"),
              time: { start: 1, end: 2 }
            }
          }
        ]
      }
    ]
  }).flat()
