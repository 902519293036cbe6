import { Result } from "effect"
import { shortJson } from "../data/boundedJson.ts"
import type { ToolCall } from "./calls.ts"
import { whyNotPrunable } from "./listing.ts"
import type { Protection } from "./protection.ts"

const reasons = ["completion", "noise"] as const
export type DiscardReason = (typeof reasons)[number]

export interface Selection {
  readonly calls: ReadonlyArray<{ readonly id: number; readonly call: ToolCall }>
}

export interface ValidationContext {
  /** The calls the model could see in its latest request, by stable ID. */
  readonly byId: ReadonlyMap<number, ToolCall>
  readonly pruned: ReadonlyMap<string, unknown>
  readonly protection: Protection
  readonly protectedTools: ReadonlyArray<string>
  readonly turnProtection: number
}

const example = '["noise", "12", "15"]'

/**
 * `discard({ ids })`: the reason first, then numeric IDs. All or nothing: every problem is reported at once and
 * nothing is pruned unless every ID is valid.
 */
export const validateDiscard = (
  ids: ReadonlyArray<unknown>,
  context: ValidationContext
): Result.Result<Selection & { readonly reason: DiscardReason }, string> => {
  if (ids.length === 0) {
    return Result.fail(
      `ids is empty. Pass the reason first, then the numbers of the outputs' [id N] tags, e.g. ${example}.`
    )
  }
  const written = ids[0]
  const first = typeof written === "string" ? written.trim().toLowerCase() : undefined
  if (first === undefined || !reasons.includes(first as DiscardReason)) {
    const id = idOf(written)
    return Result.fail(
      id !== undefined
        ? `The reason is missing: the first entry of ids must be "completion" or "noise", then the ids, e.g. ["completion", "${id}"].`
        : `Unknown reason ${
          shortJson(written)
        }. Use "completion" (the task these outputs served is done) or "noise" (they were irrelevant), then the ids, e.g. ${example}.`
    )
  }
  if (ids.length === 1) {
    return Result.fail(
      `No ids after the reason ${JSON.stringify(first)}: list the numeric ids to discard, e.g. ${example}.`
    )
  }
  return Result.map(
    selectCalls(ids.slice(1), context),
    (selection) => ({ ...selection, reason: first as DiscardReason })
  )
}

/** `extract({ ids, distillation })`: numeric IDs and exactly one distilled finding per ID. */
export const validateExtract = (
  ids: ReadonlyArray<unknown>,
  distillation: ReadonlyArray<unknown>,
  context: ValidationContext
): Result.Result<Selection & { readonly findings: ReadonlyArray<string> }, string> => {
  if (ids.length === 0) {
    return Result.fail(
      'ids is empty. Pass the numbers of the outputs\' [id N] tags, e.g. ["12", "15"], with one distillation entry per id.'
    )
  }
  const findings = distillation.map((entry) => (typeof entry === "string" ? entry.trim() : ""))
  const notText = distillation.flatMap((entry, i) =>
    typeof entry === "string" ? [] : [`${i + 1} (${shortJson(entry)})`]
  )
  if (notText.length > 0) {
    return Result.fail(
      capAnswer(`Nothing was pruned.\nEvery distillation entry must be text; entry ${notText.join(", entry ")} is not.`)
    )
  }
  if (findings.length !== ids.length) {
    return Result.fail(
      `Got ${ids.length} id${ids.length === 1 ? "" : "s"} but ${findings.length} distillation entr${
        findings.length === 1 ? "y" : "ies"
      }: give exactly one finding per id, in the same order.`
    )
  }
  const blank = findings.flatMap((finding, i) => (finding === "" ? [idOf(ids[i]) ?? shortJson(ids[i])] : []))
  if (blank.length > 0) {
    return Result.fail(
      `The distillation for id ${blank.join(", ")} is empty: write the finding you want to keep for each id.`
    )
  }
  return Result.map(selectCalls(ids, context), (selection) => ({ ...selection, findings }))
}

/**
 * An ID as the model may write it: a whole number, or a string of digits (the tags read `[id 12]`; models send both).
 * Anything else (a list holding a number, `12.5`, `true`) is not an ID.
 */
const idOf = (raw: unknown): number | undefined => {
  if (typeof raw === "number") return Number.isSafeInteger(raw) && raw >= 0 ? raw : undefined
  if (typeof raw !== "string") return undefined
  const text = raw.trim()
  return /^\d{1,15}$/.test(text) ? Number(text) : undefined
}

/** The most a refusal says: the model reads (and pays for) every character. */
const maxAnswerLength = 2_000

/**
 * A refusal cut to `maxAnswerLength` at a line break, counting the lines left out: 500 bad IDs are one problem
 * the model can fix from the first few lines.
 */
export const capAnswer = (text: string): string => {
  if (text.length <= maxAnswerLength) return text
  const lines = text.split("\n")
  const kept: Array<string> = []
  // Room for the closing line.
  let room = maxAnswerLength - 60
  for (const line of lines) {
    if (line.length < room) {
      kept.push(line)
      room -= line.length + 1
      continue
    }
    // One long line (a list of IDs) is cut rather than left out.
    if (room > 40) kept.push(`${line.slice(0, room - 1)}…`)
    break
  }
  const left = lines.length - kept.length
  return left === 0 ? kept.join("\n") : `${kept.join("\n")}\n…and ${left} more line${left === 1 ? "" : "s"} not shown.`
}

/**
 * Checks each raw ID in order: numeric, not repeated (an error, or skipped), then `check`, which returns what the
 * ID selects or a problem. Every problem is collected, so one reply names all of them.
 */
const checkIds = <A>(
  ids: ReadonlyArray<unknown>,
  options: { readonly hint: string; readonly repeats: "error" | "skip"; readonly check: (id: number) => A | string }
): { readonly found: ReadonlyArray<A>; readonly problems: ReadonlyArray<string> } => {
  const problems: Array<string> = []
  const found: Array<A> = []
  const seen = new Set<number>()
  for (const raw of ids) {
    const id = idOf(raw)
    if (id === undefined) {
      problems.push(`${shortJson(raw)} is not a numeric id; ${options.hint}`)
      continue
    }
    if (seen.has(id)) {
      if (options.repeats === "error") problems.push(`id ${id} is listed twice.`)
      continue
    }
    seen.add(id)
    const checked = options.check(id)
    if (typeof checked === "string") problems.push(checked)
    else found.push(checked)
  }
  return { found, problems }
}

const selectCalls = (ids: ReadonlyArray<unknown>, context: ValidationContext): Result.Result<Selection, string> => {
  const { found, problems } = checkIds(ids, {
    hint: 'use the number of an output\'s [id N] tag, e.g. "12".',
    repeats: "error",
    check: (id) => {
      const call = context.byId.get(id)
      if (call === undefined) {
        return `There is no tool call with id ${id} in this conversation; use the number of an output's [id N] tag.`
      }
      return problemWith(id, call, context) ?? { id, call }
    }
  })
  if (problems.length > 0) return Result.fail(capAnswer(`Nothing was pruned.\n${problems.join("\n")}`))
  return Result.succeed({ calls: found })
}

const problemWith = (id: number, call: ToolCall, context: ValidationContext): string | undefined => {
  const what = `id ${id} (${call.tool}${call.keyParameter === "" ? "" : ` ${call.keyParameter}`})`
  switch (whyNotPrunable(call, context)) {
    case "pruned":
      return `${what} is already pruned.`
    case "protected-tool":
      return `${what} is a ${call.tool} call, which is never pruned.`
    case "protected-file":
      return `${what} touches a file matching a protected file pattern; it is never pruned.`
    case "recent":
      return `${what} is from the last ${context.turnProtection} turns, which are protected; try again later.`
    case "unfinished":
      return `${what} has not finished yet.`
    case "empty":
      return `${what} has no output worth pruning (nothing left, or too small).`
    case undefined:
      return undefined
  }
}

/** What a valid `recall` asks for: whole outputs by ID, or the lines of all of them that match a query. */
export type RecallRequest =
  | { readonly kind: "ids"; readonly calls: ReadonlyArray<{ readonly id: number; readonly callID: string }> }
  | { readonly kind: "query"; readonly query: string }

const recallUsage =
  'Give ids, the numbers of placeholders\' "recall N" or of folded calls\' "#N" (e.g. {"ids": ["17"]}: whole outputs), or query, words to find in pruned and folded outputs (e.g. {"query": "parseConfig"}: the lines that hold them).'

/** The longest query taken: a search for lines, not for a block of text. */
const maxQueryLength = 200

/**
 * `recall({ ids })` or `recall({ query })`, one of the two: each ID must name a pruned or folded call of this session;
 * a query is one line of words. An empty list or blank query beside the other counts as not given.
 */
export const validateRecall = (
  args: { readonly ids?: ReadonlyArray<unknown> | null | undefined; readonly query?: unknown },
  context: {
    readonly callOf: (id: number) => string | undefined
    readonly pruned: ReadonlyMap<string, unknown>
    /** Calls a fold stands for (src/engine/fold.ts): not in the conversation either, pruned or not. */
    readonly folded: ReadonlyMap<string, unknown>
  }
): Result.Result<RecallRequest, string> => {
  const ids = args.ids ?? []
  const query = args.query
  if (query !== undefined && query !== null && typeof query !== "string") {
    return Result.fail(
      `Nothing was recalled.\nquery must be text, the words to find; found ${shortJson(query)}. ${recallUsage}`
    )
  }
  const text = typeof query === "string" ? query.trim() : ""
  if (ids.length > 0 && text !== "") {
    return Result.fail(
      `Nothing was recalled.\nGive ids or query, not both: ids returns whole outputs, query the lines of all of them that hold its words. ${recallUsage}`
    )
  }
  if (text !== "") {
    if (/[\r\n]/.test(text)) {
      return Result.fail(
        'Nothing was recalled.\nquery must be one line: each line of the outputs is matched against its words, e.g. {"query": "parseConfig"}.'
      )
    }
    if (text.length > maxQueryLength) {
      return Result.fail(
        `Nothing was recalled.\nquery is ${text.length} characters long; give at most ${maxQueryLength}: a few words that the line you are looking for holds.`
      )
    }
    return Result.succeed({ kind: "query", query: text })
  }
  if (ids.length === 0) {
    return Result.fail(
      typeof query === "string"
        ? `Nothing was recalled.\nquery is empty. ${recallUsage}`
        : args.ids !== undefined && args.ids !== null
        ? `Nothing was recalled.\nids is empty. ${recallUsage}`
        : `Nothing was recalled.\nNeither ids nor query was given. ${recallUsage}`
    )
  }
  const { found, problems } = checkIds(ids, {
    hint: 'use the number after "recall" in a placeholder.',
    repeats: "skip",
    check: (id) => {
      const callID = context.callOf(id)
      if (callID === undefined) return `There is no tool call with id ${id} in this conversation.`
      if (!context.pruned.has(callID) && !context.folded.has(callID)) {
        return `id ${id} is not pruned: its content is already in the conversation.`
      }
      return { id, callID }
    }
  })
  return problems.length > 0
    ? Result.fail(capAnswer(`Nothing was recalled.\n${problems.join("\n")}`))
    : Result.succeed({ kind: "ids", calls: found })
}
