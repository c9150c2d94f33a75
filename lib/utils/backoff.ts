/** Settings of the jittered exponential backoff that bounds each wait between attempts. */
export interface BackoffOptions {
  /** First delay in ms. @default 50 */
  readonly minDelay: number;
  /** Largest delay in ms. @default 1000 */
  readonly maxDelay: number;
  /** Growth per attempt. @default 2 */
  readonly factor: number;
}

/**
 * The delay before retry number `attempt` (0-based): exponential, capped, with "full jitter" in its
 * upper half so that waiters that collided once do not collide again.
 */
export function backoffDelay(attempt: number, options: BackoffOptions, random = Math.random): number {
  return upperHalfOf(Math.min(options.maxDelay, options.minDelay * options.factor ** attempt), random);
}

/**
 * The sleep of a waiter that will be told of its turn (its request stands in the store's line and its watch
 * hears every notice): the backoff's ceiling, `maxDelay`, jittered in its upper half. It only bounds how long a
 * notice that could not reach the waiter (its place lost unheard) may cost.
 */
export function toldWaiterDelay(options: BackoffOptions, random = Math.random): number {
  return upperHalfOf(options.maxDelay, random);
}

/** A delay drawn from the upper half of `ceiling`: waiters that collided once do not collide again. */
function upperHalfOf(ceiling: number, random: () => number): number {
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
