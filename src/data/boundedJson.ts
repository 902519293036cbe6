/**
 * JSON text of any value, bounded: what the plugin writes about values it did not make (tool inputs in debug
 * snapshots, values in log lines and in answers to the model). `JSON.stringify` throws on a cycle or a BigInt, recurses
 * as deep as the value goes, and with indentation writes text that grows with the square of the depth (a tool input
 * nested 20,000 deep is gigabytes); this never throws, stops descending at `maxDepth`, cuts long strings, and stops
 * writing past `maxLength`. What it cannot or need not write is replaced by a short marker in brackets, so the text
 * stays readable JSON except where it was cut at `maxLength`.
 */
export interface JsonBounds {
  /** Levels of objects and arrays written; deeper ones read `"[nested deeper]"`. */
  readonly maxDepth: number
  /** Characters kept of each string; the rest is counted. */
  readonly maxString: number
  /** The text stops (with a note) once it is this long. */
  readonly maxLength: number
  /** Spaces per level, as `JSON.stringify`'s third argument. */
  readonly indent?: number
}

export const boundedJson = (value: unknown, bounds: JsonBounds): string => {
  const out: Array<string> = []
  let length = 0
  let full = false
  const indent = bounds.indent ?? 0
  const path = new Set<object>()

  const put = (text: string) => {
    if (full) return
    if (length + text.length > bounds.maxLength) {
      out.push(text.slice(0, Math.max(0, bounds.maxLength - length)), ` …[cut at ${bounds.maxLength} characters]`)
      length = bounds.maxLength
      full = true
      return
    }
    out.push(text)
    length += text.length
  }

  const quote = (text: string) =>
    text.length <= bounds.maxString
      ? JSON.stringify(text)
      : JSON.stringify(`${text.slice(0, bounds.maxString)}…[+${text.length - bounds.maxString} characters]`)

  const newline = (depth: number) => {
    if (indent > 0) put(`\n${" ".repeat(indent * depth)}`)
  }

  const write = (item: unknown, depth: number): void => {
    if (full) return
    const scalar = scalarText(item, quote)
    if (scalar !== undefined) {
      put(scalar)
      return
    }
    const object = item as object
    if (path.has(object)) {
      put(quote("[cycle]"))
      return
    }
    if (depth >= bounds.maxDepth) {
      put(quote("[nested deeper]"))
      return
    }
    const plain = toPlain(object)
    if (plain !== object && (typeof plain !== "object" || plain === null)) {
      write(plain, depth)
      return
    }
    path.add(object)
    if (Array.isArray(plain)) {
      put("[")
      for (let i = 0; i < plain.length && !full; i++) {
        if (i > 0) put(",")
        newline(depth + 1)
        write(read(plain as unknown as Record<PropertyKey, unknown>, i), depth + 1)
      }
      if (plain.length > 0) newline(depth)
      put("]")
    } else {
      put("{")
      let first = true
      for (const key of Object.keys(plain as object)) {
        if (full) break
        const inner = read(plain as Record<string, unknown>, key)
        if (inner === undefined || typeof inner === "function" || typeof inner === "symbol") continue
        if (!first) put(",")
        first = false
        newline(depth + 1)
        put(`${quote(key)}:${indent > 0 ? " " : ""}`)
        write(inner, depth + 1)
      }
      if (!first) newline(depth)
      put("}")
    }
    path.delete(object)
  }

  write(value, 0)
  return out.join("")
}

/** JSON text of a value that is not an object or an array; undefined for those. */
const scalarText = (item: unknown, quote: (text: string) => string): string | undefined => {
  switch (typeof item) {
    case "string":
      return quote(item)
    case "number":
      return Number.isFinite(item) ? String(item) : "null"
    case "boolean":
      return String(item)
    case "bigint":
      return quote(`${item}n`)
    case "undefined":
    case "function":
    case "symbol":
      return "null"
    default:
      return item === null ? "null" : undefined
  }
}

/** A property, or a marker when reading it throws (a getter, a revoked proxy). */
const read = (object: Record<PropertyKey, unknown>, key: PropertyKey): unknown => {
  try {
    return object[key]
  } catch {
    return "[unreadable]"
  }
}

/** What `JSON.stringify` would write for an object with `toJSON` (a Date); an error as its name and message. */
const toPlain = (object: object): unknown => {
  if (object instanceof Error) return `${object.name}: ${object.message}`
  const toJSON = read(object as Record<PropertyKey, unknown>, "toJSON")
  if (typeof toJSON !== "function") return object
  try {
    return toJSON.call(object)
  } catch {
    return "[unreadable]"
  }
}

/** A value as its writer wrote it, short enough for a sentence: `"12"`, `12`, `{"id":1}`, `null`, cut at 80 characters. */
export const shortJson = (value: unknown): string =>
  value === undefined ? "undefined" : boundedJson(value, { maxDepth: 3, maxString: 40, maxLength: 80 })

/** What `JSON.stringify` writes for plain data, but never throwing: a cycle, a BigInt or nesting past 64 levels become markers. */
export const safeJson = (value: unknown, indent?: number): string =>
  boundedJson(value, {
    maxDepth: 64,
    maxString: Number.POSITIVE_INFINITY,
    maxLength: Number.POSITIVE_INFINITY,
    ...(indent === undefined ? {} : { indent })
  })
