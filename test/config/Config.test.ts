import { execFileSync } from "node:child_process"
import { NodeFileSystem, NodePath } from "@effect/platform-node"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, FileSystem, Layer, Path } from "effect"
import type { PluginConfig } from "../../src/config/schema.ts"
import { renderTemplate } from "../../src/config/template.ts"
import { Config, formatReport } from "../../src/services/Config.ts"
import { pathsUnder } from "../support/paths.ts"

/**
 * The defaults as the documentation states them (README, docs/pruning.md, docs/prompt-cache.md, SPEC section 8),
 * written out rather than imported from the schema: a default changed in the code by mistake fails here.
 */
const defaultConfig: PluginConfig = {
  enabled: true,
  debug: false,
  pruneNotification: "detailed",
  commands: { enabled: true, protectedTools: [] },
  turnProtection: { enabled: false, turns: 4 },
  protectedFilePatterns: [],
  tools: {
    settings: { nudgeEnabled: true, nudgeFrequency: 10, nudgeMinTokens: 8000, protectedTools: [] },
    discard: { enabled: true },
    extract: { enabled: true, showDistillation: false },
    recall: { enabled: true }
  },
  strategies: {
    repeats: { enabled: true },
    deduplication: { enabled: true, protectedTools: [] },
    supersedeWrites: { enabled: true },
    purgeErrors: { enabled: true, turns: 4, protectedTools: [] },
    staleOutputs: {
      enabled: true,
      trigger: 10_000,
      keepRecent: 5,
      keepFiles: 3,
      clearAtLeast: 5000,
      protectedTools: []
    },
    fold: { enabled: true, keepTurns: 2 }
  },
  cache: {
    mode: "auto",
    pricing: "auto",
    minPruneTokens: 2000,
    horizon: "auto",
    patience: 2,
    pressure: 0.9,
    ttlSeconds: 300,
    breakpoint: true
  },
  compaction: { enabled: false, atTokens: "auto" }
}

type Where = "global" | "env" | "project"

/** What to make at a config file's place other than a file with content. */
type Special = { readonly symlink: string } | { readonly fifo: true } | { readonly bytes: number }

/**
 * Builds the Config layer over a fresh temp tree. `files` maps `global/dcp.jsonc`, `env/dcp.json`,
 * `project/dcp.jsonc`... to contents; a value of `null` makes a directory of that name, `{ symlink }` a symbolic
 * link to that target (relative to the link), `{ fifo: true }` a named pipe, `{ bytes }` a valid file of that size.
 */
const build = (
  files: Partial<Record<`${Where}/${string}`, string | null | Special>>,
  options: { env?: boolean } = {}
) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    const root = yield* fs.makeTempDirectoryScoped()
    const dirs: Record<Where, string> = {
      global: path.join(root, "config", "opencode"),
      env: path.join(root, "env"),
      project: path.join(root, "project", ".opencode")
    }
    const at = (key: string) => {
      const [where, name] = key.split("/") as [Where, string]
      return path.join(dirs[where], name)
    }
    for (const [key, content] of Object.entries(files)) {
      const file = at(key)
      yield* fs.makeDirectory(path.dirname(file), { recursive: true })
      if (content === undefined) continue
      if (content === null) yield* fs.makeDirectory(file)
      else if (typeof content === "string") yield* fs.writeFileString(file, content)
      else if ("symlink" in content) yield* fs.symlink(content.symlink, file)
      else if ("fifo" in content) execFileSync("mkfifo", [file])
      else yield* fs.writeFileString(file, `{ "debug": true, "padding": "${"x".repeat(content.bytes - 32)}" }`)
    }
    const paths = pathsUnder(root, options.env ? { envConfigDir: dirs.env } : {})
    const config = yield* Effect.provide(Config, Config.layer.pipe(Layer.provide(paths)))
    return {
      config,
      at,
      read: (key: string) => fs.readFileString(at(key)),
      write: (key: string, content: string) =>
        fs.makeDirectory(path.dirname(at(key)), { recursive: true }).pipe(
          Effect.andThen(fs.writeFileString(at(key), content))
        ),
      remove: (key: string) => fs.remove(at(key))
    }
  })

layer(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer))("Config.layer", (it) => {
  describe("merge order", () => {
    it.effect("later files win: defaults < global < $OPENCODE_CONFIG_DIR < project", () =>
      Effect.gen(function*() {
        const { config, at } = yield* build({
          "global/dcp.jsonc": `{ "debug": true, "pruneNotification": "minimal", "turnProtection": { "turns": 5 } }`,
          "env/dcp.jsonc": `{ "pruneNotification": "off", "turnProtection": { "turns": 6 } }`,
          "project/dcp.jsonc": `{ "turnProtection": { "turns": 7 } }`
        }, { env: true })
        assert.deepStrictEqual(config.current, {
          ...defaultConfig,
          debug: true,
          pruneNotification: "off",
          turnProtection: { enabled: false, turns: 7 }
        })
        assert.deepStrictEqual(config.files, [at("global/dcp.jsonc"), at("env/dcp.jsonc"), at("project/dcp.jsonc")])
        assert.deepStrictEqual(yield* config.takeReports, [])
      }))

    it.effect("a project file setting one nested key changes nothing else, not even siblings set globally", () =>
      Effect.gen(function*() {
        const { config } = yield* build({
          "global/dcp.jsonc": JSON.stringify({
            strategies: {
              purgeErrors: { enabled: false, turns: 6, protectedTools: ["bash"] },
              deduplication: { enabled: false }
            }
          }),
          "project/dcp.jsonc": `{ "strategies": { "purgeErrors": { "turns": 9 } } }`
        })
        assert.deepStrictEqual(config.current, {
          ...defaultConfig,
          strategies: {
            ...defaultConfig.strategies,
            deduplication: { enabled: false, protectedTools: [] },
            purgeErrors: { enabled: false, turns: 9, protectedTools: ["bash"] }
          }
        })
      }))

    it.effect("a later list replaces an earlier one", () =>
      Effect.gen(function*() {
        const { config } = yield* build({
          "global/dcp.jsonc": `{ "protectedFilePatterns": ["**/*.env", "secrets/**"] }`,
          "project/dcp.jsonc": `{ "protectedFilePatterns": ["docs/**"] }`
        })
        assert.deepStrictEqual(config.current.protectedFilePatterns, ["docs/**"])
      }))

    it.effect("$OPENCODE_CONFIG_DIR is not read when it is not set", () =>
      Effect.gen(function*() {
        const { config } = yield* build({ "global/dcp.jsonc": "{}", "env/dcp.jsonc": `{ "debug": true }` })
        assert.strictEqual(config.current.debug, false)
      }))
  })

  describe("file names", () => {
    it.effect("dcp.json is used when dcp.jsonc is absent", () =>
      Effect.gen(function*() {
        const { config, at } = yield* build({ "global/dcp.jsonc": "{}", "project/dcp.json": `{ "debug": true }` })
        assert.strictEqual(config.current.debug, true)
        assert.deepStrictEqual(config.files, [at("global/dcp.jsonc"), at("project/dcp.json")])
      }))

    it.effect("dcp.jsonc is preferred when both exist", () =>
      Effect.gen(function*() {
        const { config, at } = yield* build({
          "global/dcp.jsonc": `{ "pruneNotification": "minimal" }`,
          "global/dcp.json": `{ "pruneNotification": "off", "debug": true }`
        })
        assert.strictEqual(config.current.pruneNotification, "minimal")
        assert.strictEqual(config.current.debug, false)
        assert.deepStrictEqual(config.files, [at("global/dcp.jsonc")])
      }))
  })

  describe("first run", () => {
    it.effect("writes the commented default global config, which decodes to the defaults", () =>
      Effect.gen(function*() {
        const { config, at, read } = yield* build({})
        assert.strictEqual(yield* read("global/dcp.jsonc"), renderTemplate())
        assert.deepStrictEqual(config.current, defaultConfig)
        assert.deepStrictEqual(config.files, [at("global/dcp.jsonc")])
        assert.deepStrictEqual(yield* config.takeReports, [])
      }))

    it.effect("never overwrites an existing global dcp.jsonc, even an invalid one", () =>
      Effect.gen(function*() {
        const { read } = yield* build({ "global/dcp.jsonc": "{ broken" })
        assert.strictEqual(yield* read("global/dcp.jsonc"), "{ broken")
      }))

    it.effect("writes no dcp.jsonc beside an existing global dcp.json", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const { config, at } = yield* build({ "global/dcp.json": `{ "debug": true }` })
        assert.isFalse(yield* fs.exists(at("global/dcp.jsonc")))
        assert.strictEqual(config.current.debug, true)
      }))
  })

  describe("problems", () => {
    it.effect("takeReports returns each file's report once, then nothing", () =>
      Effect.gen(function*() {
        const { config, at } = yield* build({
          "global/dcp.jsonc": `{ "debug": "yes" }`,
          "project/dcp.jsonc": `{ "enabled": true, }{`
        })
        const first = yield* config.takeReports
        assert.deepStrictEqual(first.map((r) => [r.file, r.ignored, r.problems.map((p) => p.path)]), [
          [at("global/dcp.jsonc"), false, ["debug"]],
          [at("project/dcp.jsonc"), true, [""]]
        ])
        assert.deepStrictEqual(yield* config.takeReports, [])
        assert.deepStrictEqual(config.files, [at("global/dcp.jsonc")])
      }))

    it.effect("a bad value in the global file is fixed by the project file, and still reported", () =>
      Effect.gen(function*() {
        const { config, at } = yield* build({
          "global/dcp.jsonc": `{ "strategies": { "purgeErrors": { "turns": 0 } } }`,
          "project/dcp.jsonc": `{ "strategies": { "purgeErrors": { "turns": 3 } } }`
        })
        assert.strictEqual(config.current.strategies.purgeErrors.turns, 3)
        const [report] = yield* config.takeReports
        assert.strictEqual(report?.file, at("global/dcp.jsonc"))
        assert.deepStrictEqual(report?.problems.map((p) => [p.path, p.expected, p.found]), [
          ["strategies.purgeErrors.turns", "an integer >= 1", "0"]
        ])
      }))

    it.effect("a bad value in the project file keeps the global file's value for that key", () =>
      Effect.gen(function*() {
        const { config } = yield* build({
          "global/dcp.jsonc": `{ "pruneNotification": "minimal" }`,
          "project/dcp.jsonc": `{ "pruneNotification": "loud", "debug": true }`
        })
        assert.strictEqual(config.current.pruneNotification, "minimal")
        assert.strictEqual(config.current.debug, true)
      }))

    it.effect("an unreadable file (a directory named dcp.jsonc) yields defaults and a problem, not a failure", () =>
      Effect.gen(function*() {
        const { config, at } = yield* build({
          "global/dcp.jsonc": "{}",
          "project/dcp.jsonc": null,
          "project/dcp.json": `{ "debug": true }`
        })
        assert.deepStrictEqual(config.current, defaultConfig)
        assert.deepStrictEqual(config.files, [at("global/dcp.jsonc")])
        assert.deepStrictEqual(yield* config.takeReports, [{
          file: at("project/dcp.jsonc"),
          ignored: true,
          problems: [{
            path: "",
            expected: "a readable file",
            found: "a directory",
            message: "Could not read the file: a directory."
          }]
        }])
      }))

    for (const where of ["global", "env", "project"] as const) {
      it.effect(`__proto__ in the ${where} file is reported with the file and key, and changes nothing`, () =>
        Effect.gen(function*() {
          const prototype = Object.getOwnPropertyNames(Object.prototype)
          const file = `${where}/dcp.jsonc` as const
          const { config, at } = yield* build({
            "global/dcp.jsonc": "{}",
            [file]:
              `{ "__proto__": { "debug": true }, "cache": { "__proto__": { "mode": "immediate" } }, "pruneNotification": "off" }`
          }, { env: true })
          assert.deepStrictEqual(config.current, { ...defaultConfig, pruneNotification: "off" })
          assert.deepStrictEqual((yield* config.takeReports).map((r) => [r.file, r.problems.map((p) => p.message)]), [
            [at(file), [
              "__proto__: unknown key",
              "cache.__proto__: unknown key"
            ]]
          ])
          assert.deepStrictEqual(Object.getOwnPropertyNames(Object.prototype), prototype)
          assert.isUndefined(({} as Record<string, unknown>).mode)
        }))
    }

    it.effect("a file nested 100,000 levels deep is reported with its name and the key, and the rest applies", () =>
      Effect.gen(function*() {
        const deep = `${`{"a":`.repeat(100_000)}1${"}".repeat(100_000)}`
        const { config, at } = yield* build({
          "global/dcp.jsonc": `{ "pruneNotification": "minimal" }`,
          "project/dcp.jsonc": `{ "tools": { "x": ${deep} }, "debug": true }`
        })
        assert.deepStrictEqual(config.current, { ...defaultConfig, pruneNotification: "minimal", debug: true })
        assert.deepStrictEqual(
          (yield* config.takeReports).map((r) => [r.file, r.ignored, r.problems.map((p) => p.path)]),
          [
            [at("project/dcp.jsonc"), false, ["tools.x"]]
          ]
        )
      }))

    it.effect("an unreadable global dcp.jsonc is reported and no default config is written over it", () =>
      Effect.gen(function*() {
        const fs = yield* FileSystem.FileSystem
        const { config, at } = yield* build({ "global/dcp.jsonc": null })
        assert.strictEqual((yield* fs.stat(at("global/dcp.jsonc"))).type, "Directory")
        assert.deepStrictEqual(config.current, defaultConfig)
        assert.deepStrictEqual((yield* config.takeReports).map((r) => r.file), [at("global/dcp.jsonc")])
      }))
  })
})

/**
 * Files that are not config files at a config file's place: each is reported with its name, the other files apply,
 * and nothing blocks or grows. Each test's time limit is a guard against hanging, not a measure of speed.
 */
layer(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer))("Config.layer: what is not a config file", (it) => {
  const reported = (
    files: Parameters<typeof build>[0],
    found: string
  ) =>
    Effect.gen(function*() {
      const { config, at } = yield* build({ "global/dcp.jsonc": `{ "pruneNotification": "minimal" }`, ...files })
      assert.deepStrictEqual(config.current, { ...defaultConfig, pruneNotification: "minimal" })
      assert.deepStrictEqual(config.files, [at("global/dcp.jsonc")])
      const reports = yield* config.takeReports
      assert.deepStrictEqual(reports.map((r) => [r.file, r.ignored, r.problems.map((p) => p.found)]), [
        [at("project/dcp.jsonc"), true, [found]]
      ])
      return formatReport(reports[0]!).message
    })

  it.effect("a named pipe is reported without being opened", () =>
    Effect.gen(function*() {
      const message = yield* reported({ "project/dcp.jsonc": { fifo: true } }, "a named pipe (FIFO)")
      assert.include(message, "Could not read the file: a named pipe (FIFO).")
    }))

  it.effect(
    "a symlink to /dev/zero is reported as a device, and nothing is read from it",
    () =>
      Effect.gen(function*() {
        yield* reported({ "project/dcp.jsonc": { symlink: "/dev/zero" } }, "a device")
      })
  )

  it.effect("a symlink loop is reported as a loop", () =>
    Effect.gen(function*() {
      yield* reported(
        { "project/dcp.jsonc": { symlink: "dcp.jsonc" } },
        "a symbolic link that leads back to itself (a loop)"
      )
    }))

  it.effect(
    "a file over 1 MB is reported with its size, and the next candidate name is not read instead",
    () =>
      Effect.gen(function*() {
        yield* reported(
          { "project/dcp.jsonc": { bytes: 1024 * 1024 + 1 }, "project/dcp.json": `{ "debug": true }` },
          "a file of 1,048,577 bytes, over the 1 MB a config file may have"
        )
      })
  )

  it.effect("a file of exactly 1 MB is read", () =>
    Effect.gen(function*() {
      const { config } = yield* build({ "project/dcp.jsonc": { bytes: 1024 * 1024 } })
      assert.isTrue(config.current.debug)
    }))

  it.effect("a symlink to a regular file is read", () =>
    Effect.gen(function*() {
      const { config } = yield* build({
        "project/real.jsonc": `{ "debug": true }`,
        "project/dcp.jsonc": { symlink: "real.jsonc" }
      })
      assert.isTrue(config.current.debug)
    }))
})

layer(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer))(
  "Config.refresh: a file edited while OpenCode runs",
  (it) => {
    it.effect("applies from the next refresh, and the reload is reported once", () =>
      Effect.gen(function*() {
        const { config, at, write } = yield* build({ "global/dcp.jsonc": `{ "pruneNotification": "minimal" }` })
        yield* config.takeReports
        yield* write("global/dcp.jsonc", `{ "pruneNotification": "off", "cache": { "ttlSeconds": 3600 } }`)
        assert.strictEqual(config.current.pruneNotification, "minimal", "nothing changes before a refresh")

        yield* config.refresh

        assert.strictEqual(config.current.pruneNotification, "off")
        assert.strictEqual(config.current.cache.ttlSeconds, 3600)
        assert.deepStrictEqual(yield* config.takeReports, [{
          file: at("global/dcp.jsonc"),
          problems: [],
          ignored: false,
          reload: { change: "read", restartKeys: [] }
        }])
        yield* config.refresh
        assert.deepStrictEqual(yield* config.takeReports, [])
      }))

    it.effect("with no file changed, a refresh keeps the very same config object and reports nothing", () =>
      Effect.gen(function*() {
        const { config } = yield* build({ "global/dcp.jsonc": `{ "debug": false }` })
        yield* config.takeReports
        const before = config.current
        yield* config.refresh
        assert.strictEqual(config.current, before)
        assert.deepStrictEqual(yield* config.takeReports, [])
      }))

    it.effect("a file created after the start applies; one removed stops applying", () =>
      Effect.gen(function*() {
        const { config, at, write, remove } = yield* build({ "global/dcp.jsonc": "{}" })
        yield* write("project/dcp.jsonc", `{ "strategies": { "purgeErrors": { "turns": 9 } } }`)
        yield* config.refresh
        assert.strictEqual(config.current.strategies.purgeErrors.turns, 9)
        assert.deepStrictEqual(config.files, [at("global/dcp.jsonc"), at("project/dcp.jsonc")])

        yield* remove("project/dcp.jsonc")
        yield* config.refresh
        assert.strictEqual(config.current.strategies.purgeErrors.turns, 4)
        const reports = yield* config.takeReports
        assert.deepStrictEqual(reports.map((report) => report.reload?.change), ["read", "removed"])
      }))

    it.effect("settings OpenCode takes at load keep their value until a restart, and the report names them", () =>
      Effect.gen(function*() {
        const { config, write } = yield* build({ "global/dcp.jsonc": "{}" })
        yield* write(
          "global/dcp.jsonc",
          `{ "tools": { "recall": { "enabled": false } }, "debug": true, "cache": { "mode": "immediate" } }`
        )
        yield* config.refresh
        assert.strictEqual(config.current.cache.mode, "immediate")
        assert.strictEqual(config.current.tools.recall.enabled, true)
        assert.strictEqual(config.current.debug, false)
        const [report] = yield* config.takeReports
        assert.deepStrictEqual(report?.reload?.restartKeys, ["debug", "tools.recall.enabled"])
        assert.include(
          formatReport(report!).message,
          "Restart OpenCode for debug and tools.recall.enabled to change: OpenCode takes them from the plugin at start."
        )
      }))

    it.effect("a file saved with a syntax error keeps its previous settings, and says so", () =>
      Effect.gen(function*() {
        const { config, write } = yield* build({ "global/dcp.jsonc": `{ "pruneNotification": "minimal" }` })
        yield* write("global/dcp.jsonc", `{ "pruneNotification": "off", `)
        yield* config.refresh
        assert.strictEqual(config.current.pruneNotification, "minimal")
        const [report] = yield* config.takeReports
        assert.strictEqual(report?.reload?.change, "kept")
        const toast = formatReport(report!)
        assert.strictEqual(toast.title, "DCP: config change not applied")
        assert.match(toast.message, /^• Syntax error at line 1/m)
        assert.include(toast.message, "Its previous settings stay in effect until it is fixed.")
      }))

    it.effect("a bad value in the edited file is reported, and the rest of the edit applies", () =>
      Effect.gen(function*() {
        const { config, write } = yield* build({ "global/dcp.jsonc": "{}" })
        yield* write("global/dcp.jsonc", `{ "compaction": { "atTokens": 5000.5 }, "pruneNotification": "off" }`)
        yield* config.refresh
        assert.strictEqual(config.current.pruneNotification, "off")
        assert.strictEqual(config.current.compaction.atTokens, "auto")
        const toast = formatReport((yield* config.takeReports)[0]!)
        assert.strictEqual(toast.title, "DCP: config reloaded, 1 config problem")
        assert.include(toast.message, `• compaction.atTokens: expected "auto" or an integer >= 0, found 5000.5`)
      }))
  }
)

describe("Config.layer never fails", () => {
  it.effect("a file system that dies yields defaults and a report", () =>
    Effect.gen(function*() {
      const broken = FileSystem.layerNoop({
        exists: () => Effect.die(new Error("disk on fire")),
        stat: () => Effect.die(new Error("disk on fire")),
        readFileString: () => Effect.die(new Error("disk on fire"))
      })
      const config = yield* Effect.provide(
        Config,
        Config.layer.pipe(
          Layer.provide(pathsUnder("/nonexistent")),
          Layer.provide(Layer.mergeAll(broken, NodePath.layer))
        )
      )
      assert.deepStrictEqual(config.current, defaultConfig)
      const reports = yield* config.takeReports
      assert.deepStrictEqual(reports.map((r) => [r.file, r.ignored]), [["(config)", true]])
      assert.include(reports[0]!.problems[0]!.message, "disk on fire")
    }))
})

describe("formatReport", () => {
  it("names the file, each key with what was expected and found, and what applies instead", () => {
    const config = formatReport({
      file: "/home/me/.config/opencode/dcp.jsonc",
      ignored: false,
      problems: [
        {
          path: "a",
          expected: "",
          found: "",
          message: "strategies.purgeErrors.turns: expected an integer >= 1, found 0"
        },
        {
          path: "b",
          expected: "",
          found: "",
          message: `pruneNotification: expected "off", "minimal" or "detailed", found the string "loud"`
        }
      ]
    })
    assert.deepStrictEqual(config, {
      title: "DCP: 2 config problems",
      message: [
        "/home/me/.config/opencode/dcp.jsonc",
        "• strategies.purgeErrors.turns: expected an integer >= 1, found 0",
        `• pruneNotification: expected "off", "minimal" or "detailed", found the string "loud"`,
        "Those keys use their default (or an earlier file's value); the rest of the file applies."
      ].join("\n")
    })
  })

  it("says when the whole file was ignored", () => {
    const toast = formatReport({
      file: "/p/.opencode/dcp.jsonc",
      ignored: true,
      problems: [{
        path: "",
        expected: "valid JSONC",
        found: "",
        message: "Syntax error at line 3, column 5: comma expected."
      }]
    })
    assert.strictEqual(toast.title, "DCP: config file ignored")
    assert.strictEqual(
      toast.message,
      "/p/.opencode/dcp.jsonc\n• Syntax error at line 3, column 5: comma expected.\nThe whole file was ignored; defaults and the other config files apply."
    )
  })

  it("caps a long report at eight lines and counts the rest", () => {
    const problems = Array.from(
      { length: 12 },
      (_, i) => ({ path: `k${i}`, expected: "", found: "", message: `k${i}: unknown key` })
    )
    const lines = formatReport({ file: "f", ignored: false, problems }).message.split("\n")
    assert.isAtMost(lines.length, 8)
    assert.deepStrictEqual(lines.slice(1, 6), [
      "• k0: unknown key",
      "• k1: unknown key",
      "• k2: unknown key",
      "• k3: unknown key",
      "+8 more"
    ])
  })
})
