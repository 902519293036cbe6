import type { PluginConfig } from "../config/schema.ts"

/**
 * Why a call was pruned, in the order reports list them: the automatic rules, then the model's tools, then the user's
 * command. Each with the name the user sees and the setting that turns it on. The one list of reasons: the `Reason`
 * type, the names and the order all come from here.
 */
const reasonInfo = {
  deduplication: { name: "duplicate", enabled: (config) => config.strategies.deduplication.enabled },
  supersedeWrites: { name: "superseded write", enabled: (config) => config.strategies.supersedeWrites.enabled },
  purgeErrors: { name: "failed call input", enabled: (config) => config.strategies.purgeErrors.enabled },
  staleOutputs: { name: "stale output", enabled: (config) => config.strategies.staleOutputs.enabled },
  repeat: { name: "repeat", enabled: (config) => config.strategies.repeats.enabled },
  fold: { name: "folded", enabled: (config) => config.strategies.fold.enabled },
  discard: { name: "discarded", enabled: (config) => config.tools.discard.enabled },
  extract: { name: "extracted", enabled: (config) => config.tools.extract.enabled },
  sweep: { name: "swept", enabled: (config) => config.commands.enabled }
} as const satisfies Record<string, { readonly name: string; readonly enabled: (config: PluginConfig) => boolean }>

export type Reason = keyof typeof reasonInfo

export const reasons = Object.keys(reasonInfo) as ReadonlyArray<Reason>

/** Whether a stored reason is one this version knows (a state file may come from another version). */
export const isReason = (reason: string): reason is Reason => Object.hasOwn(reasonInfo, reason)

/** The name the user sees for a reason; a reason this version does not know, as it is. */
export const reasonName = (reason: string): string => isReason(reason) ? reasonInfo[reason].name : reason

/** Whether what prunes for `reason` is turned on in `config` (the plugin's master switch aside). */
export const reasonEnabled = (config: PluginConfig, reason: Reason): boolean => reasonInfo[reason].enabled(config)
