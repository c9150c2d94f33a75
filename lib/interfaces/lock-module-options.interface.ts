import type { Cluster, Redis, RedisOptions } from 'ioredis';
import type { LockDefaults, LockLogger } from './lock-options.interface.js';
import type { LockStore } from './lock-store.interface.js';
import type { ReplicaAckOptions } from '../stores/replica-ack.js';

/**
 * Options of `LockModule.forRoot()` / `forRootAsync()`. Give one of `redis` or `store`; with neither,
 * locks live in this process only (`MemoryLockStore`), which is logged once at startup.
 */
export interface LockModuleOptions extends LockDefaults {
  /**
   * The Redis (or Valkey) to keep locks in: an ioredis `Redis` or `Cluster` you own (never closed by the
   * module), or a URL / ioredis options from which the module creates and owns a client.
   */
  readonly redis?: Redis | Cluster | string | RedisOptions;
  /** Any `LockStore` (e.g. `MemoryLockStore` in tests). A store you pass in is not closed by the module. */
  readonly store?: LockStore;
  /** Namespace of every Redis key and channel; must not contain `{` or `}`. @default 'lock:' */
  readonly keyPrefix?: string;
  /** Wake waiters with pub/sub release notices; off leaves them to their backoff. @default true */
  readonly releaseNotices?: boolean;
  /** Hand-off reservation after a contended release, in ms; `0` turns it off. @default 20 */
  readonly handoffWindow?: number;
  /**
   * Count a grant or renewal only once this many replicas of its master have it (Redis `WAIT`); a grant
   * they do not acknowledge in time is released and fails with `LockStoreError`. Needs `redis`.
   * @default undefined (off)
   * @example { replicas: 1, timeout: 50 }
   */
  readonly replicaAck?: ReplicaAckOptions;
  /** Check the store at startup (reachable, allowed to run scripts) and fail the bootstrap if not. @default true */
  readonly verifyOnStartup?: boolean;
  /**
   * Register the global `LockInterceptor` that maps lock errors of HTTP handlers to 409/503/400 and lets
   * key templates read the request. Turn off to register your own subclass. @default true
   */
  readonly interceptor?: boolean;
  /** Where lost leases and store failures are reported. @default Nest's `Logger` with context 'LockModule' */
  readonly logger?: LockLogger;
}
