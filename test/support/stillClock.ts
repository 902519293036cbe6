import { Clock, Effect } from "effect"

/**
 * Effect's clock with "now" held still, sleeping for real. A wait bounded by a duration of this clock (the lifetime
 * lock's 2-second limit) never runs out, so a test waits for the event it is about (the other holder releasing the
 * lock) however long a busy machine makes that take. File ages read against it are never stale.
 */
const stillClock: Effect.Effect<Clock.Clock> = Effect.map(Clock.clockWith(Effect.succeed), (real) => ({
  currentTimeMillisUnsafe: () => 0,
  currentTimeMillis: Effect.succeed(0),
  currentTimeNanosUnsafe: () => 0n,
  currentTimeNanos: Effect.succeed(0n),
  monotonicTimeNanosUnsafe: () => real.monotonicTimeNanosUnsafe(),
  monotonicTimeNanos: real.monotonicTimeNanos,
  sleep: (duration) => real.sleep(duration)
}))

/** `effect` on the still clock. */
export const onStillClock = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(stillClock, (clock) => Effect.provideService(effect, Clock.Clock, clock))
