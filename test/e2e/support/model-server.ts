import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** One scripted model reply: text, tool calls, or both. */
export interface Reply {
  readonly text?: string
  /** `id` is the call ID OpenCode stores and sends back with the result (default `call_<n>`). */
  readonly toolCalls?: ReadonlyArray<
    { readonly name: string; readonly args: Record<string, unknown>; readonly id?: string }
  >
  /**
   * The reply is held until this settles: a script waits for an event of OpenCode's (a refreshed tool list) before
   * the agent loop goes on, instead of hoping it lands within the requests left.
   */
  readonly after?: () => Promise<unknown>
}

/** A request body as OpenCode sent it (OpenAI chat-completions format). */
export interface RecordedRequest {
  readonly model: string
  readonly messages: ReadonlyArray<{ role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }>
  readonly tools?: ReadonlyArray<{ function: { name: string } }>
  readonly [key: string]: unknown
}

/** A content block of an Anthropic Messages request (text, tool_use, tool_result, ...). */
export interface AnthropicBlock {
  readonly type: string
  readonly text?: string
  readonly id?: string
  readonly name?: string
  readonly input?: unknown
  readonly tool_use_id?: string
  readonly content?: string | ReadonlyArray<AnthropicBlock>
  readonly cache_control?: unknown
  readonly [key: string]: unknown
}

/** A request body as OpenCode sent it through `@ai-sdk/anthropic` (Anthropic Messages format). */
export interface AnthropicRequest {
  readonly model: string
  readonly system?: string | ReadonlyArray<AnthropicBlock>
  readonly messages: ReadonlyArray<{ role: string; content: string | ReadonlyArray<AnthropicBlock> }>
  readonly tools?: ReadonlyArray<{ name: string; cache_control?: unknown; readonly [key: string]: unknown }>
  readonly [key: string]: unknown
}

/** Bodies received in one protocol, with their arrival times (ms) in the same order. */
interface RecordedLog<T> {
  readonly requests: Array<T>
  readonly times: Array<number>
  /** Requests for the main model only, in order. */
  readonly main: () => ReadonlyArray<T>
}

/**
 * The input tokens the scripted model reports for a request (`usage.prompt_tokens`): about what a real provider
 * would count, one token per four characters of the messages and tool definitions, so figures derived from
 * reported usage (`/dcp context`) are realistic and can be checked against the request.
 */
export const reportedPromptTokens = (body: RecordedRequest): number =>
  Math.ceil(JSON.stringify({ messages: body.messages, tools: body.tools ?? [] }).length / 4)

/** The same estimate for an Anthropic body (`usage.input_tokens`): system, messages and tool definitions. */
const reportedInputTokens = (body: AnthropicRequest): number =>
  Math.ceil(JSON.stringify({ system: body.system ?? [], messages: body.messages, tools: body.tools ?? [] }).length / 4)

/**
 * A scripted model server on 127.0.0.1 that answers from a script and records every request body: what the model saw.
 * It speaks both OpenAI chat completions (`POST /v1/chat/completions`, recorded in `requests`) and Anthropic Messages
 * (`POST /v1/messages`, recorded in `anthropic`), from one script. Requests for the small model (title generation) are
 * answered apart, so they do not consume the script. When the script runs out, it answers with a short final text.
 */
export interface ModelServer {
  readonly url: string
  readonly requests: Array<RecordedRequest>
  /** When each request arrived (ms), in the order of `requests`. */
  readonly times: Array<number>
  /** Requests for the main model only, in order. */
  readonly main: () => ReadonlyArray<RecordedRequest>
  /** The Anthropic Messages requests. */
  readonly anthropic: RecordedLog<AnthropicRequest>
  readonly script: (replies: ReadonlyArray<Reply>) => void
  readonly close: () => Promise<void>
}

export const startModelServer = async (
  smallModel = "fake-small",
  smallReply = "Scripted session",
  /**
   * Tokens (by `reportedPromptTokens`) above which a request is refused as a provider refuses one longer than the
   * model's window: HTTP 400 with OpenAI's `context_length_exceeded`, or Anthropic's "prompt is too long". Recorded,
   * and no scripted reply spent on it.
   */
  contextLimit = Number.POSITIVE_INFINITY
): Promise<ModelServer> => {
  const requests: Array<RecordedRequest> = []
  const times: Array<number> = []
  const anthropic: RecordedLog<AnthropicRequest> = {
    requests: [],
    times: [],
    main: () => anthropic.requests.filter((request) => request.model !== smallModel)
  }
  let queue: Array<Reply> = []
  let callCounter = 0
  const server: Server = createServer((req, res) => {
    void handle(req, res)
  })
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    if (req.method === "POST" && req.url?.endsWith("/messages")) {
      await answerAnthropic(JSON.parse(Buffer.concat(chunks).toString("utf8")) as AnthropicRequest, res)
      return
    }
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404).end()
      return
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as RecordedRequest
    requests.push(body)
    times.push(Date.now())
    const size = reportedPromptTokens(body)
    if (size > contextLimit) {
      res.writeHead(400, { "content-type": "application/json" })
      res.end(JSON.stringify({
        error: {
          message:
            `This model's maximum context length is ${contextLimit} tokens. However, your messages resulted in ${size} tokens.`,
          type: "invalid_request_error",
          code: "context_length_exceeded"
        }
      }))
      return
    }
    const reply: Reply = body.model === smallModel
      ? { text: smallReply }
      : queue.shift() ?? { text: "Done." }
    await reply.after?.()
    const stream = body.stream === true
    const toolCalls = (reply.toolCalls ?? []).map((call) => ({
      id: call.id ?? `call_${++callCounter}`,
      type: "function",
      function: { name: call.name, arguments: JSON.stringify(call.args) }
    }))
    const finish = toolCalls.length > 0 ? "tool_calls" : "stop"
    const promptTokens = reportedPromptTokens(body)
    const usage = { prompt_tokens: promptTokens, completion_tokens: 10, total_tokens: promptTokens + 10 }
    if (!stream) {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify({
        id: "chatcmpl-1",
        object: "chat.completion",
        created: 0,
        model: body.model,
        choices: [{
          index: 0,
          message: {
            role: "assistant",
            content: reply.text ?? null,
            ...(toolCalls.length ? { tool_calls: toolCalls } : {})
          },
          finish_reason: finish
        }],
        usage
      }))
      return
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" })
    const send = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`)
    const base = { id: "chatcmpl-1", object: "chat.completion.chunk", created: 0, model: body.model }
    send({ ...base, choices: [{ index: 0, delta: { role: "assistant" }, finish_reason: null }] })
    if (reply.text !== undefined) {
      send({ ...base, choices: [{ index: 0, delta: { content: reply.text }, finish_reason: null }] })
    }
    toolCalls.forEach((call, index) => {
      send({ ...base, choices: [{ index: 0, delta: { tool_calls: [{ index, ...call }] }, finish_reason: null }] })
    })
    send({ ...base, choices: [{ index: 0, delta: {}, finish_reason: finish }] })
    send({ ...base, choices: [], usage })
    res.end("data: [DONE]\n\n")
  }
  const answerAnthropic = async (body: AnthropicRequest, res: ServerResponse) => {
    anthropic.requests.push(body)
    anthropic.times.push(Date.now())
    const size = reportedInputTokens(body)
    if (size > contextLimit) {
      res.writeHead(400, { "content-type": "application/json" })
      res.end(JSON.stringify({
        type: "error",
        error: {
          type: "invalid_request_error",
          message: `prompt is too long: ${size} tokens > ${contextLimit} maximum`
        }
      }))
      return
    }
    const reply: Reply = body.model === smallModel
      ? { text: smallReply }
      : queue.shift() ?? { text: "Done." }
    await reply.after?.()
    const content = [
      ...(reply.text === undefined ? [] : [{ type: "text" as const, text: reply.text }]),
      ...(reply.toolCalls ?? []).map((call) => ({
        type: "tool_use" as const,
        id: call.id ?? `toolu_${++callCounter}`,
        name: call.name,
        input: call.args
      }))
    ]
    const stopReason = reply.toolCalls?.length ? "tool_use" : "end_turn"
    const usage = {
      input_tokens: reportedInputTokens(body),
      output_tokens: 10,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0
    }
    const message = {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: body.model,
      content,
      stop_reason: stopReason,
      stop_sequence: null,
      usage
    }
    if (body.stream !== true) {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify(message))
      return
    }
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" })
    const send = (data: { type: string; [key: string]: unknown }) =>
      res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`)
    send({
      type: "message_start",
      message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } }
    })
    content.forEach((block, index) => {
      if (block.type === "text") {
        send({ type: "content_block_start", index, content_block: { type: "text", text: "" } })
        send({ type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } })
      } else {
        send({ type: "content_block_start", index, content_block: { ...block, input: {} } })
        send({
          type: "content_block_delta",
          index,
          delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) }
        })
      }
      send({ type: "content_block_stop", index })
    })
    send({
      type: "message_delta",
      delta: { stop_reason: stopReason, stop_sequence: null },
      usage: { output_tokens: 10 }
    })
    send({ type: "message_stop" })
    res.end()
  }
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    times,
    main: () => requests.filter((request) => request.model !== smallModel),
    anthropic,
    script: (replies) => {
      queue = [...replies]
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
  }
}
