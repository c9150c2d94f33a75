import type { Duration } from '../utils/duration.js';
import type { BackoffOptions } from '../utils/backoff.js';

/** How one acquisition behaves; every field falls back to the module's defaults. */
export interface LockOptions {
  /** Lease length: how long the lock survives its holder if the holder crashes. @default '30s' */
  readonly ttl?: Duration;
  /** How long to wait for a held lock before giving up; `0` fails at once. @default 0 */
  readonly wait?: Duration;
  /** Backoff between attempts while waiting (release notices usually wake a waiter sooner). */
  readonly retry?: Partial<BackoffOptions>;
  /** Renew the lease at about a third of its TTL until released. @default true for `using` and `@WithLock`, false for `acquire` */
  readonly autoRenew?: boolean;
  /** Grant a fence (a number that grows with every grant of this resource) with the lease. @default false */
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
}

/** Defaults shared by every acquisition of one manager or module. */
export interface LockDefaults {
  /** @default '30s' */
  readonly ttl?: Duration;
  /** @default 0 */
  readonly wait?: Duration;
  /** @default { minDelay: 50, maxDelay: 1000, factor: 2 } */
  readonly retry?: Partial<BackoffOptions>;
  /** Default for `using` and `@WithLock`; `acquire` renews only when asked. @default true */
  readonly autoRenew?: boolean;
  /** @default false */
  readonly fencing?: boolean;
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
