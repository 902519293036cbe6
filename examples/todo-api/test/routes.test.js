import assert from "node:assert/strict"
import { createServer } from "node:http"
import { after, before, describe, it } from "node:test"
import { createHandler } from "../src/routes.js"
import { createStore } from "../src/store.js"

let server
let base

const request = async (method, path, body) => {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body)
  })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
}

before(async () => {
  const store = createStore([
    { id: 1, title: "Write the README", tags: ["docs"], priority: "normal", done: true, createdAt: "2026-01-05T09:00:00.000Z", updatedAt: "2026-01-05T09:00:00.000Z" },
    { id: 2, title: "Fix the login bug", tags: ["bug"], priority: "high", done: false, createdAt: "2026-01-05T09:05:00.000Z", updatedAt: "2026-01-05T09:05:00.000Z" }
  ])
  server = createServer(createHandler(store, () => new Date("2026-01-10T10:00:00.000Z")))
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve))
  base = `http://127.0.0.1:${server.address().port}`
})

after(() => new Promise((resolve) => server.close(resolve)))

describe("routes", () => {
  it("GET /todos lists and filters", async () => {
    const all = await request("GET", "/todos")
    assert.equal(all.status, 200)
    assert.equal(all.body.total, 2)
    const open = await request("GET", "/todos?done=false")
    assert.deepEqual(open.body.items.map((todo) => todo.id), [2])
  })

  it("GET /todos rejects a bad query", async () => {
    assert.equal((await request("GET", "/todos?done=maybe")).status, 400)
    assert.equal((await request("GET", "/todos?limit=1000")).status, 400)
    assert.equal((await request("GET", "/todos?sort=colour")).status, 400)
  })

  it("POST /todos creates a todo", async () => {
    const created = await request("POST", "/todos", { title: "Review the PR", tags: ["review"] })
    assert.equal(created.status, 201)
    assert.equal(created.body.id, 3)
    assert.equal(created.body.createdAt, "2026-01-10T10:00:00.000Z")
  })

  it("POST /todos answers 422 with the problems", async () => {
    const rejected = await request("POST", "/todos", { title: "" })
    assert.equal(rejected.status, 422)
    assert.deepEqual(rejected.body.problems, ["title must not be empty"])
  })

  it("POST /todos answers 400 for a body that is not JSON", async () => {
    assert.equal((await request("POST", "/todos", "{nope")).status, 400)
  })

  it("PATCH /todos/:id changes a todo", async () => {
    const patched = await request("PATCH", "/todos/2", { done: true })
    assert.equal(patched.status, 200)
    assert.equal(patched.body.done, true)
  })

  it("DELETE /todos/:id removes a todo, then 404", async () => {
    assert.equal((await request("DELETE", "/todos/1")).status, 204)
    assert.equal((await request("GET", "/todos/1")).status, 404)
  })

  it("GET /stats counts todos", async () => {
    const stats = await request("GET", "/stats")
    assert.equal(stats.status, 200)
    assert.equal(typeof stats.body.total, "number")
  })

  it("unknown routes and methods", async () => {
    assert.equal((await request("GET", "/nope")).status, 404)
    assert.equal((await request("PUT", "/todos")).status, 405)
    assert.equal((await request("GET", "/todos/abc")).status, 400)
  })
})
