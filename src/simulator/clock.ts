import { type Clock, Effect } from "effect"

/**
 * Effect's clock with "now" set by whoever replays a session (the offline analyser, the benchmark, tests): hours of session run in
 * seconds, and the plugin reads each request's own time. Sleeping and monotonic time stay real, so background work
 * (state written behind) runs as it does in OpenCode.
 */
export const replayedClock = (real: Clock.Clock, time: { now: number }): Clock.Clock => ({
  currentTimeMillisUnsafe: () => time.now,
  currentTimeMillis: Effect.sync(() => time.now),
  currentTimeNanosUnsafe: () => BigInt(time.now) * 1_000_000n,
  currentTimeNanos: Effect.sync(() => BigInt(time.now) * 1_000_000n),
  monotonicTimeNanosUnsafe: () => real.monotonicTimeNanosUnsafe(),
  monotonicTimeNanos: real.monotonicTimeNanos,
  sleep: (duration) => real.sleep(duration)
})
