import { Effect, Schema } from "effect"
import { pricingNames } from "../pricing/profiles.ts"

/**
 * The plugin configuration: the single source of truth for keys, types, defaults and descriptions. The loader
 * walks this schema to validate files key by key, the first-run template and the published JSON Schema are
 * generated from it, so adding a key is one `setting(...)` line here.
 *
 * Descriptions double as the template's comments: keep each to one short line.
 */

/** Where editors fetch the published JSON Schema (the `schema/` folder ships in the npm package). */
export const schemaUrl = "https://unpkg.com/opencode-context-pruner/schema/dcp.schema.json"

const setting = <S extends Schema.Top>(schema: S, defaultValue: S["Encoded"], description: string) =>
  // Annotate before adding the default: annotations on the outer node do not reach the JSON Schema.
  Schema.withDecodingDefaultKey<S>(Effect.succeed(defaultValue))(
    schema.annotate({ description, default: defaultValue }) as S
  )

const section = <Fields extends Schema.Struct.Fields>(description: string, fields: Fields) =>
  // Every field of a section has its own default, so an absent section decodes from {}.
  Schema.Struct(fields).annotate({ description }).pipe(
    Schema.withDecodingDefaultKey(Effect.succeed({} as Schema.Struct<Fields>["Encoded"]))
  )

const Turns = Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))
const Count = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const Tokens = Count
const Share = Schema.Finite.check(Schema.isGreaterThan(0), Schema.isLessThanOrEqualTo(1))
const Seconds = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))
const Factor = Schema.Finite.check(Schema.isGreaterThanOrEqualTo(0))
const ToolNames = Schema.Array(Schema.String)

const protectedTools = (what: string) =>
  setting(ToolNames, [], `Tool names ${what} never prunes, on top of the always-protected ones.`)

export const PluginConfigFile = Schema.Struct({
  $schema: Schema.optionalKey(Schema.String).annotate({
    description: "JSON Schema used by editors for completion; ignored by the plugin."
  }),
  enabled: setting(Schema.Boolean, true, "Master switch: false turns the whole plugin off."),
  debug: setting(Schema.Boolean, false, "Write debug logs and context snapshots to ~/.config/opencode/logs/dcp/."),
  pruneNotification: setting(
    Schema.Literals(["off", "minimal", "detailed"]),
    "detailed",
    'Message after a prune: "off", "minimal" (one line) or "detailed" (one line per pruned call).'
  ),
  commands: section("The /dcp command.", {
    enabled: setting(Schema.Boolean, true, "Enable the /dcp command."),
    protectedTools: protectedTools("/dcp sweep")
  }),
  turnProtection: section(
    "Keep the most recent tool calls out of reach of pruning (a repeat aside: its earlier copy is in context).",
    {
      enabled: setting(
        Schema.Boolean,
        false,
        "Never prune tool calls younger than `turns` turns, nor let the model discard them."
      ),
      turns: setting(Turns, 4, "How many of the most recent turns are protected.")
    }
  ),
  protectedFilePatterns: setting(
    Schema.Array(Schema.String),
    [],
    "Glob patterns matched against a tool call's file path; matching calls are never pruned."
  ),
  tools: section("Tools the model calls to prune its own context.", {
    settings: section("Settings shared by the pruning tools.", {
      nudgeEnabled: setting(Schema.Boolean, true, "Remind the model now and then that it can prune."),
      nudgeFrequency: setting(Turns, 10, "Nudge after this many tool results without a prune."),
      nudgeMinTokens: setting(Tokens, 8000, "Nudge only when at least this many tokens are prunable."),
      protectedTools: protectedTools("the model")
    }),
    discard: section("The discard tool: drop tool output that is no longer needed.", {
      enabled: setting(Schema.Boolean, true, "Offer the discard tool to the model.")
    }),
    extract: section("The extract tool: replace tool output with a distilled finding.", {
      enabled: setting(Schema.Boolean, true, "Offer the extract tool to the model."),
      showDistillation: setting(Schema.Boolean, false, "Show the distilled text in the prune notification.")
    }),
    recall: section(
      "The recall tool: get the original content of a pruned or folded call back, or find lines in all of them.",
      {
        enabled: setting(
          Schema.Boolean,
          true,
          "Offer the recall tool to the model; placeholders then say `recall <id>`."
        )
      }
    )
  }),
  strategies: section("Automatic pruning, applied without any model call.", {
    repeats: section(
      "Send a repeated output once: an unchanged re-read, a read-back of what was just written or of a todo list, the same command with the same output.",
      {
        enabled: setting(
          Schema.Boolean,
          true,
          "Replace a repeat by a pointer to the earlier copy when it is first sent (no cache rebuild)."
        )
      }
    ),
    deduplication: section("Keep only the newest of identical tool calls (same tool, same input).", {
      enabled: setting(Schema.Boolean, true, "Prune older duplicates."),
      protectedTools: protectedTools("deduplication")
    }),
    supersedeWrites: section("Drop the content of a file write once the file has been read again.", {
      enabled: setting(Schema.Boolean, true, "Prune superseded write, edit and apply_patch inputs.")
    }),
    purgeErrors: section("Drop the inputs of failed tool calls once they are old; the error stays.", {
      enabled: setting(Schema.Boolean, true, "Purge inputs of old failed calls."),
      turns: setting(Turns, 4, "Age in turns after which a failed call's inputs are purged."),
      protectedTools: protectedTools("error purging")
    }),
    staleOutputs: section(
      "Mask old tool outputs, and the content of old file changes, once the context is large, keeping the most recent ones.",
      {
        enabled: setting(Schema.Boolean, true, "Mask stale tool outputs."),
        trigger: setting(Tokens, 10000, "Start masking once the context holds this many tokens."),
        keepRecent: setting(Count, 5, "The most recent tool outputs that are never masked."),
        keepFiles: setting(
          Count,
          3,
          "The files most recently read, written or edited: the newest copy of each (a read, a write, a patch that added it), and its reads of other parts within the last 15 calls, are never masked."
        ),
        clearAtLeast: setting(Tokens, 5000, "Mask in batches of at least this many tokens."),
        protectedTools: protectedTools("masking")
      }
    ),
    fold: section(
      "Fold old turns: once a turn's outputs are pruned, its tool calls are sent as digest lines, one per call (ID, tool, argument, outcome), each where its call stood; the user's and the model's words stay, and recall returns any output.",
      {
        enabled: setting(Schema.Boolean, true, "Fold old turns whose outputs are pruned."),
        keepTurns: setting(Turns, 2, "The most recent turns (the one in progress among them) that are never folded.")
      }
    )
  }),
  cache: section(
    "When automatic prunes reach what is sent: only when that costs less than it saves under the provider's prompt cache.",
    {
      mode: setting(
        Schema.Literals(["auto", "immediate"]),
        "auto",
        '"auto": apply prunes when they pay for the cache rebuild they cause; "immediate": apply each prune at once.'
      ),
      pricing: setting(
        Schema.Literals(["auto", ...pricingNames]),
        "auto",
        'How the provider bills input: "auto" (from the model), "anthropic", "anthropic-1h", "openai", "per-request", "none".'
      ),
      minPruneTokens: setting(
        Tokens,
        2000,
        "Never apply a batch that saves fewer tokens per request than this while the cache is warm."
      ),
      horizon: setting(
        Schema.Union([Schema.Literal("auto"), Tokens]),
        "auto",
        'Requests the cache is expected to serve: "auto" (the session\'s pace) or a number (0: never apply while it is warm).'
      ),
      patience: setting(
        Factor,
        2,
        "In a warm cache a batch waits until keeping it out has cost this many times the rebuild it causes (0: not at all)."
      ),
      pressure: setting(
        Share,
        0.9,
        "Apply pending prunes at once when the context fills this share of the model's window."
      ),
      ttlSeconds: setting(
        Seconds,
        300,
        "After this many seconds without a request the cache is cold: pending prunes apply."
      ),
      breakpoint: setting(
        Schema.Boolean,
        true,
        "Keep a cache breakpoint of the plugin's own before the outputs still to be pruned, so applying them rewrites the cache from there rather than from the system prompt (models served through the @ai-sdk/anthropic package, while OpenCode sends one system message)."
      )
    }
  ),
  compaction: section(
    "Compaction between turns (opt-in): ask OpenCode to summarise the session (as /compact does) when a turn ends with a large context, long before OpenCode would. It trades the model's history for a summary written by a model; off by default.",
    {
      enabled: setting(
        Schema.Boolean,
        false,
        "Ask OpenCode to compact a session when a turn ends with at least atTokens in context, where input is billed per token (never when OpenCode's own compaction.auto is false)."
      ),
      atTokens: setting(
        Schema.Union([Schema.Literal("auto"), Tokens]),
        "auto",
        'Compact when a turn ends with at least this many tokens in context, as the plugin sent it: "auto" (30% of the window OpenCode compacts at, at least 25,000: 50,400 of a 200k window; 50,000 when the window is unknown) or a number.'
      )
    }
  )
}).annotate({
  title: "opencode-context-pruner",
  description: "Configuration of the OpenCode dynamic context pruning plugin (dcp.jsonc)."
})

export type PluginConfig = Omit<typeof PluginConfigFile.Type, "$schema">

const { $schema: _ignored, ...defaults } = Schema.decodeUnknownSync(PluginConfigFile)({})
export const defaultConfig: PluginConfig = defaults
