import { execFile } from "node:child_process"
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises"
import { builtinModules } from "node:module"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterAll, assert, beforeAll, describe, it } from "vitest"
import { call, done, sourceFile } from "./support/fixtures.ts"
import { type ModelServer, startModelServer } from "./support/model-server.ts"
import { opencodeBinary, prepareWorld } from "./support/opencode.ts"
import { type Registry, startRegistry } from "./support/registry.ts"
import { switched } from "./support/scenario.ts"
import { configTemplate } from "./support/template.ts"
import { sidebarOf, startTui, type Tui } from "./support/tui.ts"

const run = promisify(execFile)
const repo = new URL("../../", import.meta.url).pathname.replace(/\/$/, "")
const bun = join(repo, "node_modules", ".bin", "bun")

interface Packed {
  readonly filename: string
  readonly unpackedSize: number
  readonly files: ReadonlyArray<{ readonly path: string; readonly size: number }>
}

/** What a user has no use for must stay out: sources, tests, maps, the benchmark, the lock file. */
const shipped = [
  /^LICENSE$/,
  /^README\.md$/,
  /^package\.json$/,
  /^dist\/[\w-]+\.js$/,
  /^schema\/dcp\.schema\.json$/,
  /^examples\/session\.json$/
]

/** The modules OpenCode's terminal UI hands a TUI plugin (scripts/build.ts leaves them as imports). */
const hostModules = new Set(["solid-js", "@opentui/solid/jsx-runtime"])

/** Every import of every bundle in `dir`, by file, read by Bun's own parser. */
const importsOf = async (dir: string): Promise<Record<string, ReadonlyArray<string>>> => {
  const script = `
    const dir = process.argv[1]
    const transpiler = new Bun.Transpiler({ loader: "js" })
    const out = {}
    for (const name of require("node:fs").readdirSync(dir).filter((file) => file.endsWith(".js"))) {
      const code = require("node:fs").readFileSync(dir + "/" + name, "utf8").replace(/^#!.*/, "")
      out[name] = [...new Set(transpiler.scanImports(code).map((entry) => entry.path))]
    }
    console.log(JSON.stringify(out))`
  const { stdout } = await run(bun, ["-e", script, dir])
  return JSON.parse(stdout) as Record<string, ReadonlyArray<string>>
}

const sizeOf = async (path: string): Promise<number> => {
  const info = await stat(path)
  if (!info.isDirectory()) return info.size
  let total = 0
  for (const entry of await readdir(path)) total += await sizeOf(join(path, entry))
  return total
}

/** Installed copies of package `name` anywhere under `dir` (`.../node_modules/<name>`). */
const copiesOf = async (dir: string, name: string): Promise<Array<string>> => {
  const found: Array<string> = []
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue
    const path = join(dir, entry.name)
    if (entry.name === name && dir.endsWith("node_modules")) found.push(path)
    else found.push(...(await copiesOf(path, name)))
  }
  return found
}

/**
 * The package as a user gets it: packed, served by a registry on 127.0.0.1 (the user's `~/.npmrc` points there;
 * OpenCode's installer reads npm's own config files and `npm_config_*` variables), installed by `opencode plugin
 * <name>` and loaded by name in the real terminal UI.
 */
describe("the package as users install it", () => {
  let root = ""
  let packed: Packed
  let registry: Registry
  let model: ModelServer
  let world: { env: Record<string, string>; project: string }
  let tui: Tui | undefined
  /** Each copy of the package in OpenCode's plugin cache: what was installed beside it, and whether it is small. */
  const installed = async () => {
    const copies = await copiesOf(join(world.env.XDG_CACHE_HOME!, "opencode", "packages"), "opencode-context-pruner")
    return Promise.all(copies.map(async (copy) => ({
      beside: (await readdir(join(copy, ".."))).filter((entry) =>
        !entry.startsWith(".") && entry !== "opencode-context-pruner"
      ),
      small: (await sizeOf(copy)) < 8_000_000
    })))
  }
  const manifest = async () =>
    JSON.parse(await readFile(join(repo, "package.json"), "utf8")) as
      & { name: string; version: string }
      & Record<string, unknown>

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "dcp-e2e-package-"))
    await mkdir(join(root, "pack"))
    // dist/ was built by the run's global setup (test/support/build.ts): packing must not build again.
    const { stdout } = await run("npm", [
      "pack",
      "--ignore-scripts",
      "--json",
      "--pack-destination",
      join(root, "pack")
    ], {
      cwd: repo
    })
    packed = (JSON.parse(stdout) as ReadonlyArray<Packed>)[0]!
    registry = await startRegistry({ tarball: join(root, "pack", packed.filename), manifest: await manifest() })
    model = await startModelServer()
    world = await prepareWorld({
      root,
      modelUrl: model.url,
      configTemplate: await configTemplate(),
      projectFiles: {
        "src/a.ts": sourceFile("alpha"),
        ".opencode/dcp.jsonc": JSON.stringify(switched({ cache: { mode: "immediate" } }))
      }
    })
    await writeFile(join(world.env.HOME!, ".npmrc"), `registry=${registry.url}\n`)
  })

  afterAll(async () => {
    await tui?.stop()
    await model?.close()
    await registry?.close()
    // A child OpenCode started to install plugins can still be writing its cache for a moment after the UI stopped.
    await rm(root, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 })
  })

  it("control: the tarball holds the bundles, the config schema, the example session, README and LICENSE, and nothing else", async () => {
    const paths = packed.files.map((file) => file.path)
    assert.deepStrictEqual(paths.filter((path) => !shipped.some((pattern) => pattern.test(path))), [])
    assert.includeMembers(paths, ["LICENSE", "dist/plugin.js", "dist/tui.js", "dist/analyse.js"])
    assert.match(await readFile(join(repo, "LICENSE"), "utf8"), /^MIT License\n\nCopyright \(c\) 2026 /)
    assert.isBelow(packed.unpackedSize, 8_000_000)
  })

  it("control: no run-time dependency: every bundle imports only Node built-ins, and the TUI part also OpenCode's own UI modules", async () => {
    const pkg = await manifest()
    assert.deepStrictEqual([pkg.dependencies ?? {}, pkg.peerDependencies ?? {}, pkg.optionalDependencies ?? {}], [
      {},
      {},
      {}
    ])
    const builtins = new Set([...builtinModules, ...builtinModules.map((name) => `node:${name}`)])
    const outside = Object.entries(await importsOf(join(repo, "dist"))).flatMap(([file, imports]) =>
      imports.filter((path) =>
        !path.startsWith("./") && !builtins.has(path) && !(file === "tui.js" && hostModules.has(path))
      )
        .map((path) => `${file}: ${path}`)
    )
    assert.deepStrictEqual(outside, [])
  })

  it("control: `opencode plugin <name>` installs the package alone (7 MB, no dependency) and lists both parts", async () => {
    const result = await run(opencodeBinary, ["plugin", (await manifest()).name], {
      cwd: world.project,
      env: world.env
    })
    assert.include(result.stdout, "Detected server + tui targets")
    for (const file of ["opencode.json", "tui.json"]) {
      const config = JSON.parse(await readFile(join(world.project, ".opencode", file), "utf8")) as {
        plugin: Array<unknown>
      }
      assert.deepStrictEqual(config.plugin, ["opencode-context-pruner"], file)
    }
    // Only the package was asked for (npm's audit endpoint aside): a dependency would have been requested too.
    assert.deepStrictEqual(
      new Set(registry.requests.filter((path) => !path.startsWith("/-/"))),
      new Set(["/opencode-context-pruner", `/opencode-context-pruner/-/${packed.filename}`])
    )
    assert.deepStrictEqual(await installed(), [{ beside: [], small: true }])
  })

  it("OpenCode loads both parts by name: the server part prunes, the terminal UI shows it", async () => {
    tui = await startTui({ name: "package", env: world.env, project: world.project })
    const file = join(world.project, "src/a.ts")
    model.script([call("read", { filePath: file }, "pkg_1"), call("read", { filePath: file }, "pkg_2"), done])
    await tui.type("read a.ts twice")
    await tui.press("Enter")
    // A fresh OpenCode takes its time over a first prompt (20-30 s seen on 2 busy cores).
    const screen = await tui.waitForScreen(
      "the panel to show the prune",
      (text) => /Pruned: 1 call/.test(sidebarOf(text)) && !text.includes("esc interrupt")
    )
    assert.match(sidebarOf(screen), /^Context pruning\n[\d,]+ tokens, \d+% of 200k\nPruned: 1 call, ~\d+ tokens$/m)
    assert.includeMembers(model.main()[0]?.tools?.map((tool) => tool.function.name) ?? [], ["discard", "extract"])
    // OpenCode 1.18.33's terminal UI installs the package again, under its bare name beside `<name>@latest`: a copy
    // of the package alone, like the first.
    assert.deepStrictEqual(await installed(), [{ beside: [], small: true }, { beside: [], small: true }])
  })
})
