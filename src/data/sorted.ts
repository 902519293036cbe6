/** The first index of the ascending `values` whose value is `value` or more; their length if there is none. */
export const firstAtOrAfter = (values: ArrayLike<number>, value: number): number => {
  let low = 0
  let high = values.length
  while (low < high) {
    const middle = (low + high) >>> 1
    if (values[middle]! < value) low = middle + 1
    else high = middle
  }
  return low
}

/** Inserts `value` into the ascending array `sorted`. */
export const insertSorted = (sorted: Array<number>, value: number): void => {
  sorted.splice(firstAtOrAfter(sorted, value), 0, value)
}
