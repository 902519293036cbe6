import { Effect, Queue, Semaphore } from "effect"

/**
 * Runs `write` in the background after `request`, coalescing requests made while a write is under way, so the
 * caller (a model request) never waits for the disk. `drain` writes now and waits; it also runs when the scope
 * closes (the plugin is disposed), so nothing requested is lost on shutdown.
 */
export const writeBehind = Effect.fnUntraced(function*(write: Effect.Effect<void>) {
  const wake = yield* Queue.sliding<void>(1)
  const writing = yield* Semaphore.make(1)
  const drain = writing.withPermits(1)(write)
  yield* Queue.take(wake).pipe(Effect.andThen(drain), Effect.forever, Effect.forkScoped)
  yield* Effect.addFinalizer(() => drain)
  return {
    request: Queue.offer(wake, undefined).pipe(Effect.asVoid),
    drain
  }
})
