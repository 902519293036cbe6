// An in-memory store of todos. Ids are increasing integers, never reused.
import { validatePatch, validateTodo } from "./validate.js"

export class NotFoundError extends Error {
  constructor(id) {
    super(`todo ${id} not found`)
    this.name = "NotFoundError"
    this.id = id
  }
}

export class ValidationError extends Error {
  constructor(problems) {
    super(problems.join("; "))
    this.name = "ValidationError"
    this.problems = problems
  }
}

const PRIORITY_ORDER = { high: 0, normal: 1, low: 2 }

function copy(todo) {
  return { ...todo, tags: [...todo.tags] }
}

function matches(todo, filter) {
  if (filter.done !== undefined && todo.done !== filter.done) return false
  if (filter.tag !== undefined && !todo.tags.includes(filter.tag)) return false
  if (filter.priority !== undefined && todo.priority !== filter.priority) return false
  if (filter.q !== undefined && !todo.title.toLowerCase().includes(filter.q.toLowerCase())) return false
  return true
}

function compare(sort) {
  switch (sort) {
    case "priority":
      return (a, b) => PRIORITY_ORDER[a.priority] - PRIORITY_ORDER[b.priority] || a.id - b.id
    case "title":
      return (a, b) => a.title.localeCompare(b.title) || a.id - b.id
    case "updated":
      return (a, b) => b.updatedAt.localeCompare(a.updatedAt) || a.id - b.id
    default:
      return (a, b) => a.id - b.id
  }
}

export function createStore(seed = []) {
  const todos = new Map()
  let nextId = 1

  for (const todo of seed) {
    todos.set(todo.id, copy(todo))
    nextId = Math.max(nextId, todo.id + 1)
  }

  return {
    list(filter = {}, options = {}) {
      const sorted = [...todos.values()].filter((todo) => matches(todo, filter)).sort(compare(options.sort))
      const offset = options.offset ?? 0
      const limit = options.limit ?? 50
      return { total: sorted.length, items: sorted.slice(offset, offset + limit).map(copy) }
    },

    get(id) {
      const todo = todos.get(id)
      if (todo === undefined) throw new NotFoundError(id)
      return copy(todo)
    },

    create(input, now = new Date()) {
      const problems = validateTodo(input)
      if (problems.length > 0) throw new ValidationError(problems)
      const stamp = now.toISOString()
      const todo = {
        id: nextId++,
        title: input.title.trim(),
        tags: input.tags ?? [],
        priority: input.priority ?? "normal",
        done: input.done ?? false,
        createdAt: stamp,
        updatedAt: stamp
      }
      todos.set(todo.id, todo)
      return copy(todo)
    },

    update(id, patch, now = new Date()) {
      const todo = todos.get(id)
      if (todo === undefined) throw new NotFoundError(id)
      const problems = validatePatch(patch)
      if (problems.length > 0) throw new ValidationError(problems)
      const next = { ...todo, ...patch, updatedAt: now.toISOString() }
      if (patch.title !== undefined) next.title = patch.title.trim()
      todos.set(id, next)
      return copy(next)
    },

    remove(id) {
      if (!todos.delete(id)) throw new NotFoundError(id)
    },

    stats() {
      let done = 0
      const byPriority = { high: 0, normal: 0, low: 0 }
      const byTag = {}
      for (const todo of todos.values()) {
        if (todo.done) done++
        byPriority[todo.priority]++
        for (const tag of todo.tags) byTag[tag] = (byTag[tag] ?? 0) + 1
      }
      return { total: todos.size, done, open: todos.size - done, byPriority, byTag }
    }
  }
}
