/**
 * The fresh copy of the history OpenCode hands the transform on every request (the analyser's replay and the
 * benchmark's both make one per request). OpenCode rebuilds it from storage;
 * here every request gets new message, info, parts-array, part, state and input objects (everything the plugin
 * can reach to change what is sent), while strings and deeper objects (time, tokens, metadata, model, path,
 * nested input values) are shared. `freezeShared` makes the shared parts read-only, so a plugin that mutated them in
 * place would fail loudly (and be reported) instead of corrupting the stored history. A request then costs about
 * nine new objects per message, not a copy of tens of megabytes of text.
 */

import type { Msg } from "../host/schema.ts"

const deepFreeze = (value: unknown): void => {
  if (typeof value === "object" && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const key in value) deepFreeze((value as Record<string, unknown>)[key])
  }
}

const freezeValues = (object: Record<string, unknown>, except?: string) => {
  for (const key in object) if (key !== except) deepFreeze(object[key])
}

/**
 * Makes what the copies share read-only, once, before the replay. The levels that are copied stay as they are:
 * V8 copies a frozen object with spread several times slower.
 */
export const freezeShared = (messages: ReadonlyArray<Msg>): void => {
  for (const message of messages) {
    freezeValues(message.info)
    for (const part of message.parts) {
      freezeValues(part, "state")
      if (typeof part.state !== "object" || part.state === null) continue
      freezeValues(part.state, "input")
      if (typeof part.state.input === "object" && part.state.input !== null) freezeValues(part.state.input)
    }
  }
}

// One function per level keeps each spread site to a few object shapes (fast in V8).
const copyInput = (input: any) => (typeof input === "object" && input !== null ? { ...input } : input)
const copyState = (state: any) => ({ ...state, input: copyInput(state.input) })
const copyPart = (part: any) =>
  part.type === "tool" && typeof part.state === "object" && part.state !== null
    ? { ...part, state: copyState(part.state) }
    : { ...part }

/** `messages.slice(0, upTo)` as a fresh copy. */
export const freshCopy = (messages: ReadonlyArray<Msg>, upTo: number): Array<Msg> => {
  const out = new Array<Msg>(upTo)
  for (let m = 0; m < upTo; m++) {
    const message = messages[m]!
    const parts = new Array(message.parts.length)
    for (let p = 0; p < parts.length; p++) parts[p] = copyPart(message.parts[p])
    out[m] = { info: { ...message.info }, parts }
  }
  return out
}
