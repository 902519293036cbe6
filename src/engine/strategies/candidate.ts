/** Why a call was pruned: an automatic rule, the model's own tools, or the user's command. */
export type Reason =
  | "deduplication"
  | "supersedeWrites"
  | "purgeErrors"
  | "staleOutputs"
  | "discard"
  | "extract"
  | "sweep"

export interface Candidate {
  readonly callID: string
  readonly reason: Reason
}
