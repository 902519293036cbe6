import { setTimeout as sleep } from "node:timers/promises"

/**
 * How long a wait in this tier may last: only a guard against a hang, never a measure of speed (a first prompt to a
 * fresh OpenCode has taken over a minute on 2 busy cores). Below the tier's test timeout (vitest.config.ts), so that
 * a hang fails with the name of what was awaited.
 */
export const guardMs = 240_000

/**
 * Polls `probe` until it returns a truthy value (which is returned). Everything in this tier waits this way:
 * OpenCode does some work after answering a request (notes sent on idle, events, installs).
 */
export const waitFor = async <T>(
  what: string,
  probe: () => T | Promise<T>,
  intervalMs = 100
): Promise<NonNullable<T>> => {
  const deadline = Date.now() + guardMs
  for (;;) {
    const value = await probe()
    if (value) return value as NonNullable<T>
    if (Date.now() > deadline) throw new Error(`gave up after ${guardMs} ms waiting for ${what}`)
    await sleep(intervalMs)
  }
}
