/**
 * How a slash command tells OpenCode 1.18 "handled, no model turn". Its server only skips the model turn when the
 * `command.execute.before` hook throws, and answers any thrown error with HTTP 500. Its HTTP layer (Effect's
 * HttpServer) does however send a thrown value that is an HTTP response as the response itself. Such a value is
 * recognised by one property key, so the plugin throws a 200 JSON response: clients see the command succeed.
 *
 * This leans on a detail of the host's HTTP layer. If a later OpenCode stops recognising the shape, the throw
 * becomes an ordinary error: HTTP 500, still with no model turn and with the output already stored.
 */
const responseKey = "~effect/http/HttpServerResponse"

export const handledResponse = (body: unknown): object => response(200, "OK", body ?? {})

/**
 * "Refused, no model turn": the command's arguments were wrong and it did nothing. A 400 response whose body is the
 * message as a JSON string: `opencode run --command` exits with 1 and prints it as `Error: <message>` (an object
 * body it would print as JSON), and the SDK hands clients the string as the error.
 */
export const refusedResponse = (message: string): object => response(400, "Bad Request", message)

const response = (status: number, statusText: string, body: unknown): object => {
  const bytes = new TextEncoder().encode(JSON.stringify(body))
  return {
    [responseKey]: responseKey,
    status,
    statusText,
    headers: { "content-type": "application/json" },
    cookies: { cookies: {} },
    body: { _tag: "Uint8Array", body: bytes, contentType: "application/json", contentLength: bytes.length }
  }
}
