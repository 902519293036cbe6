import type { Reason } from "../reasons.ts"

export interface Candidate {
  readonly callID: string
  readonly reason: Reason
}
