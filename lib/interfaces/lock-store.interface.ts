import type { AcquireRequest, AcquireResult, LeaseRenewal, LockState, ReleaseWatch } from './lease.interface.js';
import type { LockStoreCapabilities } from './store-capabilities.interface.js';

/**
 * What `LockStore.verify` found that does not stop the store from working but that an operator must hear of
 * (a risk accepted by an option, a setting it could not check). The store has no logger: the manager logs
 * each warning (see `LockManager.verify`).
 */
export interface LockStoreVerification {
  /** One message per finding, naming the server (`host:port`, never credentials) and what to do. */
  readonly warnings: readonly string[];
}

/** What a store tells a health check about itself (see `LockStore.health`). */
export interface LockStoreHealth {
  /** Whether the store's scripts are cached on the server(s); absent for a store that runs none. */
  readonly scriptsLoaded?: boolean;
  /** How many scripts the check had to load again (the server had forgotten them: restart, flush, failover). */
  readonly scriptsReloaded?: number;
}

/**
 * The storage contract every lock store fulfils (Redis, Redis Cluster, Redlock, etcd, memory): the lease, and
 * what else it offers as `capabilities`. Implementations answer contention with results, and failures of the
 * store with `LockStoreError`.
 */
export interface LockStore {
  /** Atomically grants the lease when the key is free (or already ours with this token). */
  acquire(request: AcquireRequest): Promise<AcquireResult>;
  /** Deletes the lease only while `token` holds it; `false` when it was gone or someone else's. */
  release(key: string, token: string): Promise<boolean>;
  /** Sets the lease to `ttl` ms only while `token` holds it; never re-creates a missing key. */
  extend(key: string, token: string, ttl: number): Promise<boolean>;
  /** Renews many leases in one batch; each entry is the outcome of `extend` or the error it met. */
  extendMany(renewals: readonly LeaseRenewal[]): Promise<Array<boolean | Error>>;
  /** Reads the state of a resource, with the holder record while it is held; never the token. */
  inspect(key: string): Promise<LockState>;
  /** Starts listening for releases of `key`; notices since `since` (`performance.now()`), if given, count. */
  watch(key: string, since?: number): Promise<ReleaseWatch>;
  /**
   * Checks the store works and is safe (connection, permissions, scripts, server settings that can lose a
   * lease) and fails with a clear error if not; returns warnings for what it could not check or was told to
   * accept. Run once at startup (`LockManager.verify`, which `LockService` calls at bootstrap).
   */
  verify?(): Promise<LockStoreVerification | void>;
  /**
   * A cheap check for health probes, in about one round trip: the store answers, and its scripts are
   * cached (loaded again if the server forgot them). Fails with `LockStoreError` when it cannot. Optional:
   * without it, health checks read a key instead.
   */
  health?(): Promise<LockStoreHealth>;
  /** Frees what the store owns (connections it opened, timers); never a client the user passed in. */
  close(): Promise<void>;
  /**
   * What the store offers beyond the lease (its ttl rules, a line of waiting processes, permits), each an
   * object of its own; the engine asks here, never for the store's class. Without it, none.
   */
  readonly capabilities?: LockStoreCapabilities;
}
