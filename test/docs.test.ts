import { existsSync, lstatSync, readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative } from "node:path"
import { fileURLToPath } from "node:url"
import { assert, describe, it } from "@effect/vitest"
import { alwaysKept } from "../src/engine/fold.ts"
import { call, protect } from "./engine/support.ts"
import { defaultOf, settingPaths } from "./support/settings.ts"

const root = fileURLToPath(new URL("..", import.meta.url))
const read = (path: string) => readFileSync(join(root, path), "utf8")

const markdownUnder = (dir: string): ReadonlyArray<string> =>
  readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) return markdownUnder(path)
    return entry.name.endsWith(".md") ? [path] : []
  })

/** The project's documentation: what a reader follows links through. */
const documents = ["README.md", "CHANGELOG.md", "BENCHMARKS.md", "examples/README.md", ...markdownUnder("docs")]

/** Text outside code, where a `[...]` is text and not a link. */
const prose = (text: string): string => text.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "")

/** Inline links `[text](target)` and reference definitions `[name]: target`, web addresses left out. */
const relativeLinks = (text: string): ReadonlyArray<string> =>
  [
    ...[...prose(text).matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1]!),
    ...[...prose(text).matchAll(/^\[[^\]]+\]:\s+(\S+)/gm)].map((match) => match[1]!)
  ].filter((target) => !/^[a-z]+:/i.test(target))

/** The anchors GitHub makes of a file's headings: lower case, punctuation dropped, spaces as hyphens. */
const anchorsOf = (text: string): ReadonlySet<string> => {
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  for (const [, heading] of text.replace(/^```[\s\S]*?^```/gm, "").matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading!.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-")
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    anchors.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return anchors
}

/** The disk space a directory's files take, as `du` counts it: blocks allocated, each file once. */
const diskUse = (dir: string, seen = new Set<number>()): number =>
  readdirSync(dir, { withFileTypes: true }).reduce((total, entry) => {
    const path = join(dir, entry.name)
    const stat = lstatSync(path)
    if (seen.has(stat.ino)) return total
    seen.add(stat.ino)
    return total + stat.blocks * 512 + (entry.isDirectory() ? diskUse(path, seen) : 0)
  }, 0)

describe("documentation", () => {
  it("every relative link in README, CHANGELOG, BENCHMARKS and docs/ names a file that exists, and a heading in it", () => {
    const broken = documents.flatMap((document) =>
      relativeLinks(read(document)).flatMap((link) => {
        const [path = "", anchor] = link.split("#")
        const target = path === "" ? join(root, document) : join(root, dirname(document), path)
        if (!existsSync(target)) return [`${document}: ${link} (no ${relative(root, target)})`]
        if (anchor === undefined || statSync(target).isDirectory()) return []
        return anchorsOf(readFileSync(target, "utf8")).has(anchor) ? [] : [`${document}: ${link} (no such heading)`]
      })
    )
    assert.isAbove(documents.length, 10)
    assert.deepStrictEqual(broken, [])
  })

  it("every path of the project that README and docs/ name (src/, test/, bench/, scripts/, ...) exists", () => {
    // A path of the project starts a word: `/app/src/session.ts` in an example, or a URL's `.../src/...`, is another's.
    const named = /(?<![\w/.-])(?:src|test|bench|scripts|examples|schema)\/[\w./-]*[\w/]/g
    // What a request or a tool answer shows (a ```text block, a `[placeholder]`) is of an example session's project.
    const examples = /```text\n[\s\S]*?```|`\[[^`]*\]`/g
    const missing = documents.filter((document) => document !== "CHANGELOG.md").flatMap((document) =>
      [...new Set(read(document).replace(examples, "").match(named) ?? [])].filter((path) =>
        !existsSync(join(root, path))
      ).map((path) => `${document}: ${path}`)
    )
    assert.deepStrictEqual(missing, [])
  })

  it("docs/pruning.md names the tools whose calls a fold leaves in place, as the code keeps them", () => {
    const pruning = read("docs/pruning.md")
    const sentence = /Calls of these\s+tools stay in place: ([^.]*)\./.exec(pruning)?.[1] ?? ""
    const stated = new Set([...sentence.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]!))
    // OpenCode 1.18's tools, the plugin's own, and every other the documentation names.
    const tools = new Set([
      ...["task", "todowrite", "todoread", "batch", "plan_enter", "plan_exit", "question", "skill", "read", "write"],
      ...["edit", "multiedit", "apply_patch", "patch", "bash", "grep", "glob", "list", "lsp", "webfetch", "websearch"],
      ...["codesearch", "discard", "extract", "recall"],
      ...[...pruning.matchAll(/`([a-z_]+)`/g)].map((match) => match[1]!)
    ])
    const kept = [...tools].filter((tool) =>
      alwaysKept(call({ tool, input: { filePath: "src/a.ts" } }), { protection: protect(), protectedTools: [] })
    )
    assert.isAbove(stated.size, 5)
    assert.deepStrictEqual(kept.sort(), [...stated].sort())
  })

  it("docs/configuration.md documents every config key with its actual default", () => {
    const configuration = read("docs/configuration.md")
    const missing = settingPaths().filter((path) =>
      !configuration.includes(`| \`${path}\` | \`${JSON.stringify(defaultOf(path))}\` |`)
    )
    assert.deepStrictEqual(missing, [])
  })

  it("docs/development.md says, where the set-up commands are, what npm ci prints on Node 20 and how much disk it takes", () => {
    const development = read("docs/development.md")
    const setUp = development.slice(development.indexOf("## Set up"), development.indexOf("## Commands"))
    assert.include(setUp, "npm ci")
    assert.include(setUp, "EBADENGINE")
    const stated = Number(/node_modules` takes about ([\d,]+) MB/.exec(setUp)?.[1]?.replace(",", ""))
    const measured = diskUse(join(root, "node_modules")) / 1e6
    assert.approximately(stated, measured, measured * 0.1, `node_modules takes ${measured.toFixed(0)} MB here`)
  })
})
