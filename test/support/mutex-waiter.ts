import { performance } from 'node:perf_hooks';
import { LockNotAcquiredError } from '../../lib/errors/lock-not-acquired.error.js';
import type { AcquireRequest } from '../../lib/interfaces/lease.interface.js';
import type { LockStore } from '../../lib/interfaces/lock-store.interface.js';

/** How long a waiter sleeps at most between two attempts without a notice: the safety net of a missed one. */
const LONGEST_SLEEP = 500;

/**
 * Takes a mutex lease straight from a store, as the engine waits: asks with `waiting` (a place in the line,
 * a mark on the lease), sleeps until a release notice or the holder's remaining lease, asks again.
 * @throws LockNotAcquiredError after `wait` ms
 */
export async function waitForMutex(
  store: LockStore,
  request: Omit<AcquireRequest, 'waiting'>,
  wait: number,
): Promise<void> {
  const started = performance.now();
  const deadline = started + wait;
  const watch = await store.watch(request.key);
  try {
    for (let again = false; ; again = true) {
      const left = deadline - performance.now();
      const result = await store.acquire({ ...request, waiting: { again, ttl: Math.max(1, left) } });
      if (result.acquired) return;
      const remaining = deadline - performance.now();
      if (remaining <= 0) throw new LockNotAcquiredError(request.key, result.remainingTtl, performance.now() - started);
      await watch.next(Math.max(1, Math.min(remaining, (result.remainingTtl ?? LONGEST_SLEEP) + 1, LONGEST_SLEEP)));
    }
  } finally {
    watch.close();
  }
}
