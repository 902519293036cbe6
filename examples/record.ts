/**
 * Records examples/session.json, the example session `npm start` analyses: a real OpenCode session, made by the real
 * OpenCode binary (the `opencode-ai` dev dependency) working on a copy of examples/todo-api/ for a scripted model, then
 * exported with `opencode export`. See examples/README.md for what the session contains and what was changed after.
 *
 *   node examples/record.ts            (about half a minute; needs the npm registry once, for OpenCode's first start)
 *
 * The plugin is not loaded while recording: the export is what a user without it would hand to the analyser.
 */
import { execFileSync } from "node:child_process"
import { closeSync, openSync } from "node:fs"
import { access, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { Random } from "../src/simulator/generator/random.ts"
import { type Reply, startModelServer } from "../test/e2e/support/model-server.ts"
import { opencodeBinary, startOpenCode } from "../test/e2e/support/opencode.ts"

const here = dirname(fileURLToPath(import.meta.url))
const repo = join(here, "..")
const projectSource = join(here, "todo-api")
const output = join(here, "session.json")
/** Where the project appears to live in the published export (the temp directory is replaced by it). */
const shownDirectory = "/home/dev/todo-api"
/** The session's first message, after re-pacing: Monday 12 January 2026, 09:14 UTC. */
const sessionStart = Date.UTC(2026, 0, 12, 9, 14, 0)

// ---- the project --------------------------------------------------------------------------------------------

const exists = (path: string) => access(path).then(() => true, () => false)

const filesUnder = async (dir: string): Promise<Record<string, string>> => {
  const files: Record<string, string> = {}
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue
    const path = join(entry.parentPath, entry.name)
    files[relative(dir, path)] = await readFile(path, "utf8")
  }
  return files
}

/** The seed data the API starts with: 120 todos, the same every time. */
const seedTodos = (): string => {
  const random = new Random(2026)
  const verbs = ["Fix", "Write", "Review", "Plan", "Update", "Remove", "Test", "Document", "Refactor", "Ship"]
  const things = [
    "the login flow",
    "the billing page",
    "the export job",
    "flaky CI on main",
    "the onboarding email",
    "API rate limits",
    "the settings screen",
    "search ranking",
    "the mobile layout",
    "database backups",
    "the release notes",
    "error pages",
    "the admin dashboard",
    "password reset",
    "the webhook retries",
    "dark mode",
    "the invoice PDF",
    "audit logging"
  ]
  const tags = ["bug", "docs", "frontend", "backend", "ops", "design", "billing", "auth", "infra", "qa"]
  const priorities = ["low", "normal", "normal", "high"] as const
  const todos = Array.from({ length: 120 }, (_, i) => {
    const created = Date.UTC(2025, 10, 3) + i * 7 * 3_600_000 + random.int(0, 3_600_000)
    const updated = created + random.int(0, 20) * 86_400_000
    return {
      id: i + 1,
      title: `${random.pick(verbs)} ${random.pick(things)}`,
      tags: [...new Set(Array.from({ length: random.int(0, 3) }, () => random.pick(tags)))],
      priority: random.pick(priorities),
      done: random.chance(0.45),
      createdAt: new Date(created).toISOString(),
      updatedAt: new Date(updated).toISOString()
    }
  })
  return `${JSON.stringify(todos, null, 2)}\n`
}

// ---- the script ---------------------------------------------------------------------------------------------

interface Turn {
  /** What the user typed. */
  readonly prompt: string
  /** Minutes the user took before typing it (re-pacing, see below). */
  readonly pauseMinutes: number
  readonly replies: ReadonlyArray<Reply>
}

let callCount = 0
const calls = (...list: ReadonlyArray<readonly [string, Record<string, unknown>]>): Reply["toolCalls"] =>
  list.map(([name, args]) => ({ name, args, id: `call_${String(++callCount).padStart(3, "0")}` }))
const step = (text: string | undefined, ...list: ReadonlyArray<readonly [string, Record<string, unknown>]>): Reply => ({
  ...(text === undefined ? {} : { text }),
  toolCalls: calls(...list)
})
const say = (text: string): Reply => ({ text })

const script = (project: string): ReadonlyArray<Turn> => {
  const p = (file: string) => join(project, file)
  const read = (file: string) => ["read", { filePath: p(file) }] as const
  const edit = (file: string, oldString: string, newString: string) =>
    ["edit", { filePath: p(file), oldString, newString }] as const
  const write = (file: string, content: string) => ["write", { filePath: p(file), content }] as const
  const bash = (command: string) => ["bash", { command }] as const
  const npmTest = bash("npm test")

  const datesBuggy = `// Due dates are calendar days ("YYYY-MM-DD"), compared in UTC.

const DAY = /^\\d{4}-\\d{2}-\\d{2}$/

export const DUE_FILTERS = ["overdue", "today", "upcoming"]

/** Whether \`value\` is a real calendar day written as YYYY-MM-DD. */
export function isDay(value) {
  if (typeof value !== "string" || !DAY.test(value)) return false
  const date = new Date(\`\${value}T00:00:00.000Z\`)
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value
}

/** The UTC calendar day of a time. */
export function dayOf(time) {
  return time.toISOString().slice(0, 10)
}

/** "overdue", "today" or "upcoming" for a due day; undefined without one. */
export function dueState(due, now) {
  if (due === undefined || due === null) return undefined
  const today = dayOf(now)
  if (due < today) return "overdue"
  if (due >= today) return "upcoming"
  return "today"
}
`
  const datesTest = `import assert from "node:assert/strict"
import { describe, it } from "node:test"
import { dayOf, dueState, isDay } from "../src/dates.js"

const now = new Date("2026-01-10T15:30:00.000Z")

describe("dates", () => {
  it("accepts real calendar days only", () => {
    assert.equal(isDay("2026-01-10"), true)
    assert.equal(isDay("2026-02-30"), false)
    assert.equal(isDay("2026-1-10"), false)
    assert.equal(isDay(20260110), false)
  })

  it("takes the UTC day of a time", () => {
    assert.equal(dayOf(new Date("2026-01-10T23:59:59.999Z")), "2026-01-10")
  })

  it("tells overdue, today and upcoming apart", () => {
    assert.equal(dueState("2026-01-09", now), "overdue")
    assert.equal(dueState("2026-01-10", now), "today")
    assert.equal(dueState("2026-01-11", now), "upcoming")
  })

  it("has no state without a due day", () => {
    assert.equal(dueState(undefined, now), undefined)
    assert.equal(dueState(null, now), undefined)
  })
})
`
  const smoke = [
    "PORT=3456 node src/server.js & server=$!",
    "sleep 1",
    "echo '--- all todos'",
    "curl -s 'http://localhost:3456/todos?limit=200'",
    "echo; echo '--- overdue'",
    "curl -s 'http://localhost:3456/todos?due=overdue'",
    "echo; echo '--- give todo 7 a due day in the past'",
    "curl -s -X PATCH -H 'content-type: application/json' -d '{\"due\":\"2026-01-05\"}' http://localhost:3456/todos/7",
    "echo; echo '--- overdue again'",
    "curl -s 'http://localhost:3456/todos?due=overdue'",
    "echo; echo '--- a bad filter'",
    "curl -s 'http://localhost:3456/todos?due=soon'",
    "echo; echo '--- stats'",
    "curl -s http://localhost:3456/stats",
    "echo; kill $server"
  ].join("\n")
  const todos = [
    { content: "Validate an optional due day (YYYY-MM-DD)", status: "in_progress", priority: "high" },
    { content: "Store due and filter by overdue/today/upcoming", status: "pending", priority: "high" },
    { content: "Accept ?due= on GET /todos", status: "pending", priority: "medium" },
    { content: "Tests for dates and the due filter", status: "pending", priority: "medium" }
  ]

  return [
    {
      prompt:
        "Todos need an optional due date. Add a `due` field (YYYY-MM-DD) and let GET /todos filter with ?due=overdue, today or upcoming. Keep the tests green.",
      pauseMinutes: 0,
      replies: [
        step("I'll plan this first.", ["todowrite", { todos }]),
        step(
          "Let me look at the project.",
          bash("find . -name '*.js' -not -path './node_modules/*' | sort"),
          read("package.json"),
          read("README.md")
        ),
        step(undefined, read("src/store.js"), read("src/validate.js")),
        step(undefined, read("src/routes.js"), read("test/routes.test.js")),
        step(undefined, read("test/store.test.js")),
        step(undefined, bash("grep -rn priority src test")),
        step("Running the tests before changing anything.", npmTest),
        step("And the seed data, to see what todos look like.", read("data/todos.json")),
        step("A small module for due days first.", write("src/dates.js", datesBuggy)),
        step(
          undefined,
          edit(
            "src/validate.js",
            "// Validation of todo input. Every function returns a list of problems; an empty list means valid.\n",
            '// Validation of todo input. Every function returns a list of problems; an empty list means valid.\nimport { isDay } from "./dates.js"\n'
          )
        ),
        step(
          undefined,
          edit(
            "src/validate.js",
            'function checkPriority(priority, problems) {\n  if (!PRIORITIES.includes(priority)) {\n    problems.push(`priority must be one of ${PRIORITIES.join(", ")}`)\n  }\n}\n',
            'function checkPriority(priority, problems) {\n  if (!PRIORITIES.includes(priority)) {\n    problems.push(`priority must be one of ${PRIORITIES.join(", ")}`)\n  }\n}\n\nfunction checkDue(due, problems) {\n  if (!isDay(due)) problems.push("due must be a calendar day written as YYYY-MM-DD")\n}\n'
          )
        ),
        step(
          undefined,
          edit(
            "src/validate.js",
            '  if (input.priority !== undefined) checkPriority(input.priority, problems)\n  if (input.done !== undefined && typeof input.done !== "boolean") problems.push("done must be true or false")\n  for (const key of Object.keys(input)) {\n    if (!["title", "tags", "priority", "done"].includes(key)) problems.push(`unknown field ${key}`)\n  }\n',
            '  if (input.priority !== undefined) checkPriority(input.priority, problems)\n  if (input.due !== undefined) checkDue(input.due, problems)\n  if (input.done !== undefined && typeof input.done !== "boolean") problems.push("done must be true or false")\n  for (const key of Object.keys(input)) {\n    if (!["title", "tags", "priority", "due", "done"].includes(key)) problems.push(`unknown field ${key}`)\n  }\n'
          )
        ),
        step(
          undefined,
          edit(
            "src/validate.js",
            "  if (input.done !== undefined) checkDone(input.done, problems)\n  for (const key of keys) {\n",
            "  if (input.done !== undefined) checkDone(input.done, problems)\n  if (input.due !== undefined) checkDue(input.due, problems)\n  for (const key of keys) {\n"
          )
        ),
        step("validatePatch does not look the way I assumed; reading the file again.", read("src/validate.js")),
        step(
          undefined,
          edit(
            "src/validate.js",
            '  for (const key of keys) {\n    if (!["title", "tags", "priority", "done"].includes(key)) problems.push(`unknown field ${key}`)\n  }\n',
            '  if (input.due !== undefined) checkDue(input.due, problems)\n  for (const key of keys) {\n    if (!["title", "tags", "priority", "due", "done"].includes(key)) problems.push(`unknown field ${key}`)\n  }\n'
          )
        ),
        step(
          "Now the store.",
          edit(
            "src/store.js",
            'import { validatePatch, validateTodo } from "./validate.js"',
            'import { dueState } from "./dates.js"\nimport { validatePatch, validateTodo } from "./validate.js"'
          )
        ),
        step(
          undefined,
          edit(
            "src/store.js",
            "function matches(todo, filter) {\n  if (filter.done !== undefined && todo.done !== filter.done) return false\n",
            "function matches(todo, filter, now) {\n  if (filter.done !== undefined && todo.done !== filter.done) return false\n  if (filter.due !== undefined && dueState(todo.due, now) !== filter.due) return false\n"
          )
        ),
        step(
          undefined,
          edit(
            "src/store.js",
            "    list(filter = {}, options = {}) {\n      const sorted = [...todos.values()].filter((todo) => matches(todo, filter)).sort(compare(options.sort))\n",
            "    list(filter = {}, options = {}) {\n      const now = options.now ?? new Date()\n      const sorted = [...todos.values()].filter((todo) => matches(todo, filter, now)).sort(compare(options.sort))\n"
          )
        ),
        step(
          undefined,
          edit(
            "src/store.js",
            '        priority: input.priority ?? "normal",\n        done: input.done ?? false,\n',
            '        priority: input.priority ?? "normal",\n        ...(input.due === undefined ? {} : { due: input.due }),\n        done: input.done ?? false,\n'
          )
        ),
        step(
          "And the route.",
          edit(
            "src/routes.js",
            'import { NotFoundError, ValidationError } from "./store.js"',
            'import { DUE_FILTERS } from "./dates.js"\nimport { NotFoundError, ValidationError } from "./store.js"'
          )
        ),
        step(
          undefined,
          edit(
            "src/routes.js",
            '    q: params.get("q") ?? undefined\n  }\n',
            '    q: params.get("q") ?? undefined,\n    due: params.get("due") ?? undefined\n  }\n  if (filter.due !== undefined && !DUE_FILTERS.includes(filter.due)) {\n    throw new HttpError(400, `due must be one of ${DUE_FILTERS.join(", ")}`)\n  }\n'
          )
        ),
        step(
          undefined,
          edit(
            "src/routes.js",
            "          return [200, store.list(filter, options)]",
            "          return [200, store.list(filter, { ...options, now: clock() })]"
          )
        ),
        step(undefined, npmTest),
        step("Existing tests pass. Tests for the new module:", write("test/dates.test.js", datesTest)),
        step(undefined, bash("node --test test/dates.test.js")),
        step("A due day of today comes out as upcoming. Let me check dueState.", read("src/dates.js")),
        step(
          undefined,
          edit(
            "src/dates.js",
            '  if (due < today) return "overdue"\n  if (due >= today) return "upcoming"\n  return "today"\n',
            '  if (due === today) return "today"\n  return due < today ? "overdue" : "upcoming"\n'
          )
        ),
        step(undefined, bash("node --test test/dates.test.js")),
        step(
          "Fixed. Now a store test for the filter.",
          edit(
            "test/store.test.js",
            "      byTag: { docs: 1, bug: 1, auth: 1 }\n    })\n  })\n})\n",
            '      byTag: { docs: 1, bug: 1, auth: 1 }\n    })\n  })\n\n  it("filters by due state relative to now", () => {\n    const store = seeded()\n    const now = at("2026-01-10T12:00:00.000Z")\n    store.update(2, { due: "2026-01-09" }, now)\n    store.update(3, { due: "2026-01-10" }, now)\n    const ids = (due) => store.list({ due }, { now }).items.map((todo) => todo.id)\n    assert.deepEqual(ids("overdue"), [2])\n    assert.deepEqual(ids("today"), [3])\n    assert.deepEqual(ids("upcoming"), [])\n  })\n})\n'
          )
        ),
        step(undefined, npmTest),
        step("All green. A last look at the store as it is now.", read("src/store.js")),
        step(undefined, ["todowrite", { todos: todos.map((todo) => ({ ...todo, status: "completed" })) }]),
        say(
          "Done. Todos take an optional `due` day (YYYY-MM-DD, validated in src/validate.js through the new src/dates.js), and `GET /todos?due=overdue|today|upcoming` filters by it, relative to the request time. New tests: test/dates.test.js and a due-filter case in test/store.test.js; `npm test` passes (24 tests)."
        )
      ]
    },
    {
      prompt:
        "Overdue shouldn't include todos that are already done. Also, PATCH should accept `due: null` to clear the date.",
      pauseMinutes: 8,
      replies: [
        step(undefined, read("src/dates.js"), read("src/store.js")),
        step(undefined, bash("grep -rn due src")),
        step(
          undefined,
          edit(
            "src/store.js",
            "  if (filter.due !== undefined && dueState(todo.due, now) !== filter.due) return false\n",
            '  if (filter.due !== undefined) {\n    // A finished todo is never overdue, whatever its due day.\n    const state = filter.due === "overdue" && todo.done ? undefined : dueState(todo.due, now)\n    if (state !== filter.due) return false\n  }\n'
          )
        ),
        step(
          undefined,
          edit(
            "src/validate.js",
            "  if (input.due !== undefined) checkDue(input.due, problems)\n  for (const key of keys) {\n",
            "  if (input.due !== undefined && input.due !== null) checkDue(input.due, problems)\n  for (const key of keys) {\n"
          )
        ),
        step(
          undefined,
          edit(
            "src/store.js",
            "      if (patch.title !== undefined) next.title = patch.title.trim()\n",
            "      if (patch.title !== undefined) next.title = patch.title.trim()\n      if (patch.due === null) next.due = null\n"
          )
        ),
        step(undefined, npmTest),
        step(
          "Tests for both cases.",
          edit(
            "test/store.test.js",
            '    assert.deepEqual(ids("upcoming"), [])\n  })\n})\n',
            '    assert.deepEqual(ids("upcoming"), [])\n  })\n\n  it("never counts a done todo as overdue", () => {\n    const store = seeded()\n    const now = at("2026-01-10T12:00:00.000Z")\n    store.update(1, { due: "2026-01-01" }, now)\n    store.update(2, { due: "2026-01-02" }, now)\n    assert.deepEqual(store.list({ due: "overdue" }, { now }).items.map((todo) => todo.id), [2])\n  })\n\n  it("clears the due day with due: null", () => {\n    const store = seeded()\n    store.update(2, { due: "2026-01-09" })\n    const todo = store.update(2, { due: null })\n    assert.equal("due" in todo, false)\n  })\n})\n'
          )
        ),
        step(undefined, npmTest),
        step("The cleared todo still carries `due: null`.", read("src/store.js")),
        step(
          undefined,
          edit(
            "src/store.js",
            "      if (patch.due === null) next.due = null\n",
            "      if (patch.due === null) delete next.due\n"
          )
        ),
        step(undefined, npmTest),
        step(undefined, bash("git status")),
        step("Not a git repository. Checking the dates tests once more.", read("test/dates.test.ts")),
        say(
          'Done: a done todo is never overdue (src/store.js), and `PATCH /todos/:id` with `"due": null` removes the due day. Two new store tests; `npm test` passes (26 tests). This directory is not a git repository, so there is no diff to show.'
        )
      ]
    },
    {
      prompt: "Document the new field and the filter in the README, and add a CHANGELOG entry for 0.4.0.",
      pauseMinutes: 1.5,
      replies: [
        step(undefined, read("README.md")),
        step(
          undefined,
          edit(
            "README.md",
            "| `done` | boolean | default `false` |\n",
            "| `due` | `YYYY-MM-DD` | optional calendar day; `null` in a `PATCH` clears it |\n| `done` | boolean | default `false` |\n"
          )
        ),
        step(
          undefined,
          edit(
            "README.md",
            "`q` (text in the title), `sort`",
            "`q` (text in the title), `due` (`overdue`, `today` or `upcoming`; a done todo is never overdue), `sort`"
          )
        ),
        step(undefined, read("CHANGELOG.md")),
        step(
          undefined,
          edit(
            "CHANGELOG.md",
            "# Changelog\n\n## 0.3.0\n",
            '# Changelog\n\n## 0.4.0\n\n- Todos have an optional `due` day; `GET /todos?due=overdue|today|upcoming` filters by it.\n- `PATCH` with `"due": null` clears a due day.\n\n## 0.3.0\n'
          )
        ),
        step(undefined, edit("package.json", '"version": "0.3.0"', '"version": "0.4.0"')),
        step(undefined, read("README.md")),
        step(
          undefined,
          edit(
            "README.md",
            "- `src/validate.js`: validation of new todos and changes\n",
            "- `src/validate.js`: validation of new todos and changes\n- `src/dates.js`: due days (checking them, overdue / today / upcoming)\n"
          )
        ),
        say("README (field, filter, layout) and CHANGELOG (0.4.0) are updated, and package.json is at 0.4.0.")
      ]
    },
    {
      prompt:
        "Before I merge: run the whole suite once more, try the new filter against a running server with the seed data, and list the routes with their query parameters.",
      pauseMinutes: 25,
      replies: [
        step(undefined, npmTest),
        // The model names the argument `cmd` instead of `command`: OpenCode rejects the call (a failed call with a long input).
        step("Starting the server and trying the filter.", ["bash", { cmd: smoke }]),
        step(undefined, bash(smoke)),
        step(undefined, bash("grep -n 'case \"' src/routes.js"), read("src/routes.js")),
        step(undefined, read("test/routes.test.js")),
        say(
          "All 26 tests pass. Against the running server: no seed todo has a due day, so `?due=overdue` is empty until todo 7 gets one in the past; then it is the only overdue todo, and `/stats` reflects the change.\n\n- `GET /todos`: `done`, `tag`, `priority`, `q`, `due` (overdue, today, upcoming), `sort` (id, priority, title, updated), `offset`, `limit` (at most 200)\n- `POST /todos`\n- `GET /todos/:id`, `PATCH /todos/:id`, `DELETE /todos/:id`\n- `GET /stats`"
        )
      ]
    },
    {
      prompt: "Last thing: GET /stats should also count overdue todos.",
      pauseMinutes: 12,
      replies: [
        step(undefined, read("src/store.js")),
        step(
          undefined,
          edit(
            "src/store.js",
            "    stats() {\n      let done = 0\n",
            "    stats(now = new Date()) {\n      let done = 0\n      let overdue = 0\n"
          )
        ),
        step(
          undefined,
          edit(
            "src/store.js",
            "        if (todo.done) done++\n",
            '        if (todo.done) done++\n        else if (dueState(todo.due, now) === "overdue") overdue++\n'
          )
        ),
        step(
          undefined,
          edit(
            "src/store.js",
            "      return { total: todos.size, done, open: todos.size - done, byPriority, byTag }",
            "      return { total: todos.size, done, open: todos.size - done, overdue, byPriority, byTag }"
          )
        ),
        step(undefined, npmTest),
        step(
          "The stats test compares the whole object; adding the new count.",
          edit(
            "test/store.test.js",
            "      open: 2,\n      byPriority",
            "      open: 2,\n      overdue: 0,\n      byPriority"
          )
        ),
        step(
          undefined,
          edit("src/routes.js", "      return [200, store.stats()]", "      return [200, store.stats(clock())]")
        ),
        step(undefined, npmTest),
        say(
          "`GET /stats` now includes `overdue` (open todos whose due day has passed, by the request time). `npm test` passes."
        )
      ]
    }
  ]
}

// ---- re-pacing ----------------------------------------------------------------------------------------------

/**
 * A scripted model answers in milliseconds, so the recorded session takes half a minute. Its timestamps are moved
 * to a human pace: each model step takes 2-9 s more (what a real model needs to answer), and each prompt comes after
 * the pause its turn says. Every time in a message (`time.*` of the message and of its parts) moves by the same
 * amount, so durations inside a message stay as recorded.
 */
const repace = (
  exported: { info: any; messages: Array<{ info: any; parts: Array<any> }> },
  turns: ReadonlyArray<Turn>
) => {
  const random = new Random(7)
  const shiftTimes = (value: unknown, by: number): void => {
    if (typeof value !== "object" || value === null) return
    for (const [key, inner] of Object.entries(value)) {
      if (key === "time" && typeof inner === "object" && inner !== null) {
        for (const [name, at] of Object.entries(inner)) {
          if (typeof at === "number") (inner as Record<string, number>)[name] = at + by
        }
      } else {
        shiftTimes(inner, by)
      }
    }
  }
  let previousOld: number | undefined
  let previousNew = sessionStart
  let turn = 0
  let firstShift = 0
  let lastShift = 0
  for (const message of exported.messages) {
    const old: number = message.info.time.created
    let created = sessionStart
    if (previousOld !== undefined) {
      const recorded = old - previousOld
      const human = message.info.role === "user"
        ? (turns[turn]?.pauseMinutes ?? 1) * 60_000 + random.int(5_000, 25_000)
        : random.int(2_000, 9_000)
      created = previousNew + recorded + human
    }
    if (message.info.role === "user") turn++
    const shift = created - old
    if (previousOld === undefined) firstShift = shift
    lastShift = shift
    shiftTimes(message, shift)
    previousOld = old
    previousNew = created
  }
  exported.info.time.created += firstShift
  exported.info.time.updated += lastShift
}

// ---- recording ----------------------------------------------------------------------------------------------

const main = async () => {
  const { version } = JSON.parse(await readFile(join(repo, "node_modules", "opencode-ai", "package.json"), "utf8")) as {
    version: string
  }
  // The e2e tier's copy of OpenCode's first-start install, when there is one (saves ~10 s and the registry).
  const template = join(repo, ".e2e-cache", `opencode-config-${version}`)
  const root = await mkdtemp(join(tmpdir(), "dcp-example-"))
  const model = await startModelServer("fake-small", "Due dates for todos")
  const files = { ...(await filesUnder(projectSource)), "data/todos.json": seedTodos() }
  const opencode = await startOpenCode({
    root,
    modelUrl: model.url,
    projectFiles: files,
    ...((await exists(join(template, "package-lock.json"))) ? { configTemplate: template } : {})
  })
  const turns = script(opencode.project)
  try {
    const { data: session } = await opencode.api<{ id: string }>("POST", "/session", {})
    for (const [i, turn] of turns.entries()) {
      model.script(turn.replies)
      const before = model.main().length
      const answer = await opencode.api("POST", `/session/${session.id}/message`, {
        model: { providerID: "fake", modelID: "fake-model" },
        parts: [{ type: "text", text: turn.prompt }]
      })
      if (answer.status !== 200)
        throw new Error(`turn ${i + 1} answered ${answer.status}: ${JSON.stringify(answer.data)}`)
      const used = model.main().length - before
      if (used !== turn.replies.length)
        throw new Error(`turn ${i + 1} used ${used} model requests, scripted ${turn.replies.length}`)
      process.stderr.write(`turn ${i + 1}: ${used} model requests\n`)
    }
    await opencode.stop()
    // Into a file, not a pipe: OpenCode exits before a large export has drained through a pipe.
    const raw = join(root, "export.json")
    const fd = openSync(raw, "w")
    try {
      execFileSync(opencodeBinary, ["export", session.id], {
        cwd: opencode.project,
        env: opencode.env,
        stdio: ["ignore", fd, "pipe"]
      })
    } finally {
      closeSync(fd)
    }
    const text = await readFile(raw, "utf8")
    // Absolute paths, then the relative forms OpenCode keeps in metadata ("tmp/dcp-example-.../project/...").
    const anonymised = [[opencode.project, shownDirectory], [root, "/home/dev"]]
      .flatMap(([from, to]) => [[from!, to!], [from!.slice(1), to!.slice(1)]])
      .reduce((out, [from, to]) => out.split(from!).join(to!), text)
    const exported = JSON.parse(anonymised) as { info: any; messages: Array<{ info: any; parts: Array<any> }> }
    repace(exported, turns)
    const published = `${JSON.stringify(exported, null, 2)}\n`
    if (published.includes("dcp-example-")) throw new Error("a temporary path is left in the export")
    await writeFile(output, published)

    const parts = exported.messages.flatMap((message) => message.parts)
    const tools = parts.filter((part) => part.type === "tool")
    const byTool: Record<string, number> = {}
    for (const part of tools) byTool[part.tool] = (byTool[part.tool] ?? 0) + 1
    process.stderr.write(
      `wrote ${relative(repo, output)}: ${exported.messages.length} messages, ${tools.length} tool calls ` +
        `(${tools.filter((part) => part.state.status === "error").length} errors): ${JSON.stringify(byTool)}\n`
    )
  } finally {
    await opencode.stop()
    await model.close()
    await rm(root, { recursive: true, force: true })
  }
}

await main()
