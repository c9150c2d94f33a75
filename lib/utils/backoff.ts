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
  const ceiling = Math.min(options.maxDelay, options.minDelay * options.factor ** attempt);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}
