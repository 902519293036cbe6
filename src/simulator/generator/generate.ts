/**
 * A seeded generator of realistic OpenCode sessions: the full stored history (messages and parts shaped like
 * `@opencode-ai/sdk`'s UserMessage, AssistantMessage, TextPart, ReasoningPart, ToolPart, StepStartPart,
 * StepFinishPart, built by ../messages.ts). OpenCode makes one model request per assistant message.
 *
 * What happens: a user turn every 20-60 tool calls; inside a turn one assistant message per step (step-start,
 * sometimes reasoning and text, one tool call or a few parallel exploring calls, step-finish), and a closing text
 * message. Tools: reads of 50-400-line files (often the same file again, unchanged or after an edit), edits and
 * writes usually followed by a read of the file, grep/glob/list, bash builds, test runs (some logs long, stored as
 * OpenCode stores a command's output: its last 50 KB at most), git, todo lists, the odd web page; a few percent of
 * calls fail (edits whose oldString does not match, a bash script that errors, a missing file). Timestamps advance
 * by seconds between steps, minutes between turns, and now and then by a pause longer than a prompt cache lives.
 *
 * Same seed and size, same session, byte for byte.
 */
import { buildLog, diffLog, edited, markdownPage, sourceFile, testLog, Vocabulary } from "./content.ts"
import type { Msg } from "../../host/schema.ts"
import {
  ascendingId,
  assistantInfo,
  reasoningPart,
  stepFinish,
  stepStart,
  textPart,
  type Tokens,
  toolPart,
  toolState,
  userMessage
} from "../messages.ts"
import { Random } from "./random.ts"

export interface Session {
  readonly sessionID: string
  readonly projectDir: string
  readonly messages: Array<Msg>
  readonly stats: {
    readonly toolCalls: number
    readonly errors: number
    readonly turns: number
    readonly byTool: Record<string, number>
    /** Characters of everything a model would be sent if it got the whole history once. */
    readonly chars: number
  }
}

export interface GenerateOptions {
  readonly seed: number
  readonly toolCalls: number
}

export const projectDir = "/home/dev/acme-api"
export const sessionID = "ses_bench0000000000000000001"

/** Sizes the benchmark runs (tool calls per session). */
export const sizes = [100, 1000, 3000, 5000] as const

export const generate = (options: GenerateOptions): Session => new Builder(options).build()

interface ToolSpec {
  readonly tool: string
  readonly input: Record<string, unknown>
  readonly output?: string
  readonly error?: string
  readonly title: string
  readonly metadata: Record<string, unknown>
  /** How long the tool ran, ms. */
  readonly duration: number
}

interface FileState {
  lines: Array<string>
  version: number
  /** The full-read output of the current version: equal reads share one string, as equal strings would compare. */
  readOutput: string | undefined
}

const model = { providerID: "anthropic", modelID: "claude-sonnet-4-5" }
const dirs = ["src/api", "src/services", "src/db", "src/lib", "src/models", "src/workers", "src/config"]

class Builder {
  private readonly r: Random
  private readonly v: Vocabulary
  private readonly target: number
  private readonly messages: Array<Msg> = []
  private readonly files = new Map<string, FileState>()
  /** Recently touched files, most recent last. */
  private readonly working: Array<string> = []
  /** The files the current user turn is about (mostly one area of the project). */
  private focus: Array<string> = []
  /** Calls queued to happen soon (a read after an edit, a test run after a fix), keyed by the call count they are due at. */
  private readonly followUps: Array<{ due: number; make: () => ToolSpec }> = []
  private readonly recentCommands: Array<string> = []
  private readonly recentPatterns: Array<string> = []
  private t = Date.UTC(2026, 0, 12, 9, 0, 0)
  private lastRequest = 0
  private calls = 0
  private errors = 0
  private turns = 0
  private chars = 0
  private ids = 0
  /** Command outputs OpenCode saved whole because it cut what it stored. */
  private saved = 0
  private readonly byTool: Record<string, number> = {}
  private testsFailing = false
  private lastEdit: { file: string; before: Array<string>; after: Array<string> } | undefined
  private userMessage: Msg | undefined
  private previousInput = 0

  constructor(options: GenerateOptions) {
    this.r = new Random(options.seed)
    this.v = new Vocabulary(this.r)
    this.target = options.toolCalls
    const count = this.r.int(140, 220)
    for (let i = 0; i < count; i++) {
      const test = this.r.chance(0.3)
      const file = test
        ? `test/${this.r.pick(dirs).slice(4)}/${this.v.kebab()}.test.ts`
        : `${this.r.pick(dirs)}/${this.v.kebab()}.ts`
      if (this.files.has(file)) continue
      this.files.set(file, {
        lines: sourceFile(this.r, Math.round(this.r.logUniform(50, 400)), test),
        version: 0,
        readOutput: undefined
      })
    }
  }

  build(): Session {
    while (this.calls < this.target) this.turn()
    return {
      sessionID,
      projectDir,
      messages: this.messages,
      stats: { toolCalls: this.calls, errors: this.errors, turns: this.turns, byTool: this.byTool, chars: this.chars }
    }
  }

  private id(prefix: string): string {
    // OpenCode IDs sort by creation: a time-ordered head, then random characters.
    return ascendingId(prefix, ++this.ids, this.r.id(14))
  }

  private turn() {
    this.turns++
    if (this.turns > 1) {
      this.t += this.r.chance(0.08)
        ? this.r.int(6 * 60, 40 * 60) * 1000
        : Math.round(this.r.logUniform(20, 6 * 60) * 1000)
    }
    const area = this.r.pick(dirs)
    const all = [...this.files.keys()]
    const local = all.filter((file) => file.startsWith(area) || file.startsWith(`test/${area.slice(4)}`))
    this.focus = Array.from(
      { length: this.r.int(5, 12) },
      () => this.r.chance(0.8) && local.length > 0 ? this.r.pick(local) : this.r.pick(all)
    )
    const user = this.user(this.turns === 1 ? this.firstPrompt() : this.prompt())
    this.userMessage = user
    const calls = Math.min(this.r.int(20, 60), this.target - this.calls)
    const end = this.calls + calls
    while (this.calls < end) {
      const parallel = this.r.chance(0.15) ? Math.min(this.r.int(2, 4), end - this.calls) : 1
      const tools: Array<ToolSpec> = []
      for (let i = 0; i < parallel; i++) tools.push(parallel > 1 ? this.explore() : this.nextCall())
      this.step(tools)
    }
    this.step([])
  }

  private user(text: string): Msg {
    const message = userMessage({
      id: this.id("msg"),
      sessionID,
      created: this.t,
      model,
      partID: this.id("prt"),
      text
    })
    this.chars += text.length
    this.messages.push(message)
    this.t += this.r.int(200, 900)
    return message
  }

  /** One assistant message (one model request): tool calls, or, with none, the turn's closing answer. */
  private step(tools: ReadonlyArray<ToolSpec>) {
    const created = this.t
    const closing = tools.length === 0
    const id = this.id("msg")
    const of = { sessionID, messageID: id }
    const thinking = Math.round(this.r.logUniform(1500, 15_000))
    const parts = [stepStart(this.id("prt"), of, this.snapshot())]
    let outputChars = 0
    let reasoningChars = 0
    if (this.r.chance(closing ? 0.5 : 0.35)) {
      const text = Array.from({ length: this.r.int(2, 6) }, () => this.v.sentence(8, 22)).join(" ")
      reasoningChars += text.length
      parts.push(reasoningPart(this.id("prt"), of, text, { start: created, end: created + 800 }))
    }
    if (closing || this.r.chance(0.45)) {
      const text = closing ? this.summary() : this.narration(tools[0]!)
      outputChars += text.length
      parts.push(textPart(this.id("prt"), of, text, { start: created + 900, end: created + 1500 }))
    }
    let slowest = 0
    for (const spec of tools) {
      parts.push(toolPart(this.id("prt"), of, `toolu_01${this.r.id(22)}`, spec.tool, stateOf(spec, created + thinking)))
      slowest = Math.max(slowest, spec.duration)
      outputChars += JSON.stringify(spec.input).length
      this.chars += (spec.output ?? spec.error ?? "").length
    }
    this.chars += outputChars + reasoningChars
    const tokens = this.usage(created, outputChars, reasoningChars)
    const finish = closing ? "stop" : "tool-calls"
    const completed = created + thinking + (closing ? 0 : slowest)
    parts.push(stepFinish(this.id("prt"), of, finish, tokens, this.snapshot()))
    const info = assistantInfo({
      id,
      sessionID,
      time: { created, completed },
      parentID: this.userMessage!.info.id,
      model,
      agent: "build",
      directory: projectDir,
      tokens,
      finish
    })
    this.messages.push({ info, parts })
    this.t = completed + this.r.int(50, 400)
  }

  /** Plausible usage figures: input is what the model saw, most of it read from the cache within the TTL. */
  private usage(created: number, outputChars: number, reasoningChars: number): Tokens {
    const input = Math.round(this.chars / 3.7) + 3000
    const warm = created - this.lastRequest <= 300_000
    const cacheRead = warm ? Math.min(this.previousInput, input) : 0
    this.previousInput = input
    this.lastRequest = created
    return {
      input: input - cacheRead,
      output: Math.round(outputChars / 3.7) + 20,
      reasoning: Math.round(reasoningChars / 3.7),
      cache: { read: cacheRead, write: input - cacheRead }
    }
  }

  /** A git snapshot's hash. */
  private snapshot(): string {
    return this.r.id(40).toLowerCase()
  }

  // ---- choosing calls -------------------------------------------------------------------------------------

  private count(spec: ToolSpec): ToolSpec {
    this.calls++
    this.byTool[spec.tool] = (this.byTool[spec.tool] ?? 0) + 1
    if (spec.error !== undefined) this.errors++
    return spec
  }

  private nextCall(): ToolSpec {
    const due = this.followUps.findIndex((f) => f.due <= this.calls)
    if (due >= 0) {
      const [followUp] = this.followUps.splice(due, 1)
      return this.count(followUp!.make())
    }
    const r = this.r
    return this.count(
      r.weighted<() => ToolSpec>([
        [() => this.read(this.chooseFile(0.55)), 31],
        [() => this.edit(), 14],
        [() => this.write(), 3],
        [() => this.grep(), 9],
        [() => this.glob(), 4],
        [() => this.list(), 2],
        [() => this.bash(), 23],
        [() => this.todo(), 3],
        [() => this.webfetch(), 1]
      ])()
    )
  }

  /** Parallel calls of an exploring step. */
  private explore(): ToolSpec {
    return this.count(
      this.r.weighted<() => ToolSpec>([
        [() => this.read(this.chooseFile(0.3)), 6],
        [() => this.grep(), 3],
        [() => this.glob(), 1]
      ])()
    )
  }

  private chooseFile(fromWorking: number): string {
    if (this.working.length > 0 && this.r.chance(fromWorking)) {
      return this.working[this.working.length - 1 - Math.floor(this.r.next() ** 2 * Math.min(8, this.working.length))]!
    }
    return this.r.chance(0.7) ? this.r.pick(this.focus) : this.r.pick([...this.files.keys()])
  }

  private touch(file: string) {
    const at = this.working.indexOf(file)
    if (at >= 0) this.working.splice(at, 1)
    this.working.push(file)
    if (this.working.length > 24) this.working.shift()
  }

  private soon(within: number, make: () => ToolSpec) {
    this.followUps.push({ due: this.calls + this.r.int(0, within), make })
  }

  // ---- tools ----------------------------------------------------------------------------------------------

  private read(file: string): ToolSpec {
    const absolute = `${projectDir}/${file}`
    const state = this.files.get(file)
    if (state === undefined || this.r.chance(0.025)) {
      const missing = state === undefined ? absolute : `${projectDir}/${file.replace(/\.ts$/, ".tsx")}`
      return {
        tool: "read",
        input: { filePath: missing },
        error: `Error: File not found: ${missing}`,
        title: file,
        metadata: {},
        duration: 8
      }
    }
    this.touch(file)
    const lines = state.lines
    const partial = lines.length > 120 && this.r.chance(0.08)
    if (partial) {
      const offset = this.r.int(1, lines.length - 60)
      const limit = this.r.int(30, 80)
      const shown = lines.slice(offset - 1, offset - 1 + limit)
      const last = offset + shown.length - 1
      const output = readHeader(absolute) + shown.map((line, i) => `${offset + i}: ${line}`).join("\n") +
        `\n\n(Showing lines ${offset}-${last} of ${lines.length}. Use offset=${last + 1} to continue.)\n</content>`
      return {
        tool: "read",
        input: { filePath: absolute, offset, limit },
        output,
        title: file,
        metadata: { preview: shown.slice(0, 20).join("\n"), truncated: true, loaded: [] },
        duration: 15
      }
    }
    state.readOutput ??= readHeader(absolute) + lines.map((line, i) => `${i + 1}: ${line}`).join("\n") +
      `\n\n(End of file - total ${lines.length} lines)\n</content>`
    return {
      tool: "read",
      input: { filePath: absolute },
      output: state.readOutput,
      title: file,
      metadata: { preview: lines.slice(0, 20).join("\n"), truncated: false, loaded: [] },
      duration: 12
    }
  }

  private edit(): ToolSpec {
    const file = this.chooseFile(0.85)
    const state = this.files.get(file)!
    this.touch(file)
    const absolute = `${projectDir}/${file}`
    const length = Math.min(state.lines.length, Math.round(this.r.logUniform(2, 30)))
    const start = this.r.int(0, state.lines.length - length)
    const before = state.lines.slice(start, start + length)
    const after = edited(this.r, before)
    if (this.r.chance(0.16)) {
      // The model misremembered the file: a large input that matches nothing.
      const wrong = edited(this.r, before)
      return {
        tool: "edit",
        input: { filePath: absolute, oldString: wrong.join("\n"), newString: after.join("\n") },
        error: this.r.chance(0.8)
          ? "Error: oldString not found in content"
          : "Error: Found multiple matches for oldString. Provide more surrounding lines in oldString to identify the correct match.",
        title: file,
        metadata: {},
        duration: 20
      }
    }
    state.lines.splice(start, length, ...after)
    state.version++
    state.readOutput = undefined
    this.lastEdit = { file, before, after }
    if (this.r.chance(0.5)) this.soon(5, () => this.read(file))
    if (this.r.chance(0.25)) this.soon(8, () => this.bash("test"))
    if (this.r.chance(0.3)) this.testsFailing = this.r.chance(0.5)
    const diagnostics = this.r.chance(0.1)
      ? `\n\nLSP errors detected in this file, please fix:\n<diagnostics file="${absolute}">\nERROR [${start + 1}:${
        this.r.int(1, 40)
      }] Property '${this.v.camel()}' does not exist on type '${this.v.pascal()}'.\n</diagnostics>`
      : ""
    return {
      tool: "edit",
      input: { filePath: absolute, oldString: before.join("\n"), newString: after.join("\n") },
      output: `Edit applied successfully.${diagnostics}`,
      title: file,
      metadata: { diagnostics: {}, filediff: { file: absolute, additions: after.length, deletions: before.length } },
      duration: 40
    }
  }

  private write(): ToolSpec {
    const fresh = this.r.chance(0.4) || this.working.length === 0
    const test = this.r.chance(0.3)
    const file = fresh
      ? (test
        ? `test/${this.r.pick(dirs).slice(4)}/${this.v.kebab()}.test.ts`
        : `${this.r.pick(dirs)}/${this.v.kebab()}.ts`)
      : this.chooseFile(1)
    const lines = sourceFile(this.r, Math.round(this.r.logUniform(40, 300)), test || file.includes(".test."))
    const content = lines.join("\n")
    const absolute = `${projectDir}/${file}`
    if (this.r.chance(0.03)) {
      return {
        tool: "write",
        input: { filePath: absolute, content },
        error: `Error: EACCES: permission denied, open '${absolute}'`,
        title: file,
        metadata: {},
        duration: 10
      }
    }
    const state = this.files.get(file)
    if (state === undefined) this.files.set(file, { lines, version: 0, readOutput: undefined })
    else {
      state.lines = lines
      state.version++
      state.readOutput = undefined
    }
    this.touch(file)
    if (this.r.chance(0.6)) this.soon(4, () => this.read(file))
    return {
      tool: "write",
      input: { filePath: absolute, content },
      output: "Wrote file successfully.",
      title: file,
      metadata: { diagnostics: {}, exists: state !== undefined },
      duration: 30
    }
  }

  private grep(): ToolSpec {
    const repeat = this.recentPatterns.length > 0 && this.r.chance(0.2)
    const pattern = repeat
      ? this.r.pick(this.recentPatterns)
      : this.r.chance(0.6)
      ? this.v.camel()
      : `${this.v.verb()}${this.v.pascal()}`
    if (!repeat) remember(this.recentPatterns, pattern, 12)
    const include = this.r.chance(0.3) ? "*.ts" : undefined
    const input: Record<string, unknown> = { pattern, ...(include === undefined ? {} : { include }) }
    const matches: Array<[string, number, string]> = []
    for (const [file, state] of this.files) {
      for (let i = 0; i < state.lines.length && matches.length < 100; i++) {
        if (state.lines[i]!.includes(pattern)) matches.push([file, i + 1, state.lines[i]!.trim()])
      }
      if (matches.length >= 100) break
    }
    let output = "No files found"
    if (matches.length > 0) {
      const out = [`Found ${matches.length} matches${matches.length === 100 ? " (more matches available)" : ""}`]
      let current = ""
      for (const [file, line, text] of matches) {
        if (file !== current) {
          if (current !== "") out.push("")
          current = file
          out.push(`${projectDir}/${file}:`)
        }
        out.push(`  Line ${line}: ${text}`)
      }
      if (matches.length === 100) out.push("", "(Results truncated. Consider using a more specific path or pattern.)")
      output = out.join("\n")
    }
    return {
      tool: "grep",
      input,
      output,
      title: pattern,
      metadata: { matches: matches.length, truncated: matches.length === 100 },
      duration: 120
    }
  }

  private glob(): ToolSpec {
    const noun = this.v.noun()
    const dir = this.r.pick(dirs)
    const pattern = this.r.pick([`**/*${noun}*`, `${dir}/**/*.ts`, "test/**/*.test.ts", `src/**/*${noun}*.ts`])
    const matching = [...this.files.keys()].filter((file) =>
      pattern.startsWith("**/") || pattern.startsWith("src/**/*")
        ? file.includes(noun) && (pattern.startsWith("**/") || file.startsWith("src/"))
        : pattern.startsWith("test/")
        ? file.startsWith("test/")
        : file.startsWith(`${dir}/`)
    ).slice(0, 100)
    const output = matching.length === 0 ? "No files found" : matching.map((file) => `${projectDir}/${file}`).join("\n")
    return {
      tool: "glob",
      input: { pattern },
      output,
      title: pattern,
      metadata: { count: matching.length, truncated: false },
      duration: 60
    }
  }

  private list(): ToolSpec {
    const dir = this.r.chance(0.3) ? "" : this.r.pick(dirs)
    const under = [...this.files.keys()].filter((file) => file.startsWith(dir)).sort()
    const out = [`${projectDir}/${dir}${dir === "" ? "" : "/"}`]
    let current = ""
    for (const file of under) {
      const slash = file.lastIndexOf("/")
      const folder = file.slice(0, slash)
      if (folder !== current) {
        current = folder
        out.push(`  ${folder}/`)
      }
      out.push(`    ${file.slice(slash + 1)}`)
    }
    return {
      tool: "list",
      input: { path: `${projectDir}/${dir}` },
      output: out.join("\n"),
      title: dir || ".",
      metadata: { count: under.length, truncated: false },
      duration: 30
    }
  }

  private bash(kind?: "test"): ToolSpec {
    const r = this.r
    if (kind === undefined && r.chance(0.07)) return this.failingScript()
    const files = [...this.files.keys()]
    const testFiles = files.filter((file) => file.startsWith("test/"))
    const choice = kind ?? r.weighted<"test" | "build" | "git" | "shell" | "install">([
      ["test", 35],
      ["build", 20],
      ["git", 25],
      ["shell", 14],
      ["install", 6]
    ])
    let command: string
    let output: string
    let exit = 0
    let duration = 800
    switch (choice) {
      case "test": {
        const single = r.chance(0.35) && testFiles.length > 0
        const failing = this.testsFailing || r.chance(0.2)
        const file = single ? r.pick(testFiles) : ""
        command = single
          ? `npx vitest run ${file}`
          : r.pick(["npm test", "npm test", "npm run test -- --reporter=default"])
        const lines = single ? r.int(12, 90) : Math.round(r.logUniform(60, 1600))
        output = testLog(r, single ? [file] : testFiles, failing, lines)
        exit = failing ? 1 : 0
        duration = single ? r.int(2000, 9000) : r.int(8000, 90_000)
        if (failing && r.chance(0.5)) this.testsFailing = false
        break
      }
      case "build": {
        command = r.pick(["npm run build", "npx tsc --noEmit", "npm run typecheck"])
        const errors = r.chance(0.4) ? Math.round(r.logUniform(1, 40)) : 0
        output = buildLog(r, files.filter((file) => file.startsWith("src/")), errors)
        exit = errors > 0 ? 2 : 0
        duration = r.int(2000, 30_000)
        break
      }
      case "git": {
        const which = r.weighted<"status" | "diff" | "log">([["status", 4], ["diff", 3], ["log", 2]])
        if (which === "diff" && this.lastEdit !== undefined) {
          command = `git diff ${this.lastEdit.file}`
          output = diffLog(r, this.lastEdit.file, this.lastEdit.before, this.lastEdit.after)
        } else if (which === "log") {
          command = "git log --oneline -15"
          output = Array.from({ length: 15 }, () => `${r.id(7).toLowerCase()} ${this.v.sentence(3, 9).slice(0, -1)}`)
            .join("\n")
        } else {
          command = "git status"
          const changed = this.working.slice(-r.int(1, 8))
          output = [
            `On branch feature/${this.v.kebab()}`,
            "Changes not staged for commit:",
            '  (use "git add <file>..." to update what will be committed)',
            "",
            ...changed.map((file) => `\tmodified:   ${file}`),
            "",
            'no changes added to commit (use "git add" and/or "git commit -a")'
          ].join("\n")
        }
        duration = r.int(20, 300)
        break
      }
      case "shell": {
        const dir = r.pick(dirs)
        if (r.chance(0.5)) {
          command = `ls -la ${dir}`
          output = files.filter((file) => file.startsWith(dir)).map((file) =>
            `-rw-r--r--  1 dev dev ${String(r.int(800, 16000)).padStart(6)} Jan ${r.int(1, 28)} ${r.int(10, 23)}:${
              r.int(10, 59)
            } ${file.slice(dir.length + 1)}`
          ).join("\n")
        } else {
          const word = this.v.camel()
          command = `rg -n "${word}" ${dir}`
          const hits: Array<string> = []
          for (const [file, state] of this.files) {
            if (!file.startsWith(dir)) continue
            state.lines.forEach((line, i) => {
              if (hits.length < 60 && line.includes(word)) hits.push(`${file}:${i + 1}:${line}`)
            })
          }
          output = hits.join("\n")
          exit = hits.length === 0 ? 1 : 0
        }
        duration = r.int(20, 400)
        break
      }
      case "install": {
        const pkg = r.pick(["zod", "pino", "undici", "ioredis", "date-fns", "@types/node", "supertest"])
        command = `npm install ${pkg}`
        output = `\nadded ${r.int(1, 40)} packages, changed ${r.int(0, 5)} packages, and audited ${
          r.int(300, 900)
        } packages in ${r.int(1, 20)}s\n\n${
          r.int(40, 160)
        } packages are looking for funding\n  run \`npm fund\` for details\n\nfound 0 vulnerabilities`
        duration = r.int(2000, 20_000)
        break
      }
    }
    // The same command again (a test run after a fix) is the common case for deduplication.
    if (choice !== "test" && this.recentCommands.length > 0 && r.chance(0.15)) command = r.pick(this.recentCommands)
    remember(this.recentCommands, command, 10)
    const kept = shellTail(output)
    if (kept !== output) {
      output = `...output truncated...\nFull output saved to: ${outputDir}/tool_${++this.saved}\n${kept}`
    }
    return {
      tool: "bash",
      input: { command, description: describeCommand(command) },
      output,
      title: command,
      metadata: { exit, description: describeCommand(command) },
      duration
    }
  }

  private failingScript(): ToolSpec {
    const name = `scripts/${this.v.kebab()}.sh`
    const body = Array.from(
      { length: this.r.int(30, 140) },
      () =>
        this.r.chance(0.3)
          ? `# ${this.v.sentence(4, 10)}`
          : `${this.r.pick(["node", "npx tsx", "curl -s", "jq", "grep -n"])} ${this.v.kebab()} --${this.v.noun()}=${
            this.v.literal().replaceAll('"', "")
          }`
    )
    const command = `cat > ${name} <<'EOF'\n#!/usr/bin/env bash\nset -euo pipefail\n${
      body.join("\n")
    }\nEOF\nchmod +x ${name} && ./${name}`
    return {
      tool: "bash",
      input: { command, description: "Write and run a migration helper script" },
      error: this.r.chance(0.5)
        ? `Error: Command timed out after 120000 ms`
        : `Error: Command exited with code 1\n${name}: line ${this.r.int(4, 60)}: ${this.v.kebab()}: command not found`,
      title: name,
      metadata: { exit: 1 },
      duration: this.r.chance(0.5) ? 120_000 : 1500
    }
  }

  private todo(): ToolSpec {
    const todos = Array.from({ length: this.r.int(3, 8) }, (_, i) => ({
      content: this.v.sentence(4, 10),
      status: this.r.pick(["pending", "in_progress", "completed"]),
      priority: this.r.pick(["high", "medium", "low"]),
      id: String(i + 1)
    }))
    return {
      tool: "todowrite",
      input: { todos },
      output: JSON.stringify(todos, null, 2),
      title: `${todos.length} todos`,
      metadata: { todos },
      duration: 5
    }
  }

  private webfetch(): ToolSpec {
    const url = `https://docs.${this.v.kebab()}.dev/guide/${this.v.kebab()}`
    return {
      tool: "webfetch",
      input: { url, format: "markdown" },
      output: markdownPage(this.r, this.r.int(40, 260)),
      title: url,
      metadata: {},
      duration: 1500
    }
  }

  // ---- words ----------------------------------------------------------------------------------------------

  private firstPrompt(): string {
    const v = this.v
    return [
      `We need to add ${v.noun()} ${v.noun()} support to the ${v.noun()} service.`,
      v.sentence(10, 24),
      v.sentence(8, 20),
      `Start by looking at ${
        this.r.pick(this.focus)
      } and the tests under test/. Keep the public API stable and run the test suite when you are done.`
    ].join(" ")
  }

  private prompt(): string {
    const v = this.v
    const file = this.r.pick(this.focus)
    return this.r.pick([
      `The tests in ${file} fail after your change: ${v.sentence(5, 12)} Can you fix it?`,
      `Now ${v.verb()} the ${v.noun()} handling in ${file} so that ${v.sentence(6, 14).toLowerCase()}`,
      `Looks good. Next: ${v.sentence(8, 18)} Also update the docs.`,
      `Can you refactor ${file}? ${v.sentence(8, 20)}`,
      `${v.sentence(6, 14)} Please check the build too.`
    ])
  }

  private narration(first: ToolSpec): string {
    const target = first.title
    return this.r.pick([
      `Let me look at ${target} to see how the ${this.v.noun()} is handled.`,
      `I'll run \`${target}\` to check the change.`,
      `Now I'll update ${target}.`,
      `${this.v.sentence(6, 16)} Let me check ${target}.`,
      `The ${this.v.noun()} ${this.v.noun()} is resolved in a different place; searching for it.`
    ])
  }

  private summary(): string {
    const points = Array.from({ length: this.r.int(2, 6) }, () => `- ${this.v.sentence(6, 16)}`)
    return [`${this.v.sentence(8, 18)}`, "", ...points, "", this.v.sentence(6, 14)].join("\n")
  }
}

/** Where OpenCode 1.18.33 saves a command's whole output when it stores only part of it. */
const outputDir = "/home/dev/.local/share/opencode/tool-output"

/**
 * What OpenCode 1.18.33 stores of a command's output (its ShellTool): the last lines, at most 2,000 of them and 50 KB
 * (51,200 bytes; the generated text is ASCII); the whole output when it fits.
 */
const shellTail = (output: string): string => {
  const lines = output.split("\n")
  if (lines.length <= 2000 && output.length <= 51_200) return output
  let start = lines.length
  let bytes = 0
  while (start > 0 && lines.length - start < 2000) {
    const size = lines[start - 1]!.length + (start < lines.length ? 1 : 0)
    if (bytes + size > 51_200) break
    bytes += size
    start--
  }
  return lines.slice(start).join("\n")
}

/** A call's state once it ran, from `start` (ms). */
const stateOf = (spec: ToolSpec, start: number) => {
  const time = { start, end: start + spec.duration }
  return spec.error === undefined
    ? toolState.completed({
      input: spec.input,
      output: spec.output ?? "",
      title: spec.title,
      metadata: spec.metadata,
      time
    })
    : toolState.error({ input: spec.input, error: spec.error, metadata: spec.metadata, time })
}

const readHeader = (absolute: string) => `<path>${absolute}</path>\n<type>file</type>\n<content>\n`

const remember = (list: Array<string>, item: string, max: number) => {
  if (!list.includes(item)) list.push(item)
  if (list.length > max) list.shift()
}

const describeCommand = (command: string): string =>
  command.startsWith("npm test") || command.includes("vitest") ?
    "Run the tests"
    : command.includes("build") || command.includes("tsc") || command.includes("typecheck") ?
    "Type-check and build"
    : command.startsWith("git") ?
    "Show git changes"
    : command.startsWith("npm install") ?
    "Install a dependency"
    : "Inspect the project"
