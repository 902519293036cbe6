import type { Reason } from "../reasons.ts"

export interface Candidate {
  readonly callID: string
  readonly reason: Reason
}

/** Inserts `value` into the ascending array `sorted`. */
export const insertSorted = (sorted: Array<number>, value: number): void => {
  let low = 0
  let high = sorted.length
  while (low < high) {
    const mid = (low + high) >>> 1
    if (sorted[mid]! < value) low = mid + 1
    else high = mid
  }
  if (low === sorted.length) sorted.push(value)
  else sorted.splice(low, 0, value)
}
