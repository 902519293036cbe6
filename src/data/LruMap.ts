/**
 * A Map bounded to `capacity` entries that evicts the least recently used one. Map iteration order is insertion
 * order, so re-inserting on access keeps the oldest entry first.
 */
export class LruMap<K, V> {
  readonly #entries = new Map<K, V>()
  readonly capacity: number
  readonly #onEvict: ((key: K, value: V) => void) | undefined

  constructor(capacity: number, onEvict?: (key: K, value: V) => void) {
    this.capacity = Math.max(1, capacity)
    this.#onEvict = onEvict
  }

  get size(): number {
    return this.#entries.size
  }

  get(key: K): V | undefined {
    const value = this.#entries.get(key)
    if (value !== undefined) {
      this.#entries.delete(key)
      this.#entries.set(key, value)
    }
    return value
  }

  has(key: K): boolean {
    return this.#entries.has(key)
  }

  set(key: K, value: V): void {
    this.#entries.delete(key)
    this.#entries.set(key, value)
    while (this.#entries.size > this.capacity) {
      const [oldestKey, oldestValue] = this.#entries.entries().next().value as [K, V]
      this.#entries.delete(oldestKey)
      this.#onEvict?.(oldestKey, oldestValue)
    }
  }

  delete(key: K): boolean {
    return this.#entries.delete(key)
  }

  values(): IterableIterator<V> {
    return this.#entries.values()
  }
}
