/**
 * A language server for the end-to-end tier, spoken to over stdio by OpenCode (`lsp` in its config): it reports one
 * error for every line of an opened or changed document that says BROKEN, and nothing else. OpenCode appends such
 * errors to the result of the file change that caused them. `node fake-lsp.mjs <log>` also appends the URI of every
 * document it reported on to <log>, one a line, so a test can wait until OpenCode has a document open.
 */
import { appendFileSync } from "node:fs"

const log = process.argv[2]
let buffer = Buffer.alloc(0)

const send = (message) => {
  const body = Buffer.from(JSON.stringify(message))
  process.stdout.write(`Content-Length: ${body.length}\r\n\r\n`)
  process.stdout.write(body)
}

const publish = (uri, version, text) => {
  const diagnostics = []
  text.split("\n").forEach((line, i) => {
    const at = line.indexOf("BROKEN")
    if (at >= 0) {
      diagnostics.push({
        range: { start: { line: i, character: at }, end: { line: i, character: at + 6 } },
        severity: 1,
        message: "Cannot find name 'BROKEN'."
      })
    }
  })
  send({ jsonrpc: "2.0", method: "textDocument/publishDiagnostics", params: { uri, version, diagnostics } })
  if (log !== undefined) appendFileSync(log, `${uri}\n`)
}

const handle = (message) => {
  const { id, method, params } = message
  if (method === "initialize") send({ jsonrpc: "2.0", id, result: { capabilities: { textDocumentSync: 1 } } })
  else if (method === "exit") process.exit(0)
  else if (method === "textDocument/didOpen") {
    publish(params.textDocument.uri, params.textDocument.version, params.textDocument.text)
  } else if (method === "textDocument/didChange") {
    publish(params.textDocument.uri, params.textDocument.version, params.contentChanges.at(-1).text)
  } else if (id !== undefined && method !== undefined) send({ jsonrpc: "2.0", id, result: null })
}

process.stdin.on("data", (chunk) => {
  buffer = Buffer.concat([buffer, chunk])
  for (;;) {
    const end = buffer.indexOf("\r\n\r\n")
    if (end < 0) return
    const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, end).toString())?.[1] ?? 0)
    if (buffer.length < end + 4 + length) return
    const message = JSON.parse(buffer.subarray(end + 4, end + 4 + length).toString())
    buffer = buffer.subarray(end + 4 + length)
    handle(message)
  }
})
