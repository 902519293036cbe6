/** A small seeded PRNG (mulberry32) with the helpers the generator needs. Same seed, same sequence, everywhere. */
export class Random {
  private state: number

  constructor(seed: number) {
    this.state = seed >>> 0
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0
    let t = this.state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1))
  }

  chance(p: number): boolean {
    return this.next() < p
  }

  pick<T>(items: ReadonlyArray<T>): T {
    return items[Math.floor(this.next() * items.length)]!
  }

  /** One of `items`, chosen with the given weights. */
  weighted<T>(items: ReadonlyArray<readonly [T, number]>): T {
    const total = items.reduce((sum, [, weight]) => sum + weight, 0)
    let r = this.next() * total
    for (const [item, weight] of items) {
      r -= weight
      if (r < 0) return item
    }
    return items[items.length - 1]![0]
  }

  /** Log-uniform in [min, max]: most values small, some large (durations, log lengths). */
  logUniform(min: number, max: number): number {
    return Math.exp(Math.log(min) + this.next() * (Math.log(max) - Math.log(min)))
  }

  /** `n` characters of base62, like provider call IDs. */
  id(n: number): string {
    const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
    let out = ""
    for (let i = 0; i < n; i++) out += alphabet[Math.floor(this.next() * 62)]
    return out
  }
}
