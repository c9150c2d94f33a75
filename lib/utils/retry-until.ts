import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Runs `operation` until it succeeds, again after each failure with a delay doubling from 20 ms to 500 ms,
 * as long as the next try would start before `until` (a `performance.now()` time) and `stopped()` is false.
 * For a token-checked release of a grant nobody will use: a client that does not resend fails the first try
 * at once while it reconnects, and a grant left there would keep its key from everyone until its ttl ends.
 * The delays do not keep the process alive.
 */
export async function retryUntil(operation: () => Promise<unknown>, until: number, stopped: () => boolean) {
  for (let delay = 20; ; delay = Math.min(delay * 2, 500)) {
    try {
      await operation();
      return;
    } catch {
      if (stopped() || performance.now() + delay >= until) return;
      await sleep(delay, undefined, { ref: false });
    }
  }
}
