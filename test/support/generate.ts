/**
 * fast-check arbitraries for OpenCode histories: what `experimental.chat.messages.transform` receives. A history is
 * generated as a small spec (so fast-check shrinks it meaningfully) and built into OpenCode-shaped JSON (the shapes of
 * src/simulator/messages.ts) with IDs from positions, so that a shrunk case reads the same on every run: message
 * `msg_<i>`, part `prt_<i>_<j>`, call `call_<i>_<j>`.
 *
 * Inputs come from small pools so that duplicates (same tool, same input), write-then-read pairs of one file and
 * calls on protected files arise often; outputs range from a few characters to a few thousand lines.
 */
import fc from "fast-check"
import {
  assistantInfo,
  reasoningPart,
  stepFinish,
  stepStart,
  textPart,
  toolPart,
  toolState,
  userMessage
} from "../../src/simulator/messages.ts"
import { type Msg, noTokens } from "./history.ts"

type Status = "completed" | "error" | "pending" | "running"

export interface ToolCallSpec {
  readonly kind: "tool"
  readonly tool: string
  readonly input: Record<string, unknown>
  readonly status: Status
  readonly output: string | Lines
  readonly error: string
  readonly attachments: boolean
}

type PartSpec =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "reasoning"; readonly text: string }
  | ToolCallSpec

export type MessageSpec =
  | { readonly kind: "user"; readonly text: string }
  | { readonly kind: "assistant"; readonly parts: ReadonlyArray<PartSpec>; readonly summary: boolean }

export interface HistorySpec {
  readonly messages: ReadonlyArray<MessageSpec>
}

/** Files the generated calls touch: relative and absolute, some under patterns tests protect. */
const filePool = [
  "src/app.ts",
  "src/util.ts",
  "/srv/app/src/app.ts",
  "secret/keys.ts",
  "/srv/app/secret/token.ts",
  "certs/server.pem"
] as const

/** Patterns that protect some of `filePool`, and the matching rule tests use to know which calls they cover. */
export const protectedPatterns = ["**/secret/**", "*.pem"] as const
export const matchesProtectedPattern = (pattern: string, filePath: string): boolean =>
  pattern === "**/secret/**"
    ? filePath.startsWith("secret/") || filePath.includes("/secret/")
    : pattern === "*.pem"
    ? filePath.endsWith(".pem")
    : false

/** Deterministic text of `lines` lines, different per seed. */
const body = (seed: number, lines: number): string =>
  Array.from({ length: lines }, (_, i) => `${seed}:${i + 1} const value${i} = compute(${seed}, ${i}) // line`).join(
    "\n"
  )

/**
 * Long text stays a small description in the spec (so a failing case prints in a few lines) and becomes `body(seed,
 * lines)` when the history is built.
 */
interface Lines {
  readonly seed: number
  readonly lines: number
}
const lines = (seed: fc.Arbitrary<number>, count: fc.Arbitrary<number>): fc.Arbitrary<Lines> =>
  fc.record({ seed, lines: count })
const isLines = (value: unknown): value is Lines =>
  typeof value === "object" && value !== null && !Array.isArray(value) && Object.keys(value).join() === "seed,lines"
const expand = (value: unknown): unknown =>
  isLines(value)
    ? body(value.seed, value.lines)
    : Array.isArray(value)
    ? value.map(expand)
    : typeof value === "object" && value !== null
    ? Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, expand(inner)]))
    : value

/** A result followed by language server errors, as OpenCode reports them after a file change. */
const withErrors = [
  "Edit applied successfully.",
  "",
  "LSP errors detected in this file, please fix:",
  '<diagnostics file="src/a.ts">',
  "ERROR [1:1] Cannot find name 'x'.",
  "</diagnostics>"
].join("\n")

const smallOrLarge: fc.Arbitrary<string | Lines> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom("", "ok", "done", "no matches", withErrors) },
  { weight: 5, arbitrary: lines(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 10, max: 300 })) },
  { weight: 1, arbitrary: lines(fc.integer({ min: 0, max: 3 }), fc.constant(1500)) }
)

const content = lines(fc.integer({ min: 10, max: 13 }), fc.integer({ min: 1, max: 120 }))

const file = fc.constantFrom(...filePool)

const inputs: Record<string, fc.Arbitrary<Record<string, unknown>>> = {
  read: fc.record(
    { filePath: file, offset: fc.constantFrom(undefined, null, 1, 40), limit: fc.constantFrom(undefined, 2000) },
    { requiredKeys: ["filePath"] }
  ),
  write: fc.record({ filePath: file, content }),
  edit: fc.record({ filePath: file, oldString: content, newString: content }),
  bash: fc.record({
    command: fc.oneof(
      fc.constantFrom("npm test", "ls -la", "git status"),
      lines(fc.integer({ min: 20, max: 22 }), fc.constant(30))
    ),
    description: fc.constantFrom("Run tests", "List files", undefined)
  }, { requiredKeys: ["command"] }),
  grep: fc.record(
    { pattern: fc.constantFrom("TODO", "compute\\(", "export"), path: fc.constantFrom("src", undefined) },
    {
      requiredKeys: ["pattern"]
    }
  ),
  glob: fc.record({ pattern: fc.constantFrom("**/*.ts", "src/**") }),
  task: fc.record({
    description: fc.constantFrom("Explore the code", "Find callers"),
    prompt: content,
    subagent_type: fc.constant("general")
  }),
  todowrite: fc.record({
    todos: fc.array(
      fc.record({
        id: fc.integer({ min: 1, max: 9 }).map(String),
        content: fc.constantFrom("write tests", "fix bug", "ship"),
        status: fc.constantFrom("pending", "in_progress", "completed"),
        priority: fc.constantFrom("high", "low")
      }),
      { minLength: 1, maxLength: 3 }
    )
  })
}

const toolNames = Object.keys(inputs)

const status: fc.Arbitrary<Status> = fc.oneof(
  { weight: 8, arbitrary: fc.constant("completed" as const) },
  { weight: 3, arbitrary: fc.constant("error" as const) },
  { weight: 1, arbitrary: fc.constantFrom("pending" as const, "running" as const) }
)

const toolCall: fc.Arbitrary<ToolCallSpec> = fc.constantFrom(...toolNames).chain((name) =>
  fc.record({
    kind: fc.constant("tool" as const),
    tool: fc.constant(name),
    input: inputs[name]!,
    status,
    output: smallOrLarge,
    error: fc.constantFrom("Error: file not found", "exit code 1", "oldString not found in content"),
    attachments: fc.boolean()
  })
)

const part: fc.Arbitrary<PartSpec> = fc.oneof(
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant("text" as const), text: fc.constantFrom("Let me look.", "Done.", "") })
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant("reasoning" as const), text: fc.constantFrom("thinking", "plan") })
  },
  { weight: 6, arbitrary: toolCall }
)

const assistantSpec: fc.Arbitrary<MessageSpec> = fc.record({
  kind: fc.constant("assistant" as const),
  parts: fc.array(part, { minLength: 0, maxLength: 4, size: "max" }),
  summary: fc.oneof({ weight: 12, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) })
})

const userSpec: fc.Arbitrary<MessageSpec> = fc.record({
  kind: fc.constant("user" as const),
  text: fc.constantFrom("go on", "now fix the test", "thanks")
})

/**
 * A session: a first user message, then assistant turns with the odd user message (one in six messages, or as
 * `userWeight` of 5 assistant messages says) and compaction summary.
 */
export const historySpec = (
  options: { readonly maxMessages?: number; readonly userWeight?: number } = {}
): fc.Arbitrary<HistorySpec> =>
  fc.array(
    fc.oneof({ weight: 5, arbitrary: assistantSpec }, { weight: options.userWeight ?? 1, arbitrary: userSpec }),
    {
      minLength: 0,
      maxLength: options.maxMessages ?? 24,
      size: "max"
    }
  ).chain((rest) => userSpec.map((first) => ({ messages: [first, ...rest] })))

const model = { providerID: "fake", modelID: "fake-model" }

/** Builds the JSON OpenCode would pass for `spec` in session `session`. */
export const build = (spec: HistorySpec, session: string): Array<Msg> =>
  spec.messages.map((message, i) => {
    const id = `msg_${String(i).padStart(4, "0")}`
    const of = { sessionID: session, messageID: id }
    const partId = (j: number) => `prt_${String(i).padStart(4, "0")}_${j}`
    if (message.kind === "user") {
      return userMessage({ id, sessionID: session, created: 1000 + i, model, partID: partId(0), text: message.text })
    }
    const time = { start: 1, end: 2 }
    const parts = [stepStart(partId(0), of)]
    message.parts.forEach((item, j) => {
      const pid = partId(j + 1)
      if (item.kind === "text") parts.push(textPart(pid, of, item.text, time))
      else if (item.kind === "reasoning") parts.push(reasoningPart(pid, of, item.text, time))
      else parts.push(toolPart(pid, of, `call_${i}_${j}`, item.tool, stateOf(item)))
    })
    parts.push(stepFinish(partId(message.parts.length + 1), of, "tool-calls", noTokens()))
    const info = assistantInfo({
      id,
      sessionID: session,
      time: { created: 1000 + i, completed: 1001 + i },
      parentID: "msg_0000",
      model,
      directory: "/srv/app",
      tokens: noTokens(),
      ...(message.summary ? { summary: true, finish: "stop" } : {})
    })
    return { info, parts }
  })

const stateOf = (call: ToolCallSpec) => {
  const input = expand(Object.fromEntries(Object.entries(call.input).filter(([, value]) => value !== undefined)))
  const time = { start: 1, end: 2 }
  switch (call.status) {
    case "completed":
      return toolState.completed({
        input,
        // OpenCode's todowrite answers with the list it was given, read back.
        output: call.tool === "todowrite" ? JSON.stringify(call.input.todos, null, 2) : expand(call.output),
        title: call.tool,
        metadata: {},
        time,
        ...(call.attachments
          ? { attachments: [{ type: "file", mime: "text/plain", url: "data:,x", filename: "x" }] }
          : {})
      })
    case "error":
      return toolState.error({ input, error: call.error, time })
    case "running":
      return toolState.running(input, 1)
    case "pending":
      return toolState.pending(input)
  }
}

/** A generated history, built for `session`. */
export const history = (session: string, options: { readonly maxMessages?: number } = {}): fc.Arbitrary<Array<Msg>> =>
  historySpec(options).map((spec) => build(spec, session))

/** Config a property run writes before building the plugin: protection switched on and off. */
export interface GeneratedConfig {
  readonly protectedFilePatterns: ReadonlyArray<string>
  readonly turnProtection: { readonly enabled: boolean; readonly turns: number }
  /** Whether automatic prunes wait for the cache scheduler or apply at once: the properties hold either way. */
  readonly cache: { readonly mode: "auto" | "immediate" }
}

export const generatedConfig: fc.Arbitrary<GeneratedConfig> = fc.record({
  protectedFilePatterns: fc.subarray([...protectedPatterns]),
  turnProtection: fc.record({ enabled: fc.boolean(), turns: fc.integer({ min: 1, max: 4 }) }),
  cache: fc.record({ mode: fc.constantFrom("auto" as const, "immediate" as const) })
})
