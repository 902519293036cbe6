import { assert, describe as effectDescribe, it as effectIt } from "@effect/vitest"
import { Effect } from "effect"
import { describe, it } from "vitest"
import type { PluginConfig } from "../../src/config/schema.ts"
import type { ToolCall } from "../../src/engine/calls.ts"
import type { Protection } from "../../src/engine/protection.ts"
import { dcp } from "../../src/hooks/command.ts"
import { recall } from "../../src/hooks/tools.ts"
import { assistant, fresh, type Msg, sessionID, tool, toolPart, user } from "../support/history.ts"
import { tempDir } from "../support/layers.ts"
import {
  addFile,
  alone,
  automaticCandidates,
  type CallSpec,
  history,
  patchText,
  protect,
  strategies,
  updateFile,
  worktree
} from "../engine/support.ts"
import { pipelineUnder, send, stateOf } from "../pipeline/helpers.ts"
import { content, read, tagged } from "./support.ts"

const readOf = (name: string, extra: Partial<CallSpec> = {}): CallSpec => ({
  tool: "read",
  input: { filePath: `${worktree}/src/${name}.ts` },
  outputTokens: 500,
  ...extra
})

/** Six reads of different files, 500 tokens each: c1 oldest, c6 newest. */
const six = (): Array<ToolCall> => history(["a", "b", "c", "d", "e", "f"].map((name) => readOf(name)))

type StaleOptions = Omit<PluginConfig["strategies"]["staleOutputs"], "enabled">

const options: StaleOptions = { trigger: 10_000, keepRecent: 2, keepFiles: 0, clearAtLeast: 1000, protectedTools: [] }

/** Stale outputs alone, as the request path runs it, in a context of 20k tokens unless given. */
const staleOutputs = (
  calls: ReadonlyArray<ToolCall>,
  protection: Protection,
  { contextTokens = 20_000, pruned = new Set<string>(), ...settings }: Partial<
    StaleOptions & { contextTokens: number; pruned: ReadonlySet<string> }
  > = {}
) =>
  automaticCandidates({
    calls,
    pruned,
    protection,
    strategies: alone("staleOutputs", { ...options, ...settings }),
    currentTurn: 1,
    contextTokens
  })

const mask = (
  calls: ReadonlyArray<ToolCall>,
  overrides: Parameters<typeof staleOutputs>[2] = {},
  protection: Protection = protect()
) => staleOutputs(calls, protection, overrides).map((candidate) => candidate.callID)

describe("staleOutputs: the trigger", () => {
  it("masks nothing while the context is below the trigger", () => {
    assert.deepStrictEqual(mask(six(), { contextTokens: 9999 }), [])
  })

  it("masks from a context of exactly the trigger", () => {
    assert.deepStrictEqual(mask(six(), { contextTokens: 10_000 }), ["c1", "c2", "c3", "c4"])
  })

  it("names staleOutputs as the reason", () => {
    const found = staleOutputs(six(), protect())
    assert.deepStrictEqual(new Set(found.map((candidate) => candidate.reason)), new Set(["staleOutputs"]))
  })
})

describe("staleOutputs: keepRecent", () => {
  it("masks every output older than the keepRecent most recent calls", () => {
    assert.deepStrictEqual(mask(six(), { keepRecent: 3 }), ["c1", "c2", "c3"])
  })

  it("never masks the keepRecent most recent outputs", () => {
    const masked = mask(six(), { keepRecent: 2 })
    assert.notInclude(masked, "c5")
    assert.notInclude(masked, "c6")
  })

  it("masks nothing when there are no more calls than keepRecent", () => {
    assert.deepStrictEqual(mask(six(), { keepRecent: 6 }), [])
    assert.deepStrictEqual(mask(six(), { keepRecent: 10 }), [])
  })

  it("keepRecent 0 masks every output", () => {
    assert.deepStrictEqual(mask(six(), { keepRecent: 0 }), ["c1", "c2", "c3", "c4", "c5", "c6"])
  })

  it("counts protected and unfinished calls among the most recent", () => {
    const calls = history([readOf("a"), readOf("b"), readOf("c"), { tool: "todowrite", input: {} }, {
      tool: "bash",
      status: "running"
    }])
    assert.deepStrictEqual(mask(calls, { keepRecent: 2, clearAtLeast: 0 }), ["c1", "c2", "c3"])
  })
})

describe("staleOutputs: clearAtLeast", () => {
  it("masks nothing when the batch is one token short of clearAtLeast", () => {
    assert.deepStrictEqual(mask(six(), { clearAtLeast: 2001 }), [])
  })

  it("masks the batch when it holds exactly clearAtLeast tokens", () => {
    assert.deepStrictEqual(mask(six(), { clearAtLeast: 2000 }), ["c1", "c2", "c3", "c4"])
  })

  it("does not count protected outputs towards the batch", () => {
    const calls = history([
      readOf("a"),
      { tool: "task", input: { description: "explore" }, outputTokens: 5000 },
      readOf("b"),
      readOf("c")
    ])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1, clearAtLeast: 1001 }), [])
  })
})

describe("staleOutputs: what is never masked", () => {
  it("always-protected tools", () => {
    const calls = history([
      { tool: "task", input: { description: "explore" }, outputTokens: 900 },
      { tool: "todowrite", input: {}, outputTokens: 900 },
      readOf("a", { outputTokens: 2000 }),
      readOf("b")
    ])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1 }), ["c3"])
  })

  it("a skill's instructions, which OpenCode's own pruning keeps too", () => {
    const calls = history([
      { tool: "skill", input: { name: "testing" }, outputTokens: 2000 },
      readOf("a", { outputTokens: 2000 }),
      readOf("b")
    ])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1 }), ["c2"])
  })

  it("tools in strategies.staleOutputs.protectedTools", () => {
    const calls = history([
      { tool: "bash", input: { command: "npm test" }, outputTokens: 2000 },
      readOf("a", { outputTokens: 2000 }),
      readOf("b")
    ])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1, protectedTools: ["bash"] }), ["c2"])
  })

  it("calls touching a protected file", () => {
    const calls = history([readOf("secret", { outputTokens: 2000 }), readOf("a", { outputTokens: 2000 }), readOf("b")])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1 }, protect({ patterns: ["**/secret.ts"] })), ["c2"])
  })

  it("turn-protected calls", () => {
    const calls = history([
      readOf("a", { turn: 1, outputTokens: 2000 }),
      readOf("b", { turn: 9, outputTokens: 2000 }),
      readOf("c", { turn: 10 })
    ])
    const protection = protect({ turnProtection: { enabled: true, turns: 4 }, currentTurn: 10 })
    assert.deepStrictEqual(mask(calls, { keepRecent: 1 }, protection), ["c1"])
  })

  it("failed, running and non-text outputs, and outputs OpenCode already compacted", () => {
    const calls = history([
      { tool: "bash", input: { command: "make" }, error: "exit 2" },
      { tool: "bash", input: { command: "npm run dev" }, status: "running" },
      { tool: "bash", input: { command: "ls" }, hasTextOutput: false },
      readOf("a", { compacted: true }),
      readOf("b", { outputTokens: 0 }),
      readOf("c", { outputTokens: 1500 }),
      readOf("d")
    ])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1 }), ["c6"])
  })
})

/** A write of `tokens` tokens of content (four characters a token) and its one-line result. */
const writeOf = (name: string, tokens: number, extra: Partial<CallSpec> = {}): CallSpec => ({
  tool: "write",
  input: { filePath: `${worktree}/src/${name}.ts`, content: "x".repeat(tokens * 4) },
  outputTokens: 5,
  ...extra
})

const editOf = (name: string, tokens: number, extra: Partial<CallSpec> = {}): CallSpec => ({
  tool: "edit",
  input: {
    filePath: `${worktree}/src/${name}.ts`,
    oldString: "o".repeat(tokens * 2),
    newString: "n".repeat(tokens * 2)
  },
  outputTokens: 5,
  ...extra
})

describe("staleOutputs: old file changes", () => {
  it("masks writes and edits older than the keepRecent most recent calls", () => {
    const calls = history([writeOf("a", 800), editOf("b", 800), readOf("c"), writeOf("d", 800)])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1 }), ["c1", "c2", "c3"])
  })

  it("counts a file change's content, not its one-line result, towards clearAtLeast", () => {
    const calls = history([writeOf("a", 600), editOf("b", 400), readOf("c")])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1, clearAtLeast: 1000 }), ["c1", "c2"])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1, clearAtLeast: 1001 }), [])
  })

  it("masks a multiedit, whose edits are a list, by the size of that list", () => {
    const edits = [{ oldString: "o".repeat(2000), newString: "n".repeat(2000) }]
    const calls = history([{ tool: "multiedit", input: { filePath: `${worktree}/src/a.ts`, edits } }, readOf("b")])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1, clearAtLeast: 1000 }), ["c1"])
  })

  it("masks an apply_patch by the size of its patch", () => {
    // 200 changed lines: 1,511 tokens at four characters a token.
    const patch: CallSpec = { tool: "apply_patch", input: { patchText: patchText(updateFile("src/a.ts", 200)) } }
    const calls = history([patch, readOf("b")])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1, clearAtLeast: 1511 }), ["c1"])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1, clearAtLeast: 1512 }), [])
  })

  it("keeps them when strategies.staleOutputs.protectedTools lists them", () => {
    const calls = history([writeOf("a", 800), editOf("b", 800), readOf("c", { outputTokens: 2000 }), readOf("d")])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1, protectedTools: ["write", "edit"] }), ["c3"])
  })

  it("keeps a change to a protected file", () => {
    const calls = history([writeOf("secret", 2000), writeOf("a", 2000), readOf("b")])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1 }, protect({ patterns: ["**/secret.ts"] })), ["c2"])
  })

  it("keeps a change with no content and a failed change (purge-errors decides about that one)", () => {
    const calls = history([
      { tool: "write", input: { filePath: `${worktree}/src/a.ts`, content: "" }, outputTokens: 5 },
      editOf("b", 2000, { error: "oldString not found in content" }),
      readOf("c", { outputTokens: 2000 }),
      readOf("d")
    ])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1 }), ["c3"])
  })
})

describe("staleOutputs: keepFiles", () => {
  it("keeps the newest copy of each of the keepFiles files most recently worked on, however old", () => {
    assert.deepStrictEqual(mask(six(), { keepFiles: 3 }), ["c1", "c2", "c3"])
  })

  it("masks the older copies of a working file", () => {
    const calls = history(["a", "b", "a", "c", "d", "e"].map((name) => readOf(name)))
    assert.deepStrictEqual(mask(calls, { keepFiles: 4 }), ["c1", "c2"])
  })

  it("counts an edit as working on a file, and keeps the file's newest read, not the edit", () => {
    const calls = history([readOf("a"), readOf("b"), readOf("c"), readOf("d"), editOf("a", 800), readOf("e")])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1, keepFiles: 2 }), ["c2", "c3", "c4", "c5"])
  })

  it("counts an apply_patch as working on each file it adds or updates", () => {
    const patch: CallSpec = {
      tool: "apply_patch",
      input: { patchText: patchText(updateFile("src/a.ts", 2), updateFile("src/b.ts", 2)) }
    }
    const calls = history([readOf("a"), readOf("b"), readOf("c"), readOf("d"), patch, readOf("e")])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1, keepFiles: 3, clearAtLeast: 0 }), ["c3", "c4", "c5"])
  })

  it("keeps a write's content as the newest copy of its file", () => {
    const calls = history([writeOf("a", 800), readOf("b"), readOf("c"), editOf("a", 800), readOf("d")])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1, keepFiles: 2 }), ["c2", "c3", "c4"])
  })

  it("keeps a GPT model's apply_patch that added a working file as the file's newest copy", () => {
    const add: CallSpec = { tool: "apply_patch", input: { patchText: patchText(addFile("src/a.ts", 200)) } }
    const update: CallSpec = { tool: "apply_patch", input: { patchText: patchText(updateFile("src/a.ts", 200)) } }
    const calls = history([add, readOf("b"), readOf("c"), update, readOf("d")])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1, keepFiles: 2 }), ["c2", "c3", "c4"])
  })

  it("keeps the copy a pruned re-read points to", () => {
    const calls = history(["a", "b", "c", "a", "d", "e"].map((name) => readOf(name)))
    assert.deepStrictEqual(mask(calls, { keepRecent: 1, keepFiles: 3, pruned: new Set(["c4"]) }), ["c2", "c3"])
  })

  it("stops keeping a file once keepFiles other files were worked on after it", () => {
    const calls = history(["a", "b", "c", "d", "e", "f"].map((name) => readOf(name)))
    assert.deepStrictEqual(mask(calls, { keepRecent: 1, keepFiles: 2 }), ["c1", "c2", "c3", "c4"])
  })

  /** A read of lines `from` to `from + count` of a file. */
  const partOf = (name: string, from: number, count: number) =>
    readOf(name, { input: { ...readOf(name).input, offset: from, limit: count } })
  const run = (command: string): CallSpec => ({ tool: "bash", input: { command }, outputTokens: 500 })

  it("keeps a recent read of another part of the working file beside its newest copy", () => {
    const calls = history([readOf("b"), partOf("a", 100, 40), partOf("a", 300, 40), run("ls"), run("pwd")])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1, keepFiles: 1, clearAtLeast: 0 }), ["c1", "c4"])
  })

  it("masks an older read of a part a newer read of the working file shows again", () => {
    const calls = history([readOf("b"), partOf("a", 100, 40), partOf("a", 90, 80), run("ls"), run("pwd")])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1, keepFiles: 1, clearAtLeast: 0 }), ["c1", "c2", "c4"])
  })

  it("keeps no older whole copy of the working file beside a newer read of a part", () => {
    const calls = history([readOf("b"), readOf("a"), partOf("a", 300, 40), run("ls"), run("pwd")])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1, keepFiles: 1, clearAtLeast: 0 }), ["c1", "c2", "c4"])
  })

  it("keeps no older read of the working file once its whole copy is kept", () => {
    const calls = history([readOf("b"), partOf("a", 100, 40), readOf("a"), run("ls"), run("pwd")])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1, keepFiles: 1, clearAtLeast: 0 }), ["c1", "c2", "c4"])
  })

  it("masks a read of another part of the working file made more than 15 calls ago", () => {
    const commands = (n: number) => Array.from({ length: n }, (_, i) => run(`echo ${i}`))
    const calls = history([partOf("a", 100, 40), ...commands(14), partOf("a", 300, 40), run("ls")])
    assert.deepStrictEqual(mask(calls, { keepRecent: 1, keepFiles: 1, clearAtLeast: 0 }), [
      "c1",
      ...commands(14).map((_, i) => `c${i + 2}`)
    ])
    const recent = history([partOf("a", 100, 40), ...commands(12), partOf("a", 300, 40), run("ls")])
    assert.notInclude(mask(recent, { keepRecent: 1, keepFiles: 1, clearAtLeast: 0 }), "c1")
  })
})

describe("staleOutputs among the other rules", () => {
  const run = (
    calls: ReadonlyArray<ToolCall>,
    input: {
      stale?: Partial<StaleOptions & { enabled: boolean }>
      restored?: ReadonlySet<string>
      pruned?: ReadonlySet<string>
    } = {}
  ) =>
    automaticCandidates({
      calls,
      pruned: input.pruned ?? new Set(),
      ...(input.restored === undefined ? {} : { restored: input.restored }),
      protection: protect(),
      strategies: strategies({ staleOutputs: { ...options, ...input.stale } }),
      currentTurn: 1,
      contextTokens: 20_000
    })

  it("does not mask calls the user restored", () => {
    assert.deepStrictEqual(run(six(), { restored: new Set(["c1"]) }).map((c) => c.callID), ["c2", "c3", "c4"])
  })

  it("does not mask calls already pruned", () => {
    assert.deepStrictEqual(run(six(), { pruned: new Set(["c1", "c2"]) }).map((c) => c.callID), ["c3", "c4"])
  })

  it("masks nothing when the strategy is disabled", () => {
    assert.deepStrictEqual(run(six(), { stale: { enabled: false } }), [])
  })

  it("leaves a duplicate to deduplication, which names it first", () => {
    const calls = history([readOf("a"), readOf("b"), readOf("c"), readOf("d"), readOf("a")])
    assert.deepStrictEqual(run(calls, { stale: { keepRecent: 1 } }), [
      { callID: "c1", reason: "deduplication" },
      { callID: "c2", reason: "staleOutputs" },
      { callID: "c3", reason: "staleOutputs" },
      { callID: "c4", reason: "staleOutputs" }
    ])
  })

  it("measures clearAtLeast without the calls other rules claimed", () => {
    const calls = history([readOf("a"), readOf("b"), readOf("a")])
    assert.deepStrictEqual(run(calls, { stale: { keepRecent: 1, clearAtLeast: 600 } }), [{
      callID: "c1",
      reason: "deduplication"
    }])
  })

  it("does not mask without a context size (the trigger is not reached)", () => {
    const found = automaticCandidates({
      calls: six(),
      pruned: new Set(),
      protection: protect(),
      strategies: strategies({ staleOutputs: options }),
      currentTurn: 1
    })
    assert.deepStrictEqual(found, [])
  })
})

/** Five reads of different files, about 2.5k tokens each: a context of about 12.5k. */
const names = ["a", "b", "c", "d", "e"]
const reads: Array<Msg> = [
  user("read everything"),
  ...names.map((name, i) => assistant([read(`c${i + 1}`, `src/${name}.ts`)]))
]

/** The reads' outputs as a request sends them. */
const outputs = (sent: ReadonlyArray<Msg>) => names.map((_, i) => toolPart(sent, `c${i + 1}`).state.output)

/** Every read sent in full (tagged with its ID, as every output large enough to prune is). */
const whole = names.map((name, i) => tagged(i + 1, content(`src/${name}.ts`)))

/**
 * Masking on: from 5k tokens, keeping the two most recent and no working file's copy, in batches of at least 1k.
 * Deduplication cannot interfere.
 */
const masking = (stale: object = {}) => ({
  strategies: { staleOutputs: { trigger: 5000, keepRecent: 2, keepFiles: 0, clearAtLeast: 1000, ...stale } }
})

effectDescribe("staleOutputs through the transform", () => {
  effectIt.effect(
    "masked outputs reach the model as placeholders, the most recent ones in full",
    () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sent = yield* send(fresh(reads)).pipe(Effect.provide(pipelineUnder(root, masking())))
        for (const [i, name] of names.entries()) {
          const output = toolPart(sent, `c${i + 1}`).state.output
          if (i < 3) assert.match(output, new RegExp(`^\\[pruned; recall ${i + 1}\\]$`))
          else assert.strictEqual(output, tagged(i + 1, content(`src/${name}.ts`)))
        }
      })
  )

  effectIt.effect("masked outputs are recorded under staleOutputs", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const state = yield* send(fresh(reads)).pipe(
        Effect.andThen(stateOf(sessionID)),
        Effect.provide(pipelineUnder(root, masking()))
      )
      assert.deepStrictEqual(Object.keys(state.pruned).sort(), ["c1", "c2", "c3"])
      assert.strictEqual(state.stats.byReason.staleOutputs?.calls, 3)
    }))

  effectIt.effect(
    "the newest read of each of the keepFiles files last worked on reaches the model in full",
    () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sent = yield* send(fresh(reads)).pipe(Effect.provide(pipelineUnder(root, masking({ keepFiles: 3 }))))
        assert.match(toolPart(sent, "c2").state.output, /^\[pruned; /)
        assert.strictEqual(toolPart(sent, "c3").state.output, tagged(3, content("src/c.ts")))
      })
  )

  effectIt.effect("below the trigger nothing is masked", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const sent = yield* send(fresh(reads)).pipe(Effect.provide(pipelineUnder(root, masking({ trigger: 100_000 }))))
      assert.deepStrictEqual(outputs(sent), whole)
    }))

  effectIt.effect("masking is off when disabled", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const sent = yield* send(fresh(reads)).pipe(Effect.provide(pipelineUnder(root, masking({ enabled: false }))))
      assert.deepStrictEqual(outputs(sent), whole)
    }))

  effectIt.effect("tools in strategies.staleOutputs.protectedTools are sent in full", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const sent = yield* send(fresh(reads)).pipe(
        Effect.provide(pipelineUnder(root, masking({ protectedTools: ["read"] })))
      )
      assert.deepStrictEqual(outputs(sent), whole)
    }))

  effectIt.effect("a call the user restored is not masked again", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const sent = yield* Effect.gen(function*() {
        yield* send(fresh(reads))
        yield* dcp(sessionID, "restore 1")
        return yield* send(fresh(reads))
      }).pipe(Effect.provide(pipelineUnder(root, masking())))
      assert.strictEqual(toolPart(sent, "c1").state.output, tagged(1, content("src/a.ts")))
      assert.match(toolPart(sent, "c2").state.output, /^\[pruned; /)
    }))
})

/** An edit of src/z.ts, then the five reads: the edit is the oldest call, with ID 1. */
const oldString = content("old", 40)
const newString = content("new", 40)
const editFirst: Array<Msg> = [
  user("fix z, then read everything"),
  assistant([tool({
    tool: "edit",
    callID: "e1",
    input: { filePath: "src/z.ts", oldString, newString },
    output: "Edit applied successfully."
  })]),
  ...reads.slice(1)
]

effectDescribe("staleOutputs: an old file change through the transform", () => {
  effectIt.effect(
    "is sent with its content as placeholders, its path and result as they were",
    () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sent = yield* send(fresh(editFirst)).pipe(Effect.provide(pipelineUnder(root, masking())))
        const { input, output } = toolPart(sent, "e1").state
        assert.match(input.oldString, /^\[pruned oldString of an old change; recall 1\]$/)
        assert.match(input.newString, /^\[pruned newString of an old change; recall 1\]$/)
        assert.strictEqual(input.filePath, "src/z.ts")
        assert.strictEqual(output, "Edit applied successfully.")
      })
  )

  effectIt.effect("recall brings its content back as stored", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const reply = yield* Effect.andThen(send(fresh(editFirst)), recall(sessionID, { ids: ["1"] })).pipe(
        Effect.provide(pipelineUnder(root, masking(), { host: { messages: { [sessionID]: editFirst } } }))
      )
      assert.strictEqual(
        reply,
        `Original content of id 1 (edit src/z.ts), as stored:\noldString:\n${oldString}\n\nnewString:\n${newString}`
      )
    }))

  const errors = [
    "LSP errors detected in this file, please fix:",
    '<diagnostics file="/p/src/z.ts">',
    "ERROR [3:7] Cannot find name 'compute'.",
    "ERROR [9:1] Type 'string' is not assignable to type 'number'.",
    "</diagnostics>"
  ].join("\n")
  const editWithErrors: Array<Msg> = editFirst.map((message, i) =>
    i !== 1 ? message : assistant([tool({
      tool: "edit",
      callID: "e1",
      input: { filePath: "src/z.ts", oldString, newString },
      output: `Edit applied successfully.\n\n${errors}`
    })])
  )

  effectIt.effect(
    "has the language server's errors its output reported replaced too, its confirmation kept",
    () =>
      Effect.gen(function*() {
        const root = yield* tempDir
        const sent = yield* send(fresh(editWithErrors)).pipe(Effect.provide(pipelineUnder(root, masking())))
        assert.match(
          toolPart(sent, "e1").state.output,
          /^Edit applied successfully\.\n\n\[pruned LSP errors of an old change; recall 1\]$/
        )
      })
  )

  effectIt.effect("recall brings its errors back with its content", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const reply = yield* Effect.andThen(send(fresh(editWithErrors)), recall(sessionID, { ids: ["1"] })).pipe(
        Effect.provide(pipelineUnder(root, masking(), { host: { messages: { [sessionID]: editWithErrors } } }))
      )
      assert.strictEqual(
        reply,
        `Original content of id 1 (edit src/z.ts), as stored:\noldString:\n${oldString}\n\nnewString:\n${newString}\n\n${errors}`
      )
    }))

  effectIt.effect("is sent whole when strategies.staleOutputs.protectedTools lists edit", () =>
    Effect.gen(function*() {
      const root = yield* tempDir
      const sent = yield* send(fresh(editFirst)).pipe(
        Effect.provide(pipelineUnder(root, masking({ protectedTools: ["edit"] })))
      )
      assert.deepStrictEqual(toolPart(sent, "e1").state.input, { filePath: "src/z.ts", oldString, newString })
    }))
})
