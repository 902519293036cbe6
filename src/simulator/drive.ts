/**
 * Drives a recorded or generated session through a plugin the way OpenCode 1.18 would have, request by request, and
 * prices what each request sent under every given pricing profile: the one replay loop of the offline analyser
 * (`dcp-analyse`) and the benchmark (`npm run bench`).
 *
 * A request is made for every assistant message: it sends what OpenCode sends before that message (its
 * `visibleHistory`, so a recorded compaction is followed), after the plugin's `experimental.chat.messages.transform`
 * and `experimental.chat.system.transform`. `chat.message` announces each prompt, `session.idle` ends each turn, and
 * the model's own discard/extract calls are replayed through the plugin's tools before the next request, as they ran.
 *
 * What OpenCode does on its own, so that a plugin is compared with what a user has without it:
 * - `compactAtOverflow`: when a request reaches the model's usable window (its context less the output reserve,
 *   32,000 tokens at most), OpenCode compacts before the next one: a summary request (its own system prompt, no
 *   tools, and one user text: the prompt and the history before the most recent messages that fit in 15,000
 *   tokens, after the plugin's transform, written out as OpenCode 1.18.33 writes it for its summariser), then
 *   requests send the summary, those recent messages, and what follows. Simulated here with a summary of
 *   `summaryTokens`, priced as output.
 * - `openCodePrune` (`compaction.prune: true`): at the end of each turn, outputs of completed calls older than the
 *   last two turns and the newest 40,000 tokens of tool output are cleared, once at least 20,000 tokens can go; a
 *   cleared output is sent as `[Old tool result content cleared]` from then on.
 * - A compaction the plugin asks for when a turn ends (`DrivenPlugin.compactionsAsked`): OpenCode runs it at once, the
 *   same way, before the next prompt (or after the last turn: a session may end right after it, and it is priced).
 */
import type { Hooks } from "@opencode-ai/plugin"
import { tool } from "@opencode-ai/plugin"
import { fileFieldsOf } from "../engine/calls.ts"
import { patchFiles } from "../engine/patch.ts"
import { fileKeyOf } from "../engine/pathRules.ts"
import { hostArgumentsSchema } from "../host/toolSchema.ts"
import { visibleHistory } from "../host/view.ts"
import type { PricingProfile } from "../pricing/profiles.ts"
import type { Msg } from "../host/schema.ts"
import { freshCopy } from "./copy.ts"
import { CostMeter, type Priced, type RequestCost } from "./cost.ts"
import { blockTokens, WireBuilder } from "./wire.ts"

export interface DriveModel {
  readonly providerID: string
  readonly modelID: string
  readonly context: number
  readonly output: number
}

export interface DrivenPlugin {
  /** Undefined: no plugin. */
  readonly hooks: Hooks | undefined
  /** The time the plugin reads from its clock (ms): set to each request's time before its hooks run. */
  readonly setTime: (ms: number) => void
  /** The compactions the plugin asked OpenCode for since this was last called (`Host.compact`). */
  readonly compactionsAsked?: () => number
}

/** OpenCode without a plugin. */
export const noPlugin: DrivenPlugin = { hooks: undefined, setTime: () => {} }

export interface DriveOptions {
  readonly sessionID: string
  /** The stored history, oldest first. */
  readonly messages: ReadonlyArray<Msg>
  readonly plugin: DrivenPlugin
  /**
   * OpenCode's system prompt for a request sent at a time (ms), as it hands it to plugins (one string). It carries
   * the date of the request, so the first request of a day changes it.
   */
  readonly system: (time: number) => ReadonlyArray<string>
  /** OpenCode's own tool definitions (name, JSON), sent first in every request. */
  readonly hostTools: ReadonlyArray<readonly [string, string]>
  readonly model: DriveModel
  readonly profiles: ReadonlyArray<PricingProfile>
  /** Exact token count of a text, used for every priced figure. */
  readonly count: (text: string) => number
  readonly compactAtOverflow?: boolean
  readonly openCodePrune?: boolean
  readonly summaryTokens?: number
  /**
   * A system text another plugin adds after this one's, on every request but the summariser's (OpenCode then sends
   * two system messages).
   */
  readonly otherSystem?: string
  /** The project directory, for the context handed to the plugin's tools. */
  readonly directory?: string
  /**
   * The model's answer to an edit of a file whose content it had seen in the session but was not sent (`Edits`): it
   * reads the files again, whole, and makes the edit in answer to the next request. Replayed as the recorded edit
   * alone, the model would have edited a file it could not see; with this, what it costs to see it again is priced (one
   * more request, the copy sent and kept). Applies to every run: OpenCode's own compactions and `openCodePrune` take
   * copies out of what is sent too.
   */
  readonly reReadMasked?: boolean
  /** Called after each request (the benchmark lets background work run and samples memory there). */
  readonly between?: (request: number) => Promise<void>
  readonly onProgress?: (done: number, total: number) => void
  /** Called with what each request cost under each profile (in `profiles` order); `summary`: a compaction's summary request. */
  readonly onRequest?: (costs: ReadonlyArray<RequestCost>, summary: boolean) => void
}

/** The latest request that was not a summary request, as sent. */
interface SentRequest {
  readonly definitions: ReadonlyArray<readonly [string, string]>
  readonly system: ReadonlyArray<string>
  readonly messages: ReadonlyArray<Msg>
  /** What OpenCode would have sent for it without any plugin: its visible history, untransformed. */
  readonly visible: ReadonlyArray<Msg>
  readonly index: number
  /** When it was sent (ms). */
  readonly time: number
}

export interface Driven {
  readonly requests: number
  readonly priced: Readonly<Record<string, Priced>>
  /** Tokens of each request, in order (summary requests included). */
  readonly requestTokens: ReadonlyArray<number>
  /** Compactions OpenCode would have made at overflow, and the summary requests they cost. */
  readonly compactions: number
  /**
   * Of those, the summary requests longer than the model's whole window: a provider refuses them, and OpenCode 1.18.33
   * then stops the session with "Session too large to compact".
   */
  readonly summariesOverWindow: number
  /** Outputs OpenCode's own pruning cleared. */
  readonly openCodePruned: number
  /** Requests sent more than the first profile's TTL after the previous one (the cache had expired). */
  readonly pausesOverTtl: number
  /** The model's edits of files it had seen, and how many of them it made with that content masked (see `seenIn`). */
  readonly edits: Edits
  /** Requests the model spent reading files again before editing them (`reReadMasked`). */
  readonly reReads: number
  readonly modelCalls: { readonly replayed: number; readonly accepted: number; readonly rejected: number }
  readonly last: SentRequest | undefined
  readonly builder: WireBuilder
  readonly tokensOf: (block: number) => number
  /** Wall time of each request's messages and system transforms, ms. */
  readonly transformMs: ReadonlyArray<number>
  readonly systemMs: ReadonlyArray<number>
  readonly phasesMs: { copy: number; accounting: number; idle: number }
}

export interface Edits {
  /**
   * Edits the model made to a file whose content (a read's output, a write's content) is in the session's history,
   * before a compaction too.
   */
  readonly made: number
  /**
   * Of those, the edits made while no such copy was in what the request sent: pruned, cleared, or summarised away by
   * a compaction.
   */
  readonly masked: number
}

/** Tools that edit a file in place. */
const editTools: ReadonlySet<string> = new Set(["edit", "insert"])

const filePathOf = (part: Msg["parts"][number]): string | undefined =>
  part.type === "tool" && typeof part.state?.input?.filePath === "string" ? part.state.input.filePath : undefined

/**
 * The files a tool part edits in place, resolved against the session's directory as OpenCode resolves them: an edit's
 * file, each file an `apply_patch` (GPT models' edit tool) updates.
 */
const editedFiles = (part: Msg["parts"][number], directory: string): ReadonlyArray<string> => {
  if (part.type !== "tool") return []
  if (part.tool === "apply_patch") {
    const text = part.state?.input?.patchText
    return typeof text === "string" ? patchFiles(text).updated.map((path) => fileKeyOf(directory, path)) : []
  }
  const path = editTools.has(part.tool) ? filePathOf(part) : undefined
  return path === undefined ? [] : [fileKeyOf(directory, path)]
}

/**
 * What a completed tool part holding a copy of files (`ToolCall.copiedFiles`) shows of them: a read's output unless
 * cleared, a write's content, the text of a patch that adds them.
 */
const copyOf = (part: Msg["parts"][number]): string | undefined => {
  if (part.type !== "tool" || part.state?.status !== "completed") return undefined
  const copy = part.tool === "read"
    ? part.state.time?.compacted === undefined ? part.state.output : undefined
    : part.tool === "apply_patch"
    ? part.state.input?.patchText
    : part.state.input?.content
  return typeof copy === "string" ? copy : undefined
}

/**
 * The files whose content `sent` shows in full, of those `original` (the history it was made from, before any pruning
 * or compaction) shows:
 * a copy (a read's output, a write's content, a patch that adds the file) counts when what was sent still contains it
 * (the plugin's ID tag at the head of an output does not hide it).
 */
const seenIn = (original: ReadonlyArray<Msg>, sent: ReadonlyArray<Msg>, directory: string) => {
  const sentByCall = new Map<string, Msg["parts"][number]>()
  for (const message of sent) {
    for (const part of message.parts) {
      if (part.type === "tool") sentByCall.set(part.callID, part)
    }
  }
  const shown = new Set<string>()
  const seen = new Set<string>()
  for (const message of original) {
    for (const part of message.parts) {
      const copy = copyOf(part)
      if (copy === undefined) continue
      const files = fileFieldsOf(part.tool, part.state.input ?? {}, directory).copiedFiles
      const as = sentByCall.get(part.callID)
      const kept = as !== undefined && copyOf(as)?.includes(copy) === true
      for (const path of files) {
        shown.add(path)
        if (kept) seen.add(path)
      }
    }
  }
  return { shown, seen }
}

/**
 * The model's reading of `paths` again (`DriveOptions.reReadMasked`): an assistant message with a read of each, as
 * the latest copy in the session's `history` shows it (that read again, or a whole read of what a write or a patch
 * wrote), sent as `response` (the edit's message) is.
 */
const reReadOf = (
  paths: ReadonlyArray<string>,
  history: ReadonlyArray<Msg>,
  directory: string,
  id: string,
  response: Msg["info"]
): Msg => {
  const time = response.time?.created ?? 0
  const latest = new Map<string, Msg["parts"][number]>()
  for (const message of history) {
    for (const part of message.parts) {
      if (copyOf(part) === undefined) continue
      for (const path of fileFieldsOf(part.tool, part.state.input ?? {}, directory).copiedFiles) latest.set(path, part)
    }
  }
  const parts = paths.flatMap((path, n): Array<Msg["parts"][number]> => {
    const copy = latest.get(path)
    if (copy === undefined) return []
    const read = copy.tool === "read"
      ? { input: copy.state.input, output: copyOf(copy)! }
      : { input: { filePath: path }, output: wholeRead(path, copyOf(copy)!) }
    return [{
      id: `prt_dcp_reread_${id}_${n}`,
      messageID: `msg_dcp_reread_${id}`,
      type: "tool",
      callID: `toolu_dcp_reread_${id}_${n}`,
      tool: "read",
      state: { status: "completed", ...read, title: path, metadata: {}, time: { start: time, end: time } }
    }]
  })
  return {
    info: { ...response, id: `msg_dcp_reread_${id}`, finish: "tool-calls", time: { created: time, completed: time } },
    parts
  }
}

/** A whole file as OpenCode 1.18.33's read tool returns it. */
const wholeRead = (path: string, content: string): string => {
  const lines = content.split("\n")
  return `<path>${path}</path>\n<type>file</type>\n<content>\n${
    lines.map((line, i) => `${i + 1}: ${line}`).join("\n")
  }` +
    `\n\n(End of file - total ${lines.length} lines)\n</content>`
}

/** A tool call as the model writes it, for its output tokens. */
const callOf = (part: Msg["parts"][number]) => part.type === "tool" ? { tool: part.tool, input: part.state?.input } : {}

/** The most a request can hold before OpenCode compacts: the context less its output reserve (32,000 at most). */
export const usableWindow = (model: DriveModel) => model.context - Math.min(model.output, 32_000)
const tailBudget = 15_000
const pruneProtect = 40_000
const pruneMinimum = 20_000
const pruneProtectedTools: ReadonlySet<string> = new Set(["skill"])
/** OpenCode's own estimate, four characters a token. */
const estimate = (text: string) => Math.round(text.length / 4)

const summarySystem = "You are a helpful assistant tasked with summarizing conversations for continuing them later."
const summaryPrompt =
  "Provide a detailed summary of the conversation so far, to continue it in a new session: what was done, what is being worked on, which files matter, and what comes next."

const isSummary = (message: Msg) => message.info.role === "assistant" && message.info.summary === true

/**
 * A user message someone typed. Not: notes (ignored text, such as the plugin's own prune notes), OpenCode's own
 * messages (synthetic text, such as "continue" after a compaction), and compaction requests.
 */
export const isPrompt = (message: Msg): boolean =>
  !message.parts.some((part) => part.type === "compaction") &&
  message.parts.some((part) =>
    part.type === "file" || (part.type === "text" && part.ignored !== true && part.synthetic !== true)
  )

/** OpenCode 1.18.33 cuts each tool result it writes out for its summariser to this many characters. */
const summaryResultChars = 2000

/**
 * A message as OpenCode 1.18.33 writes it out for its compaction summariser: the user's text (not ignored) and
 * attachments; the assistant's text, reasoning, and each tool call with its whole input and its result (cut to
 * `summaryResultChars`; an output its `compaction.prune` cleared as such) or error.
 */
const summaryLines = (message: Msg): string => {
  if (message.info.role === "user") {
    const text = message.parts.filter((part) => part.type === "text" && part.ignored !== true).map((part) => part.text)
      .filter(Boolean).join("\n")
    const files = message.parts.flatMap((part) =>
      part.type === "file" ? [`[Attached ${part.mime}: ${part.filename ?? "file"}]`] : []
    )
    return [...(text ? [`[User]: ${text}`] : []), ...files].join("\n")
  }
  return message.parts.flatMap((part) => {
    if (part.type === "text") return part.text ? [`[Assistant]: ${part.text}`] : []
    if (part.type === "reasoning") return part.text ? [`[Assistant reasoning]: ${part.text}`] : []
    if (part.type !== "tool") return []
    const called = `[Assistant tool call]: ${part.tool}(${JSON.stringify(part.state.input)})`
    if (part.state.status === "completed") {
      const attached = ((part.state.attachments ?? []) as Array<{ mime: string; filename?: string }>).map((file) =>
        `[Attached ${file.mime}: ${file.filename ?? "file"}]`
      )
      const output = [part.state.output, ...attached].join("\n")
      const result = part.state.time?.compacted !== undefined
        ? "[Old tool result content cleared]"
        : output.length <= summaryResultChars
        ? output
        : `${output.slice(0, summaryResultChars)}\n[truncated]`
      return [called, `[Tool result]: ${result}`]
    }
    if (part.state.status === "error") return [called, `[Tool error]: ${part.state.error}`]
    return [called]
  }).join("\n")
}

/** What OpenCode sends for a message that fits in a compaction tail, by its estimate. */
const messageSize = (message: Msg) => estimate(JSON.stringify(message.parts))

export const drive = async (options: DriveOptions): Promise<Driven> => {
  const { sessionID, messages: stored, plugin, model } = options
  const hooks = plugin.hooks
  const builder = new WireBuilder(stored, [], options.hostTools.map(([name]) => name))
  const tokensOf = blockTokens(builder.blocks, options.count)
  const meters = options.profiles.map((profile) => new CostMeter(profile, builder.blocks, tokensOf))
  const ttl = (options.profiles[0]?.ttlSeconds ?? 300) * 1000
  const definitions: Array<readonly [string, string]> = [...options.hostTools]
  for (const [name, definition] of Object.entries(hooks?.tool ?? {})) {
    // As OpenCode 1.18 does: the `tool.definition` hook may set the JSON Schema sent for the arguments.
    const output: { description: string; parameters: unknown; jsonSchema?: unknown } = {
      description: definition.description,
      parameters: tool.schema.object(definition.args)
    }
    await hooks?.["tool.definition"]?.({ toolID: name }, output as { description: string; parameters: unknown })
    definitions.push([
      name,
      JSON.stringify({
        description: output.description,
        input_schema: output.jsonSchema ?? hostArgumentsSchema(definition.args)
      })
    ])
  }
  const usable = usableWindow(model)
  const summaryText = Array.from(
    { length: Math.round((options.summaryTokens ?? 2000) / 1.3) },
    (_, i) => summaryPrompt.split(" ")[i % 24]
  ).join(" ")
  const summaryOutput = options.count(summaryText)

  // The history as OpenCode stores it, with the compactions it would have made inserted where they happened.
  const history: Array<Msg> = []
  const cleared = new Map<string, number>()
  const transformMs: Array<number> = []
  const systemMs: Array<number> = []
  const phasesMs = { copy: 0, accounting: 0, idle: 0 }
  const requestTokens: Array<number> = []
  const modelCalls = { replayed: 0, accepted: 0, rejected: 0 }
  const requests = stored.filter((message) => message.info.role === "assistant").length
  let time = stored[0]?.info.time?.created ?? 0
  let previous: number | undefined
  let pausesOverTtl = 0
  let compactions = 0
  let summariesOverWindow = 0
  const edits = { made: 0, masked: 0 }
  const directory = options.directory ?? "/"
  let reReads = 0
  let turnOpen = false
  let scanned = 0
  let done = 0
  let overflow = false
  let last: SentRequest | undefined

  const setTime = (ms: number) => {
    time = Math.max(time, ms)
    plugin.setTime(time)
  }
  const record = (wire: ReturnType<WireBuilder["request"]>, summary = false, model?: string) => {
    const start = performance.now()
    const costs = meters.map((meter) => meter.record(wire, time, model))
    const tokens = costs[0]?.tokens ?? 0
    requestTokens.push(tokens)
    phasesMs.accounting += performance.now() - start
    options.onRequest?.(costs, summary)
    return tokens
  }
  /** A fresh copy of what is sent, with OpenCode's own cleared outputs marked as it marks them. */
  const copyOf = (visible: ReadonlyArray<Msg>): Array<Msg> => {
    const start = performance.now()
    const copy = freshCopy(visible, visible.length)
    if (cleared.size > 0) {
      for (const message of copy) {
        for (const part of message.parts) {
          const at = part.type === "tool" ? cleared.get(part.callID) : undefined
          if (at !== undefined) part.state = { ...part.state, time: { ...part.state.time, compacted: at } }
        }
      }
    }
    phasesMs.copy += performance.now() - start
    return copy
  }
  const idle = async () => {
    const start = performance.now()
    if (options.openCodePrune === true) openCodePrune(history, cleared, time)
    await hooks?.event?.({ event: { type: "session.idle", properties: { sessionID } } } as never)
    phasesMs.idle += performance.now() - start
    // The plugin's compaction between turns: OpenCode runs it at once, before the user's next prompt. A replay without
    // OpenCode's compaction stands for `compaction.auto: false`, where the plugin asks for none either.
    if ((plugin.compactionsAsked?.() ?? 0) > 0 && options.compactAtOverflow === true) {
      overflow = false
      await compact()
    }
  }
  const transform = async (copy: Array<Msg>, system: Array<string>, summary: boolean) => {
    const t0 = performance.now()
    await hooks?.["experimental.chat.messages.transform"]?.({} as never, { messages: copy } as never)
    const t1 = performance.now()
    if (!summary) {
      const info = {
        id: model.modelID,
        providerID: model.providerID,
        limit: { context: model.context, output: model.output }
      }
      await hooks?.["experimental.chat.system.transform"]?.({ sessionID, model: info } as never, { system })
      if (options.otherSystem !== undefined) system.push(options.otherSystem)
    }
    transformMs.push(t1 - t0)
    systemMs.push(performance.now() - t1)
  }

  /** OpenCode compacts: its summary request, then a compaction request and the summary in the history. */
  const compact = async () => {
    compactions++
    const visible = visibleHistory(history)
    const context: Array<string> = []
    await hooks?.["experimental.session.compacting"]?.(
      { sessionID } as never,
      { context, prompt: undefined } as never
    )
    const request: Msg = {
      info: { id: `msg_dcp_compaction_${compactions}`, sessionID, role: "user", time: { created: time } },
      parts: [{
        id: `prt_dcp_compaction_${compactions}`,
        type: "compaction",
        auto: true,
        tail_start_id: undefined as unknown
      }]
    }
    // The tail: the newest messages that fit OpenCode's budget, starting at a user message when a turn fits whole.
    let size = 0
    let tail = visible.length
    while (tail > 0 && size + messageSize(visible[tail - 1]!) <= tailBudget) size += messageSize(visible[--tail]!)
    const head = copyOf(visible.slice(0, tail))
    await transform(head, [summarySystem], true)
    const prompt: Msg = {
      info: { id: `msg_dcp_summary_prompt_${compactions}`, role: "user" },
      parts: [{ type: "text", text: [summaryPrompt, ...context, ...head.map(summaryLines)].filter(Boolean).join("\n") }]
    }
    builder.hostMessage(prompt.info.id)
    if (record(builder.request([], [summarySystem], [prompt]), true) > model.context) summariesOverWindow++
    for (const meter of meters) meter.output(summaryOutput)
    const tailStart = visible[tail]?.info.id
    if (tailStart !== undefined) request.parts[0]!.tail_start_id = tailStart
    const summary: Msg = {
      info: {
        id: `msg_dcp_summary_${compactions}`,
        sessionID,
        role: "assistant",
        summary: true,
        finish: "stop",
        parentID: request.info.id,
        time: { created: time, completed: time }
      },
      parts: [{ id: `prt_dcp_summary_${compactions}`, type: "text", text: summaryText }]
    }
    builder.hostMessage(request.info.id)
    builder.hostMessage(summary.info.id)
    history.push(request, summary)
    await hooks?.event?.({ event: { type: "session.compacted", properties: { sessionID } } } as never)
  }

  /** Sends the request whose answer is the next message: the visible history, after the plugin's transforms. */
  const send = async (summary: boolean, modelName: string | undefined) => {
    const visible = visibleHistory(history)
    const copy = copyOf(visible)
    const own = options.system(time)
    builder.hostSystem(own)
    const system = [...own]
    await transform(copy, system, summary)
    const sent = summary ? [] : rejoin(system, own[0])
    const tokens = record(
      builder.request(summary ? [] : definitions, summary ? system : sent, copy),
      summary,
      modelName
    )
    if (!summary) {
      last = { definitions, system: sent, messages: copy, visible, index: done, time }
      overflow = tokens >= usable
    }
    return { visible, copy }
  }

  for (let k = 0; k < stored.length; k++) {
    const message = stored[k]!
    const info = message.info
    if (info.role === "user") {
      if (turnOpen) await idle()
      turnOpen = false
      setTime(info.time?.created ?? time)
      history.push(message)
      if (isPrompt(message)) {
        await hooks?.["chat.message"]?.(
          { sessionID, agent: info.agent, model: info.model, messageID: info.id } as never,
          { message: info, parts: message.parts } as never
        )
      }
      continue
    }
    turnOpen = true
    for (; scanned < k; scanned++) await replayModelCalls(stored[scanned]!)
    setTime(info.time?.created ?? time)
    if (previous !== undefined && time - previous > ttl) pausesOverTtl++
    previous = time
    if (overflow && options.compactAtOverflow === true && !isSummary(message)) {
      overflow = false
      await compact()
    }
    const summary = isSummary(message)
    if (summary) {
      await hooks?.["experimental.session.compacting"]?.(
        { sessionID } as never,
        { context: [], prompt: undefined } as never
      )
    }
    const modelName = info.providerID === undefined || info.modelID === undefined
      ? undefined
      : `${info.providerID}/${info.modelID}`
    const { copy } = await send(summary, modelName)
    if (!summary) {
      const masked = countEdits(message, history, copy)
      if (options.reReadMasked === true && masked.length > 0) {
        // The model cannot make the edit from a placeholder or a summary: it reads the files first, then edits.
        const reRead = reReadOf(masked, history, directory, String(reReads++), { ...info, time: { created: time } })
        builder.hostMessage(reRead.info.id)
        history.push(reRead)
        for (const meter of meters) meter.output(options.count(JSON.stringify(reRead.parts.map(callOf))))
        if (overflow && options.compactAtOverflow === true) {
          overflow = false
          await compact()
        }
        await send(false, modelName)
      }
    }
    history.push(message)
    done++
    options.onProgress?.(done, requests)
    await options.between?.(done)
  }
  if (turnOpen) await idle()

  /**
   * The edits `response` makes, against what the session's history so far (`before`, compacted or not) and its
   * request (`sent`) showed of each file; the files it edits that the request did not show.
   */
  function countEdits(response: Msg, before: ReadonlyArray<Msg>, sent: ReadonlyArray<Msg>): Array<string> {
    const paths = response.parts.flatMap((part) => editedFiles(part, directory))
    if (paths.length === 0) return []
    const { shown, seen } = seenIn(before, sent, directory)
    const masked: Array<string> = []
    for (const path of new Set(paths)) {
      if (!shown.has(path)) continue
      edits.made += paths.filter((edited) => edited === path).length
      if (!seen.has(path)) {
        edits.masked += paths.filter((edited) => edited === path).length
        masked.push(path)
      }
    }
    return masked
  }

  async function replayModelCalls(message: Msg) {
    for (const part of message.parts) {
      const definition = part.type === "tool" && part.state?.status === "completed"
        ? hooks?.tool?.[part.tool]
        : undefined
      if (definition === undefined || (part.tool !== "discard" && part.tool !== "extract")) continue
      modelCalls.replayed++
      const args = tool.schema.object(definition.args).safeParse(part.state.input ?? {})
      const end = part.state.time?.end
      if (typeof end === "number") setTime(end)
      const context = {
        sessionID,
        messageID: String(message.info.id),
        agent: message.info.agent ?? "build",
        directory: options.directory ?? "/",
        worktree: options.directory ?? "/",
        abort: new AbortController().signal,
        metadata: () => {},
        ask: async () => {}
      }
      const accepted = args.success
        ? await definition.execute(args.data, context as never).then(() => true, () => false)
        : false
      if (accepted) modelCalls.accepted++
      else modelCalls.rejected++
    }
  }

  const priced: Record<string, Priced> = {}
  for (const meter of meters) priced[meter.profile.name] = meter.priced()
  return {
    requests: done,
    priced,
    requestTokens,
    compactions,
    summariesOverWindow,
    openCodePruned: cleared.size,
    pausesOverTtl,
    edits,
    reReads,
    modelCalls,
    last,
    builder,
    tokensOf,
    transformMs,
    systemMs,
    phasesMs
  }
}

/** Tokens of what the plugin added (tool definitions, system section, messages), summed over the requests. */
export const addedTokens = (driven: Driven): number => {
  let tokens = 0
  for (const [block, times] of driven.builder.added) tokens += driven.tokensOf(block) * times
  return tokens
}

/** Exact o200k token counts, for priced figures. */
export const o200kCount = async (): Promise<(text: string) => number> => {
  const { countTokens } = await import("gpt-tokenizer/encoding/o200k_base")
  const plain = { disallowedSpecial: new Set<string>() }
  return (text) => countTokens(text, plain)
}

/**
 * OpenCode keeps its system prompt in two parts for caching: when a plugin leaves more than two strings and the first
 * unchanged, the rest are joined into the second.
 */
const rejoin = (system: ReadonlyArray<string>, header: string | undefined): Array<string> =>
  system.length > 2 && system[0] === header ? [system[0]!, system.slice(1).join("\n")] : [...system]

/** OpenCode's `compaction.prune`, run at the end of a turn on the stored history. */
const openCodePrune = (history: ReadonlyArray<Msg>, cleared: Map<string, number>, time: number) => {
  let total = 0
  let pruned = 0
  let users = 0
  const found: Array<string> = []
  scan: for (let m = history.length - 1; m >= 0; m--) {
    const message = history[m]!
    if (message.info.role === "user") users++
    if (users < 2) continue
    if (isSummary(message)) break
    for (let p = message.parts.length - 1; p >= 0; p--) {
      const part = message.parts[p]!
      if (part.type !== "tool" || part.state?.status !== "completed" || pruneProtectedTools.has(part.tool)) continue
      if (cleared.has(part.callID)) break scan
      const tokens = estimate(typeof part.state.output === "string" ? part.state.output : "")
      total += tokens
      if (total <= pruneProtect) continue
      pruned += tokens
      found.push(part.callID)
    }
  }
  if (pruned > pruneMinimum) { for (const callID of found) cleared.set(callID, time) }
}
