import { setTimeout as sleep } from "node:timers/promises"

/**
 * Polls `probe` until it returns a truthy value (which is returned) or the deadline passes. Everything in this
 * tier waits this way: OpenCode does some work after answering a request (notes sent on idle, events, installs).
 */
export const waitFor = async <T>(
  what: string,
  timeoutMs: number,
  probe: () => T | Promise<T>,
  intervalMs = 100
): Promise<NonNullable<T>> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value as NonNullable<T>
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    await sleep(intervalMs)
  }
}
