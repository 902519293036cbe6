/**
 * A Map that remembers which keys were set or deleted since its changes were last taken: what a write of the state it
 * holds has to carry, found without comparing the whole map with what was written before.
 */
export class TrackedMap<K, V> extends Map<K, V> {
  #changed = new Set<K>()

  // Filled through `super.set`: Map's constructor calls `set` before the subclass's fields exist.
  constructor(entries: Iterable<readonly [K, V]> = []) {
    super()
    for (const [key, value] of entries) super.set(key, value)
  }

  override set(key: K, value: V): this {
    super.set(key, value)
    this.#changed.add(key)
    return this
  }

  override delete(key: K): boolean {
    const had = super.delete(key)
    if (had) this.#changed.add(key)
    return had
  }

  override clear(): void {
    for (const key of this.keys()) this.#changed.add(key)
    super.clear()
  }

  /** The keys set or deleted since the last call, and forgets them. */
  takeChanged(): ReadonlySet<K> {
    const changed = this.#changed
    this.#changed = new Set()
    return changed
  }
}

/** A Set that remembers which values were added or deleted since its changes were last taken (see `TrackedMap`). */
export class TrackedSet<T> extends Set<T> {
  #changed = new Set<T>()

  constructor(values: Iterable<T> = []) {
    super()
    for (const value of values) super.add(value)
  }

  override add(value: T): this {
    if (!this.has(value)) this.#changed.add(value)
    super.add(value)
    return this
  }

  override delete(value: T): boolean {
    const had = super.delete(value)
    if (had) this.#changed.add(value)
    return had
  }

  override clear(): void {
    for (const value of this) this.#changed.add(value)
    super.clear()
  }

  /** The values added or deleted since the last call, and forgets them. */
  takeChanged(): ReadonlySet<T> {
    const changed = this.#changed
    this.#changed = new Set()
    return changed
  }
}
