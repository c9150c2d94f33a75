import { raceDeadline } from '../utils/deadline.js';
import { performance } from 'node:perf_hooks';
import type { LockStore, LockStoreHealth } from '../interfaces/lock-store.interface.js';
import { MAX_DURATION } from '../utils/duration.js';
import { checkOptionNames, HEALTH_CHECK_OPTIONS } from '../options/option-names.js';
import { validateInteger } from '../options/validate-options.js';
import type { LockStoreCheckOptions } from '../interfaces/lock-store-check-options.interface.js';

export type { LockStoreCheckOptions } from '../interfaces/lock-store-check-options.interface.js';

/** A key no lock uses: stores without `health()` are probed by reading it. */
const PROBE_KEY = '__nestjs-lock:health__';

/** @default 1000 */
export const DEFAULT_HEALTH_TIMEOUT = 1000;

/** The outcome of `checkLockStore`. */
export type LockStoreStatus =
  | ({
      readonly healthy: true;
      /** The store's class, e.g. `RedisLockStore`. */
      readonly store: string;
      /** How long the check took, in ms (about one round trip to the store). */
      readonly roundTripMs: number;
    } & LockStoreHealth)
  | {
      readonly healthy: false;
      readonly store: string;
      /** Why it is down: the store's error, or that it did not answer in time. */
      readonly reason: string;
      /** How long the check waited, in ms. */
      readonly roundTripMs: number;
    };

/**
 * Checks that a lock store answers, within `timeout` ms: `store.health()` where the store has it (Redis:
 * reachable, scripts cached), else a read of an unused key. Resolves (never rejects) within the timeout;
 * the reason of a failure names no token.
 * @throws LockConfigurationError when `timeout` is not a whole number of ms from 1, or for an unknown option
 */
export async function checkLockStore(store: LockStore, options: LockStoreCheckOptions = {}): Promise<LockStoreStatus> {
  checkOptionNames(options, HEALTH_CHECK_OPTIONS);
  const timeout = validateInteger('timeout', options.timeout ?? DEFAULT_HEALTH_TIMEOUT, 1, MAX_DURATION);
  const name = store.constructor?.name || 'LockStore';
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  const probe = Promise.resolve().then(() =>
    store.health ? store.health() : store.inspect(PROBE_KEY).then(() => ({})),
  );
  try {
    const health = await raceDeadline(probe, timeout, () => {
      throw new TimeoutError(timeout);
    });
    return { healthy: true, store: name, roundTripMs: elapsed(), ...health };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { healthy: false, store: name, reason, roundTripMs: elapsed() };
  }
}

class TimeoutError extends Error {
  constructor(timeout: number) {
    super(`the lock store did not answer within ${timeout} ms`);
  }
}
