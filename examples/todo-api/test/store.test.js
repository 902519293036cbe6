import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { createStore, NotFoundError, ValidationError } from "../src/store.js"

const at = (iso) => new Date(iso)

const seeded = () =>
  createStore([
    { id: 1, title: "Write the README", tags: ["docs"], priority: "normal", done: true, createdAt: "2026-01-05T09:00:00.000Z", updatedAt: "2026-01-06T10:00:00.000Z" },
    { id: 2, title: "Fix the login bug", tags: ["bug", "auth"], priority: "high", done: false, createdAt: "2026-01-05T09:05:00.000Z", updatedAt: "2026-01-05T09:05:00.000Z" },
    { id: 3, title: "Plan the sprint", tags: [], priority: "low", done: false, createdAt: "2026-01-05T09:10:00.000Z", updatedAt: "2026-01-07T08:00:00.000Z" }
  ])

describe("createStore", () => {
  it("lists todos by id by default", () => {
    const { total, items } = seeded().list()
    assert.equal(total, 3)
    assert.deepEqual(items.map((todo) => todo.id), [1, 2, 3])
  })

  it("filters by done, tag, priority and text", () => {
    const store = seeded()
    assert.deepEqual(store.list({ done: false }).items.map((todo) => todo.id), [2, 3])
    assert.deepEqual(store.list({ tag: "bug" }).items.map((todo) => todo.id), [2])
    assert.deepEqual(store.list({ priority: "low" }).items.map((todo) => todo.id), [3])
    assert.deepEqual(store.list({ q: "readme" }).items.map((todo) => todo.id), [1])
  })

  it("sorts by priority, then id", () => {
    const { items } = seeded().list({}, { sort: "priority" })
    assert.deepEqual(items.map((todo) => todo.id), [2, 1, 3])
  })

  it("pages with offset and limit", () => {
    const { total, items } = seeded().list({}, { offset: 1, limit: 1 })
    assert.equal(total, 3)
    assert.deepEqual(items.map((todo) => todo.id), [2])
  })

  it("creates todos with defaults and the next id", () => {
    const todo = seeded().create({ title: "  Ship it  " }, at("2026-01-08T12:00:00.000Z"))
    assert.deepEqual(todo, {
      id: 4,
      title: "Ship it",
      tags: [],
      priority: "normal",
      done: false,
      createdAt: "2026-01-08T12:00:00.000Z",
      updatedAt: "2026-01-08T12:00:00.000Z"
    })
  })

  it("rejects an invalid todo with every problem", () => {
    assert.throws(
      () => seeded().create({ title: "", priority: "urgent", colour: "red" }),
      (error) => error instanceof ValidationError && error.problems.length === 3
    )
  })

  it("updates fields and the update time", () => {
    const store = seeded()
    const todo = store.update(2, { done: true }, at("2026-01-09T00:00:00.000Z"))
    assert.equal(todo.done, true)
    assert.equal(todo.updatedAt, "2026-01-09T00:00:00.000Z")
    assert.equal(store.get(2).done, true)
  })

  it("hands out copies, never its own objects", () => {
    const store = seeded()
    store.get(2).tags.push("changed")
    assert.deepEqual(store.get(2).tags, ["bug", "auth"])
  })

  it("throws NotFoundError for unknown ids", () => {
    const store = seeded()
    assert.throws(() => store.get(99), NotFoundError)
    assert.throws(() => store.update(99, { done: true }), NotFoundError)
    assert.throws(() => store.remove(99), NotFoundError)
  })

  it("counts todos by state, priority and tag", () => {
    assert.deepEqual(seeded().stats(), {
      total: 3,
      done: 1,
      open: 2,
      byPriority: { high: 1, normal: 1, low: 1 },
      byTag: { docs: 1, bug: 1, auth: 1 }
    })
  })
})
