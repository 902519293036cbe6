/** A parsed `/dcp` invocation. Anything that is not a valid command becomes `invalid`, with what was wrong. */
export type DcpCommand =
  | { readonly _tag: "help" }
  | { readonly _tag: "context" }
  | { readonly _tag: "stats" }
  | { readonly _tag: "sweep"; readonly count: number | undefined }
  | { readonly _tag: "restore"; readonly target: "all" | number }
  /** `restore`: the arguments were meant for `/dcp restore`, whose reply adds the IDs that can be restored. */
  | { readonly _tag: "invalid"; readonly problem: string; readonly restore?: true }

export const subcommands: ReadonlyArray<{ readonly usage: string; readonly summary: string }> = [
  { usage: "/dcp context", summary: "where the tokens of the current context go, and what pruning saves" },
  { usage: "/dcp stats", summary: "what was pruned in this session, by strategy and tool, and across all sessions" },
  { usage: "/dcp sweep [n]", summary: "prune every tool output since your last message, or the last n" },
  {
    usage: "/dcp restore <id|all>",
    summary: "send a pruned output (or all of them) to the model again; the ids are in the pruning notes"
  },
  {
    usage: "/dcp help",
    summary: "this list; /dcp alone shows it too, except in the terminal UI, where it opens the pruning dialog"
  }
]

/** The subcommands in one line, for an error that names what is valid without the whole help. */
const validForms = "context, stats, sweep [n], restore <id|all> or help"

const positiveInteger = /^[1-9]\d*$/

export const parseCommand = (raw: string): DcpCommand => {
  const [name = "", ...rest] = raw.trim().split(/\s+/).filter((word) => word.length > 0)
  const extra = (usage: string) => ({ _tag: "invalid" as const, problem: `Too many arguments: the usage is ${usage}.` })
  switch (name.toLowerCase()) {
    case "":
    case "help":
      return { _tag: "help" }
    case "context":
      return rest.length === 0 ? { _tag: "context" } : extra("/dcp context")
    case "stats":
      return rest.length === 0 ? { _tag: "stats" } : extra("/dcp stats")
    case "sweep": {
      if (rest.length > 1) return extra("/dcp sweep [n]")
      const n = rest[0]
      if (n === undefined) return { _tag: "sweep", count: undefined }
      if (!positiveInteger.test(n)) {
        return {
          _tag: "invalid",
          problem:
            `"${n}" is not a number of calls: /dcp sweep [n] takes a whole number of 1 or more, e.g. /dcp sweep 5.`
        }
      }
      return { _tag: "sweep", count: Number(n) }
    }
    case "restore": {
      const target = rest[0]
      if (target === undefined) {
        return { _tag: "invalid", problem: `Restore what? /dcp restore takes an id or "all".`, restore: true }
      }
      if (rest.length > 1) return { ...extra("/dcp restore <id|all>"), restore: true }
      if (target.toLowerCase() === "all") return { _tag: "restore", target: "all" }
      if (!positiveInteger.test(target)) {
        return {
          _tag: "invalid",
          problem: `"${target}" is not an id: /dcp restore takes an id or "all".`,
          restore: true
        }
      }
      return { _tag: "restore", target: Number(target) }
    }
    default:
      return { _tag: "invalid", problem: `Unknown subcommand "${name}": /dcp takes ${validForms}.` }
  }
}
