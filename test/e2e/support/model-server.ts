import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"

/** One scripted model reply: text, tool calls, or both. */
export interface Reply {
  readonly text?: string
  /** `id` is the call ID OpenCode stores and sends back with the result (default `call_<n>`). */
  readonly toolCalls?: ReadonlyArray<
    { readonly name: string; readonly args: Record<string, unknown>; readonly id?: string }
  >
}

/** A request body as OpenCode sent it (OpenAI chat-completions format). */
export interface RecordedRequest {
  readonly model: string
  readonly messages: ReadonlyArray<{ role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }>
  readonly tools?: ReadonlyArray<{ function: { name: string } }>
  readonly [key: string]: unknown
}

/**
 * The input tokens the scripted model reports for a request (`usage.prompt_tokens`): about what a real provider
 * would count, one token per four characters of the messages and tool definitions, so figures derived from
 * reported usage (`/dcp context`) are realistic and can be checked against the request.
 */
export const reportedPromptTokens = (body: RecordedRequest): number =>
  Math.ceil(JSON.stringify({ messages: body.messages, tools: body.tools ?? [] }).length / 4)

/**
 * An OpenAI-compatible chat-completions server on 127.0.0.1 that answers from a script and records every request
 * body: what the model saw. Requests for the small model (title generation) are answered apart, so they do not
 * consume the script. When the script runs out, it answers with a short final text.
 */
export interface ModelServer {
  readonly url: string
  readonly requests: Array<RecordedRequest>
  /** When each request arrived (ms), in the order of `requests`. */
  readonly times: Array<number>
  /** Requests for the main model only, in order. */
  readonly main: () => ReadonlyArray<RecordedRequest>
  readonly script: (replies: ReadonlyArray<Reply>) => void
  readonly close: () => Promise<void>
}

export const startModelServer = async (
  smallModel = "fake-small",
  smallReply = "Scripted session"
): Promise<ModelServer> => {
  const requests: Array<RecordedRequest> = []
  const times: Array<number> = []
  let queue: Array<Reply> = []
  let callCounter = 0
  const server: Server = createServer((req, res) => {
    void handle(req, res)
  })
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404).end()
      return
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as RecordedRequest
    requests.push(body)
    times.push(Date.now())
    const reply: Reply = body.model === smallModel
      ? { text: smallReply }
      : queue.shift() ?? { text: "Done." }
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
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    times,
    main: () => requests.filter((request) => request.model !== smallModel),
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
