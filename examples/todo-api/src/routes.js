// HTTP routes of the API. Every response is JSON; errors are { error, problems? }.
import { NotFoundError, ValidationError } from "./store.js"

const MAX_BODY = 64 * 1024

class HttpError extends Error {
  constructor(status, message) {
    super(message)
    this.status = status
  }
}

function send(res, status, body) {
  const text = body === undefined ? "" : JSON.stringify(body)
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text)
  })
  res.end(text)
}

async function readJson(req) {
  let size = 0
  const chunks = []
  for await (const chunk of req) {
    size += chunk.length
    if (size > MAX_BODY) throw new HttpError(413, "body too large")
    chunks.push(chunk)
  }
  if (chunks.length === 0) throw new HttpError(400, "body required")
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"))
  } catch {
    throw new HttpError(400, "body is not valid JSON")
  }
}

function parseId(text) {
  const id = Number(text)
  if (!Number.isInteger(id) || id <= 0) throw new HttpError(400, `invalid id ${text}`)
  return id
}

function parseBoolean(value, name) {
  if (value === null) return undefined
  if (value === "true") return true
  if (value === "false") return false
  throw new HttpError(400, `${name} must be true or false`)
}

function parseCount(value, name, fallback, max) {
  if (value === null) return fallback
  const n = Number(value)
  if (!Number.isInteger(n) || n < 0 || n > max) throw new HttpError(400, `${name} must be a whole number from 0 to ${max}`)
  return n
}

function listQuery(params) {
  const filter = {
    done: parseBoolean(params.get("done"), "done"),
    tag: params.get("tag") ?? undefined,
    priority: params.get("priority") ?? undefined,
    q: params.get("q") ?? undefined
  }
  const options = {
    sort: params.get("sort") ?? "id",
    offset: parseCount(params.get("offset"), "offset", 0, 1_000_000),
    limit: parseCount(params.get("limit"), "limit", 50, 200)
  }
  if (!["id", "priority", "title", "updated"].includes(options.sort)) {
    throw new HttpError(400, "sort must be one of id, priority, title, updated")
  }
  return { filter, options }
}

export function createHandler(store, clock = () => new Date()) {
  const routes = async (req, url) => {
    const parts = url.pathname.split("/").filter(Boolean)
    if (parts[0] === "stats" && parts.length === 1 && req.method === "GET") {
      return [200, store.stats()]
    }
    if (parts[0] !== "todos" || parts.length > 2) throw new HttpError(404, "no such route")
    if (parts.length === 1) {
      switch (req.method) {
        case "GET": {
          const { filter, options } = listQuery(url.searchParams)
          return [200, store.list(filter, options)]
        }
        case "POST":
          return [201, store.create(await readJson(req), clock())]
        default:
          throw new HttpError(405, `${req.method} not allowed on /todos`)
      }
    }
    const id = parseId(parts[1])
    switch (req.method) {
      case "GET":
        return [200, store.get(id)]
      case "PATCH":
        return [200, store.update(id, await readJson(req), clock())]
      case "DELETE":
        store.remove(id)
        return [204, undefined]
      default:
        throw new HttpError(405, `${req.method} not allowed on /todos/:id`)
    }
  }

  return async (req, res) => {
    const url = new URL(req.url, "http://localhost")
    try {
      const [status, body] = await routes(req, url)
      send(res, status, body)
    } catch (error) {
      if (error instanceof HttpError) send(res, error.status, { error: error.message })
      else if (error instanceof NotFoundError) send(res, 404, { error: error.message })
      else if (error instanceof ValidationError) send(res, 422, { error: "invalid todo", problems: error.problems })
      else {
        console.error(error)
        send(res, 500, { error: "internal error" })
      }
    }
  }
}
