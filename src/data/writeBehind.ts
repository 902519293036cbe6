import { type Duration, Effect, Queue, Semaphore } from "effect"

/**
 * Runs `write` in the background after `request`, so the caller (a model request) never waits for the disk.
 * Requests made while a write is under way, or within `spacing` after one, are coalesced into the next write: a
 * busy session is written about once per `spacing`, not once per request. `drain` writes now and waits; it also
 * runs when the scope closes (the plugin is disposed), so nothing requested is lost on shutdown. `exclusive` runs a
 * write of the caller's own between the background writes, never beside one.
 */
export const writeBehind = Effect.fnUntraced(function*(
  write: Effect.Effect<void>,
  options: { readonly spacing?: Duration.Input } = {}
) {
  const wake = yield* Queue.sliding<void>(1)
  const writing = yield* Semaphore.make(1)
  const drain = writing.withPermits(1)(write)
  const spacing = options.spacing === undefined ? Effect.void : Effect.sleep(options.spacing)
  yield* Queue.take(wake).pipe(Effect.andThen(drain), Effect.andThen(spacing), Effect.forever, Effect.forkScoped)
  yield* Effect.addFinalizer(() => drain)
  return {
    request: Queue.offer(wake, undefined).pipe(Effect.asVoid),
    drain,
    exclusive: <A, E, R>(effect: Effect.Effect<A, E, R>) => writing.withPermits(1)(effect)
  }
})
