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
 * - `compactAtOverflow`: when a request reaches the model's usable window (`usableWindow`), OpenCode compacts before
 *   the next one (compaction.ts; the summary, of `summaryTokens`, is priced as output).
 * - `openCodePrune` (`compaction.prune: true`): at the end of each turn OpenCode clears old outputs (prune.ts).
 * - A compaction the plugin asks for when a turn ends (`DrivenPlugin.compactionsAsked`): OpenCode runs it at once, the
 *   same way, before the next prompt (or after the last turn: a session may end right after it, and it is priced).
 */
import type { Hooks } from "@opencode-ai/plugin"
import { tool } from "@opencode-ai/plugin"
import { visibleHistory } from "../host/view.ts"
import type { PricingProfile } from "../pricing/profiles.ts"
import type { Msg } from "../host/schema.ts"
import { compactionMessages, summaryRequest, summarySystem, summaryText, tailStart } from "./compaction.ts"
import { freshCopy } from "./copy.ts"
import { CostMeter, type Priced, type RequestCost } from "./cost.ts"
import { type Edits, editsIn, reReadOf, writtenCalls } from "./edits.ts"
import { type Fidelity, FidelityMeter } from "./fidelity.ts"
import { type DriveModel, isPrompt, isSummary, pluginToolDefinitions, rejoin, usableWindow } from "./opencode.ts"
import { openCodePrune } from "./prune.ts"
import { blockTokens, type Wire, WireBuilder } from "./wire.ts"

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
  /** Measure what the model used that its requests showed (`Driven.fidelity`; default true). */
  readonly fidelity?: boolean
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
  /** The model's edits of files it had seen, and how many of them it made with that content masked. */
  readonly edits: Edits
  /** Requests the model spent reading files again before editing them (`reReadMasked`). */
  readonly reReads: number
  /** What the model went on to use that its requests did not show (SPEC 9.12, fidelity.ts). */
  readonly fidelity: Fidelity
  readonly modelCalls: { readonly replayed: number; readonly accepted: number; readonly rejected: number }
  readonly last: SentRequest | undefined
  readonly builder: WireBuilder
  readonly tokensOf: (block: number) => number
  /** Wall time of each request's messages and system transforms, ms. */
  readonly transformMs: ReadonlyArray<number>
  readonly systemMs: ReadonlyArray<number>
  readonly phasesMs: { copy: number; accounting: number; idle: number }
}

export const drive = async (options: DriveOptions): Promise<Driven> => {
  const definitions = [...options.hostTools, ...await pluginToolDefinitions(options.plugin.hooks)]
  const replay = new Replay(options, definitions)
  for (let k = 0; k < options.messages.length; k++) {
    const message = options.messages[k]!
    if (message.info.role === "user") await replay.user(message)
    else await replay.assistant(k, message)
  }
  await replay.end()
  return replay.result()
}

/** One replay's state, as OpenCode's would be: its stored history, what it has sent, and what that cost. */
class Replay {
  private readonly hooks: Hooks | undefined
  private readonly builder: WireBuilder
  private readonly tokensOf: (block: number) => number
  private readonly meters: ReadonlyArray<CostMeter>
  private readonly fidelity: FidelityMeter
  /** The first profile's prompt-cache TTL, ms. */
  private readonly ttl: number
  private readonly usable: number
  private readonly summary: string
  private readonly summaryOutput: number
  private readonly directory: string
  /** The history as OpenCode stores it, with the compactions it would have made inserted where they happened. */
  private readonly history: Array<Msg> = []
  /** Outputs OpenCode's own pruning cleared: call ID -> when. */
  private readonly cleared = new Map<string, number>()
  private readonly transformMs: Array<number> = []
  private readonly systemMs: Array<number> = []
  private readonly phasesMs = { copy: 0, accounting: 0, idle: 0 }
  private readonly requestTokens: Array<number> = []
  private readonly modelCalls = { replayed: 0, accepted: 0, rejected: 0 }
  private readonly edits = { made: 0, masked: 0 }
  /** Assistant messages: the requests the session made. */
  private readonly requests: number
  private time: number
  private previous: number | undefined
  private pausesOverTtl = 0
  private compactions = 0
  private summariesOverWindow = 0
  private reReads = 0
  private turnOpen = false
  /** Stored messages whose model calls were replayed through the plugin's tools. */
  private scanned = 0
  private done = 0
  /** The latest request reached the usable window: OpenCode compacts before the next. */
  private overflow = false
  private last: SentRequest | undefined

  private readonly options: DriveOptions
  /** The tool definitions every request but a summary request sends: OpenCode's, then the plugin's. */
  private readonly definitions: ReadonlyArray<readonly [string, string]>

  constructor(options: DriveOptions, definitions: ReadonlyArray<readonly [string, string]>) {
    this.options = options
    this.definitions = definitions
    const stored = options.messages
    this.hooks = options.plugin.hooks
    this.builder = new WireBuilder(stored, [], options.hostTools.map(([name]) => name))
    this.tokensOf = blockTokens(this.builder.blocks, options.count)
    this.meters = options.profiles.map((profile) => new CostMeter(profile, this.builder.blocks, this.tokensOf))
    this.fidelity = new FidelityMeter(stored, options.count, options.profiles)
    this.ttl = (options.profiles[0]?.ttlSeconds ?? 300) * 1000
    this.usable = usableWindow(options.model)
    this.summary = summaryText(options.summaryTokens ?? 2000)
    this.summaryOutput = options.count(this.summary)
    this.directory = options.directory ?? "/"
    this.requests = stored.filter((message) => message.info.role === "assistant").length
    this.time = stored[0]?.info.time?.created ?? 0
  }

  /** A user message: the previous turn ends, and a prompt is announced. */
  async user(message: Msg) {
    if (this.turnOpen) await this.idle()
    this.turnOpen = false
    this.setTime(message.info.time?.created ?? this.time)
    this.history.push(message)
    if (isPrompt(message)) {
      const info = message.info
      await this.hooks?.["chat.message"]?.(
        { sessionID: this.options.sessionID, agent: info.agent, model: info.model, messageID: info.id } as never,
        { message: info, parts: message.parts } as never
      )
    }
  }

  /** The `k`th stored message, an assistant's: the request whose answer it is. */
  async assistant(k: number, message: Msg) {
    const info = message.info
    this.turnOpen = true
    for (; this.scanned < k; this.scanned++) await this.replayModelCalls(this.options.messages[this.scanned]!)
    this.setTime(info.time?.created ?? this.time)
    if (this.previous !== undefined && this.time - this.previous > this.ttl) this.pausesOverTtl++
    this.previous = this.time
    const summary = isSummary(message)
    if (!summary) await this.compactIfOverflowed()
    if (summary) {
      await this.hooks?.["experimental.session.compacting"]?.(
        { sessionID: this.options.sessionID } as never,
        { context: [], prompt: undefined } as never
      )
    }
    const modelName = info.providerID === undefined || info.modelID === undefined
      ? undefined
      : `${info.providerID}/${info.modelID}`
    const sent = await this.send(summary, modelName)
    if (!summary) {
      // The request just before the reply: after the reads of masked files the model is taken to make first, whose
      // cost is priced already, so what is measured is what no re-read mended.
      const last = await this.countEdits(message, sent.messages, modelName) ?? sent
      if (this.options.fidelity !== false) {
        const start = performance.now()
        this.fidelity.measure(message, last)
        this.phasesMs.accounting += performance.now() - start
      }
    }
    this.history.push(message)
    this.done++
    this.options.onProgress?.(this.done, this.requests)
    await this.options.between?.(this.done)
  }

  /** The last turn ends. */
  async end() {
    if (this.turnOpen) await this.idle()
  }

  result(): Driven {
    const priced: Record<string, Priced> = {}
    for (const meter of this.meters) priced[meter.profile.name] = meter.priced()
    return {
      requests: this.done,
      priced,
      requestTokens: this.requestTokens,
      compactions: this.compactions,
      summariesOverWindow: this.summariesOverWindow,
      openCodePruned: this.cleared.size,
      pausesOverTtl: this.pausesOverTtl,
      edits: this.edits,
      reReads: this.reReads,
      fidelity: this.fidelity.result(),
      modelCalls: this.modelCalls,
      last: this.last,
      builder: this.builder,
      tokensOf: this.tokensOf,
      transformMs: this.transformMs,
      systemMs: this.systemMs,
      phasesMs: this.phasesMs
    }
  }

  private setTime(ms: number) {
    this.time = Math.max(this.time, ms)
    this.options.plugin.setTime(this.time)
  }

  private async compactIfOverflowed() {
    if (!this.overflow || this.options.compactAtOverflow !== true) return
    this.overflow = false
    await this.compact()
  }

  /** Prices one request under every profile; its tokens (by the first profile). */
  private record(wire: Wire, summary: boolean, model?: string): number {
    const start = performance.now()
    const costs = this.meters.map((meter) => meter.record(wire, this.time, model))
    const tokens = costs[0]?.tokens ?? 0
    this.requestTokens.push(tokens)
    this.phasesMs.accounting += performance.now() - start
    this.options.onRequest?.(costs, summary)
    return tokens
  }

  /** A fresh copy of what is sent, with OpenCode's own cleared outputs marked as it marks them. */
  private copyOf(visible: ReadonlyArray<Msg>): Array<Msg> {
    const start = performance.now()
    const copy = freshCopy(visible, visible.length)
    if (this.cleared.size > 0) {
      for (const message of copy) {
        for (const part of message.parts) {
          const at = part.type === "tool" ? this.cleared.get(part.callID) : undefined
          if (at !== undefined) part.state = { ...part.state, time: { ...part.state.time, compacted: at } }
        }
      }
    }
    this.phasesMs.copy += performance.now() - start
    return copy
  }

  /** The session goes idle at the end of a turn: OpenCode's own pruning, then the plugin's compaction, if asked. */
  private async idle() {
    const start = performance.now()
    if (this.options.openCodePrune === true) openCodePrune(this.history, this.cleared, this.time)
    await this.hooks?.event?.({
      event: { type: "session.idle", properties: { sessionID: this.options.sessionID } }
    } as never)
    this.phasesMs.idle += performance.now() - start
    // OpenCode runs it at once, before the user's next prompt. A replay without OpenCode's compaction stands for
    // `compaction.auto: false`, where the plugin asks for none either.
    if ((this.options.plugin.compactionsAsked?.() ?? 0) > 0 && this.options.compactAtOverflow === true) {
      this.overflow = false
      await this.compact()
    }
  }

  /** The plugin's transforms of what a request sends; a summary request's system prompt is OpenCode's own. */
  private async transform(copy: Array<Msg>, system: Array<string>, summary: boolean) {
    const { model, sessionID } = this.options
    const t0 = performance.now()
    await this.hooks?.["experimental.chat.messages.transform"]?.({} as never, { messages: copy } as never)
    const t1 = performance.now()
    if (!summary) {
      const info = {
        id: model.modelID,
        providerID: model.providerID,
        limit: { context: model.context, output: model.output }
      }
      await this.hooks?.["experimental.chat.system.transform"]?.({ sessionID, model: info } as never, { system })
      if (this.options.otherSystem !== undefined) system.push(this.options.otherSystem)
    }
    this.transformMs.push(t1 - t0)
    this.systemMs.push(performance.now() - t1)
  }

  /** OpenCode compacts: its summary request, then a compaction request and the summary in the history. */
  private async compact() {
    const { sessionID } = this.options
    const n = ++this.compactions
    const visible = visibleHistory(this.history)
    const context: Array<string> = []
    await this.hooks?.["experimental.session.compacting"]?.(
      { sessionID } as never,
      { context, prompt: undefined } as never
    )
    const tail = tailStart(visible)
    const head = this.copyOf(visible.slice(0, tail))
    await this.transform(head, [summarySystem], true)
    const prompt = summaryRequest(n, context, head)
    this.builder.hostMessage(prompt.info.id)
    if (this.record(this.builder.request([], [summarySystem], [prompt]), true) > this.options.model.context) {
      this.summariesOverWindow++
    }
    for (const meter of this.meters) meter.output(this.summaryOutput)
    const [request, summary] = compactionMessages(n, sessionID, this.time, visible[tail]?.info.id, this.summary)
    this.builder.hostMessage(request.info.id)
    this.builder.hostMessage(summary.info.id)
    this.history.push(request, summary)
    await this.hooks?.event?.({ event: { type: "session.compacted", properties: { sessionID } } } as never)
  }

  /** Sends the request whose answer is the next message: the visible history, after the plugin's transforms. */
  private async send(summary: boolean, modelName: string | undefined) {
    const visible = visibleHistory(this.history)
    const copy = this.copyOf(visible)
    const own = this.options.system(this.time)
    this.builder.hostSystem(own)
    const system = [...own]
    await this.transform(copy, system, summary)
    const sent = summary ? [] : rejoin(system, own[0])
    const wire = this.builder.request(summary ? [] : this.definitions, summary ? system : sent, copy)
    const tokens = this.record(wire, summary, modelName)
    if (!summary) {
      this.last = {
        definitions: this.definitions,
        system: sent,
        messages: copy,
        visible,
        index: this.done,
        time: this.time
      }
      this.overflow = tokens >= this.usable
    }
    return { visible, messages: copy, system: sent, hostSystem: own, tokens }
  }

  /**
   * Counts the edits `response` makes against what its request (`sent`) showed; with `reReadMasked`, the model first
   * reads the files it could not see (it cannot make the edit from a placeholder or a summary), in one more request,
   * which this returns.
   */
  private async countEdits(response: Msg, sent: ReadonlyArray<Msg>, modelName: string | undefined) {
    const found = editsIn(response, this.history, sent, this.directory)
    this.edits.made += found.made
    this.edits.masked += found.masked
    if (this.options.reReadMasked !== true || found.maskedFiles.length === 0) return undefined
    const info = { ...response.info, time: { created: this.time } }
    const reRead = reReadOf(found.maskedFiles, this.history, this.directory, String(this.reReads++), info)
    this.builder.hostMessage(reRead.info.id)
    this.history.push(reRead)
    for (const meter of this.meters) meter.output(this.options.count(writtenCalls(reRead)))
    await this.compactIfOverflowed()
    return await this.send(false, modelName)
  }

  /** The model's own discard/extract calls in `message`, run through the plugin's tools as they ran. */
  private async replayModelCalls(message: Msg) {
    for (const part of message.parts) {
      const definition = part.type === "tool" && part.state?.status === "completed"
        ? this.hooks?.tool?.[part.tool]
        : undefined
      if (definition === undefined || (part.tool !== "discard" && part.tool !== "extract")) continue
      this.modelCalls.replayed++
      const args = tool.schema.object(definition.args).safeParse(part.state.input ?? {})
      const end = part.state.time?.end
      if (typeof end === "number") this.setTime(end)
      const context = {
        sessionID: this.options.sessionID,
        messageID: String(message.info.id),
        agent: message.info.agent ?? "build",
        directory: this.options.directory ?? "/",
        worktree: this.options.directory ?? "/",
        abort: new AbortController().signal,
        metadata: () => {},
        ask: async () => {}
      }
      const accepted = args.success
        ? await definition.execute(args.data, context as never).then(() => true, () => false)
        : false
      if (accepted) this.modelCalls.accepted++
      else this.modelCalls.rejected++
    }
  }
}

/** Tokens of what the plugin added (tool definitions, system section, messages), summed over the requests. */
export const addedTokens = (driven: Driven): number => {
  let tokens = 0
  for (const [block, times] of driven.builder.added) tokens += driven.tokensOf(block) * times
  return tokens
}
