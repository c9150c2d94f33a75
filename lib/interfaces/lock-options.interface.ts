import type { Duration } from '../utils/duration.js';
import type { BackoffOptions } from '../utils/backoff.js';
import type { PermitMode } from './permit-store.interface.js';

/**
 * What a `retryAfter` function is told about a refused acquisition, to choose how many seconds a client
 * should wait before it tries again.
 */
export interface LockContention {
  /** The resource that is held (the resolved key: keep it out of what you send to clients). */
  readonly key: string;
  /** The key's bounded name (`@WithLock` template or `metricKey`), when it has one. */
  readonly keyTemplate?: string;
  /** The holder's remaining lease in ms, when the store told it. */
  readonly remainingTime?: number;
  /**
   * How long holders of this key template usually keep it, in ms, from the holds this process saw end
   * (a smoothed average plus four times the smoothed deviation); `undefined` before the first one.
   */
  readonly usualHoldTime?: number;
  /** How long this caller waited before giving up, in ms. */
  readonly waited: number;
}

/**
 * The `Retry-After` of a refused acquisition, in whole seconds (`0` or more), or a function of the
 * contention that returns it. By default: the smaller of the holder's remaining lease and how long
 * holders of that key template usually keep it, at least 1 s.
 */
export type RetryAfter = number | ((contention: LockContention) => number);

/** How one acquisition behaves; every field falls back to the module's defaults. */
export interface LockOptions {
  /**
   * Lease length: how long the lock survives its holder if the holder crashes. At least 100 ms, more than
   * three times the store's clock-drift allowance, and at least twice the store's `handoffWindow` (see
   * docs/options.md, "Bounds, and why"). @default '30s'
   */
  readonly ttl?: Duration;
  /** How long to wait for a held lock before giving up; `0` fails at once. @default 0 */
  readonly wait?: Duration;
  /**
   * Backoff between attempts while waiting (release notices usually wake a waiter sooner). A waiter whose
   * request stands in the store's line and whose process hears its notices is told of its turn: it asks again
   * only after `maxDelay`, in case its place was lost unheard.
   * @default { minDelay: 50, maxDelay: 1000, factor: 2 }
   */
  readonly retry?: Partial<BackoffOptions>;
  /**
   * Renew the lease at about a third of its TTL until released. As a module or manager default it applies to
   * `using` and `@WithLock`; `acquire` renews only when its own options ask.
   * @default true for `using` and `@WithLock`, false for `acquire`
   */
  readonly autoRenew?: boolean;
  /**
   * Grant a fence with the lease: a safe integer above every fence granted for this resource before, at
   * least the server clock in microseconds (so store it in a 64-bit column). @default false
   */
  readonly fencing?: boolean;
  /**
   * Names the holder in `inspect()` (with host, pid and time), e.g. `'BillingJob.run'`; at most 256
   * characters. @default `Class.method` for `@WithLock`, none for direct calls
   */
  readonly label?: string;
  /**
   * The bounded name this lock is reported under in events, metrics and spans (`keyTemplate`,
   * `lock.key_template`), e.g. `'invoice:<id>'`; keep the set of values small. At most 256 characters.
   * @default the key template for `@WithLock`, `'direct'` for direct calls
   */
  readonly metricKey?: string;
  /**
   * What a refused acquisition tells clients to wait before retrying (`Retry-After`, `retryAfter` in the
   * error payload): whole seconds, or a function of the contention. @default the holder's remaining lease
   * or the key template's usual hold, whichever is smaller, at least 1 s
   */
  readonly retryAfter?: RetryAfter;
  /**
   * Make the key a semaphore: up to `limit` holders at once, each with a permit of its own (own token,
   * expiry, renewal, fence). Every caller of one key must ask for the same limit while any permit or waiter
   * of it lasts; another limit is a `LockConfigurationError`, never a silently larger semaphore. Not with
   * `mode`. Needs a store with permits (`RedisLockStore`, `MemoryLockStore`). @default none: a mutex
   */
  readonly limit?: number;
  /**
   * Make the key a readers-writer lock: `'read'` permits are shared with every other reader, a `'write'`
   * permit excludes every reader, writer and mutex lease of the key. `'write'` alone is a permit of that
   * readers-writer resource (not a plain mutex), so readers and writers of one key agree on its shape; a
   * waiting writer is served before readers that came after it. Not with `limit`. Needs a store with permits.
   * @default none: a mutex
   */
  readonly mode?: PermitMode;
}

/**
 * Options of a locked section (`using()`, `@WithLock`): those of its leases, and what a lease lost while it
 * ran does to its result.
 */
export interface LockSectionOptions extends LockOptions {
  /**
   * What the call does when the section's function returns normally although one of its leases was lost
   * while it ran (`taken`, `expired`, `stalled` or `store-unreachable`, found by a renewal or at the
   * release): `'return'` its result (the loss was signalled and logged), or `'throw'` the `LockLostError`
   * instead, so that work which may not have been exclusive is never reported as done (HTTP 503
   * `LOCK_LOST`, each transport's lost-lock error). An error the function throws passes through as it is;
   * the shutdown's request to stop (reason `shutdown`) is no loss: its lease was kept.
   * @default 'return'
   */
  readonly onLost?: 'return' | 'throw';
}

/**
 * Defaults shared by every acquisition of one manager or module: the fields of {@link LockSectionOptions}
 * that are not about one caller (`label` and `metricKey` are, and a key's `limit` or `mode`), and the
 * longest key.
 */
export interface LockDefaults extends Omit<LockSectionOptions, 'label' | 'metricKey' | 'limit' | 'mode'> {
  /** Longest accepted key, in UTF-8 bytes (before the prefix). @default 1024 */
  readonly maxKeyLength?: number;
}

/** The logger the manager reports to (Nest's `Logger` fits). */
export interface LockLogger {
  warn(message: string): void;
  error(message: string): void;
  debug?(message: string): void;
  log?(message: string): void;
}
