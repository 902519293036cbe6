// Validation of todo input. Every function returns a list of problems; an empty list means valid.

export const PRIORITIES = ["low", "normal", "high"]
export const MAX_TITLE = 200
export const MAX_TAGS = 10

function isPlainObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value)
}

function checkTitle(title, problems) {
  if (typeof title !== "string") {
    problems.push("title must be a string")
  } else if (title.trim() === "") {
    problems.push("title must not be empty")
  } else if (title.length > MAX_TITLE) {
    problems.push(`title must be at most ${MAX_TITLE} characters`)
  }
}

function checkTags(tags, problems) {
  if (!Array.isArray(tags)) {
    problems.push("tags must be an array of strings")
    return
  }
  if (tags.length > MAX_TAGS) problems.push(`at most ${MAX_TAGS} tags`)
  for (const tag of tags) {
    if (typeof tag !== "string" || !/^[a-z0-9-]{1,32}$/.test(tag)) {
      problems.push(`tag ${JSON.stringify(tag)} must be 1-32 lowercase letters, digits or dashes`)
    }
  }
}

function checkPriority(priority, problems) {
  if (!PRIORITIES.includes(priority)) {
    problems.push(`priority must be one of ${PRIORITIES.join(", ")}`)
  }
}

/** A new todo: title required; tags, priority and done optional. */
export function validateTodo(input) {
  const problems = []
  if (!isPlainObject(input)) return ["body must be a JSON object"]
  checkTitle(input.title, problems)
  if (input.tags !== undefined) checkTags(input.tags, problems)
  if (input.priority !== undefined) checkPriority(input.priority, problems)
  if (input.done !== undefined && typeof input.done !== "boolean") problems.push("done must be true or false")
  for (const key of Object.keys(input)) {
    if (!["title", "tags", "priority", "done"].includes(key)) problems.push(`unknown field ${key}`)
  }
  return problems
}

/** A change to an existing todo: every field optional, at least one present. */
export function validatePatch(input) {
  const problems = []
  if (!isPlainObject(input)) return ["body must be a JSON object"]
  const keys = Object.keys(input)
  if (keys.length === 0) return ["nothing to change"]
  if (input.title !== undefined) checkTitle(input.title, problems)
  if (input.tags !== undefined) checkTags(input.tags, problems)
  if (input.priority !== undefined) checkPriority(input.priority, problems)
  if (input.done !== undefined && typeof input.done !== "boolean") problems.push("done must be true or false")
  for (const key of keys) {
    if (!["title", "tags", "priority", "done"].includes(key)) problems.push(`unknown field ${key}`)
  }
  return problems
}
