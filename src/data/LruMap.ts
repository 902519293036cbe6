/**
 * A Map bounded to `capacity` entries that evicts the least recently used one. Map iteration order is insertion
 * order, so re-inserting on access keeps the oldest entry first. Entries `canEvict` refuses (in use) are skipped;
 * when every entry is in use the map grows past its capacity until some are released.
 */
export class LruMap<K, V> {
  readonly #entries = new Map<K, V>()
  readonly capacity: number
  readonly #canEvict: (value: V) => boolean

  constructor(capacity: number, canEvict: (value: V) => boolean = () => true) {
    this.capacity = Math.max(1, capacity)
    this.#canEvict = canEvict
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
    if (this.#entries.size <= this.capacity) return
    for (const [oldKey, oldValue] of this.#entries) {
      if (this.#entries.size <= this.capacity) break
      if (oldKey !== key && this.#canEvict(oldValue)) this.#entries.delete(oldKey)
    }
  }

  delete(key: K): boolean {
    return this.#entries.delete(key)
  }

  values(): IterableIterator<V> {
    return this.#entries.values()
  }
}
