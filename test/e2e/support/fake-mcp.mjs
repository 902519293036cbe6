/**
 * An MCP server for the end-to-end tier, spoken to over stdio by OpenCode (`mcp` in its config), one JSON-RPC message
 * a line. It offers two tools, `noop` and `toggle`; calling `toggle` adds a third, `extra`, and tells OpenCode that its tool list
 * changed (`notifications/tools/list_changed`), as servers with tools that come and go do. OpenCode then fetches the
 * list again and sends the new tools with the session's next request.
 */
import { createInterface } from "node:readline"

let toggled = false

const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`)

const tool = (name, description) => ({
  name,
  description,
  inputSchema: { type: "object", properties: { note: { type: "string" } } }
})

const tools = () => [
  tool("noop", "Does nothing."),
  tool("toggle", "Adds the extra tool to this server's tools."),
  ...(toggled ? [tool("extra", "A tool that exists once toggle has been called.")] : [])
]

const handle = (message) => {
  const { id, method, params } = message
  if (id === undefined) return
  switch (method) {
    case "initialize":
      return send({
        id,
        result: {
          protocolVersion: params?.protocolVersion ?? "2025-06-18",
          capabilities: { tools: { listChanged: true } },
          serverInfo: { name: "fake-mcp", version: "1.0.0" }
        }
      })
    case "ping":
      return send({ id, result: {} })
    case "tools/list":
      return send({ id, result: { tools: tools() } })
    case "tools/call": {
      const name = params?.name
      if (name === "toggle") {
        toggled = true
        send({ id, result: { content: [{ type: "text", text: "The extra tool is on." }] } })
        return send({ method: "notifications/tools/list_changed" })
      }
      return send({ id, result: { content: [{ type: "text", text: `${name} ran.` }] } })
    }
    default:
      return send({ id, error: { code: -32601, message: `Method not found: ${method}` } })
  }
}

createInterface({ input: process.stdin }).on("line", (line) => {
  if (line.trim() === "") return
  handle(JSON.parse(line))
})
