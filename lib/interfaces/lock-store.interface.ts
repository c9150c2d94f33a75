/** What a store is asked to grant: one lease of `ttl` ms on `key`, identified by `token`. */
export interface AcquireRequest {
  /** The resource key as the user wrote it (the store adds its prefix). */
  readonly key: string;
  /** A fresh random token that names this acquisition. */
  readonly token: string;
  /** Lease length in ms. */
  readonly ttl: number;
  /** Whether to grant the resource's next fence with the lease: above every fence granted for it before. */
  readonly fencing: boolean;
  /**
   * Who takes the lease (a short JSON text made by the manager: host, pid, label, time; never the token).
   * The store keeps it beside the lease in the same atomic grant, with the same expiry, refreshes it when
   * the lease is extended, deletes it when the lease is released, and returns it from `inspect` while the
   * lease is held. Without it, the store keeps no holder for this grant (and drops any left over).
   */
  readonly holder?: string;
  /**
   * Set when the caller waits if refused. A store with a line of waiting processes per key (RedisLockStore)
   * then gives it a place, so that a release reserves the key for the process that has waited longest.
   * `again`: the caller may already have a place (a grant then frees it). `ttl`: how long, in ms, its place is
   * worth keeping (the rest of its wait). `next`: the caller is the one of its process that waits next for
   * the key (the head of the manager's local queue), which takes a lease a release grants straight to its
   * request (see `takeGrant`); only its request may stand beside the process's place. Other stores ignore it.
   */
  readonly waiting?: { readonly again: boolean; readonly ttl: number; readonly next?: boolean };
}

/** The answer to an acquire: a grant (with its fence when asked), or the holder's remaining lease. */
export type AcquireResult =
  | { readonly acquired: true; readonly fence?: number }
  | {
      readonly acquired: false;
      /** The holder's remaining lease in ms; `undefined` when the key has no expiry. */
      readonly remainingTtl: number | undefined;
    };

/** The answer to a hand-over: whether the lease was still ours, and whether `next` got it. */
export type HandOverResult =
  | { readonly released: false; readonly handedOver: false }
  | { readonly released: true; readonly handedOver: false }
  | { readonly released: true; readonly handedOver: true; readonly fence?: number };

/** A lease a release granted straight to one of this process's waiting requests (see `LockStore.takeGrant`). */
export interface DirectGrant {
  /** The fence granted with it (0 without fencing). */
  readonly fence: number;
  /**
   * When the request that left its offer in the line was sent (`performance.now()`): the release that granted
   * it ran after that request was refused, so the lease counts from then, never from when the notice came.
   */
  readonly sentAt: number;
}

/** One lease to renew in a batch. */
export interface LeaseRenewal {
  readonly key: string;
  readonly token: string;
  readonly ttl: number;
}

/** What a store knows about a resource, never the token. */
export interface LockState {
  readonly held: boolean;
  /** Remaining lease in ms while held. */
  readonly remainingTtl?: number;
  /** The last fence granted for this resource, when fencing has been used on it. */
  readonly fence?: number;
  /** The `holder` text given with the current lease's acquire, while held (as stored, uninterpreted). */
  readonly holder?: string;
}

/** Waits for release notices of one resource; created before the retry it guards so no notice is missed. */
export interface ReleaseWatch {
  /** Resolves `true` on a release notice (one heard since the last call counts), `false` after `timeout` ms. */
  next(timeout: number): Promise<boolean>;
  /** Ends the current wait (or the next one) as a notice would: a release seen inside this process. */
  wake(): void;
  /** Stops listening. */
  close(): void;
  /**
   * The `performance.now()` time from which on this watch has missed no notice (one heard before it was
   * made counts as heard), when the store knows it; a waiter whose refused attempt was sent after it needs
   * no second attempt to close the gap between that refusal and the watch.
   */
  readonly listeningSince?: number;
}

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
 * The storage contract every lock store fulfils (Redis, Redis Cluster, Redlock, memory).
 * Implementations answer contention with results, and failures of the store with `LockStoreError`.
 */
export interface LockStore {
  /** Atomically grants the lease when the key is free (or already ours with this token). */
  acquire(request: AcquireRequest): Promise<AcquireResult>;
  /** Deletes the lease only while `token` holds it; `false` when it was gone or someone else's. */
  release(key: string, token: string): Promise<boolean>;
  /**
   * Optional: releases the lease while `token` holds it and, in the same atomic step, grants it to `next`
   * (the releasing process's next waiter) when nobody else waits for the key; when others may wait, it
   * releases as `release` does and `next` gets nothing. Saves the next waiter its own round trip.
   */
  handOver?(key: string, token: string, next: AcquireRequest): Promise<HandOverResult>;
  /** Optional: this process no longer waits for `key` and gives up its place in the key's line, if any. */
  leaveLine?(key: string): Promise<void>;
  /**
   * Optional: the lease a release granted straight to `token`'s waiting request on `key`, once (a store whose
   * release can grant the process first in line, its notice saying so: RedisLockStore). The caller holds it
   * from then on, for its ttl counted from `sentAt`.
   */
  takeGrant?(key: string, token: string): DirectGrant | undefined;
  /** Optional: `token`'s request no longer waits for `key`; a direct grant that comes for it is given back. */
  withdrawOffer?(key: string, token: string): void;
  /**
   * Optional: `true` when a release may grant the lease straight to the next waiter's request (`takeGrant`);
   * its waiters then always leave their request with a second attempt instead of relying on a notice alone.
   */
  readonly grantsToWaiters?: boolean;
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
  /**
   * Optional: how much of a `ttl` ms lease a holder must keep back for clock drift, when the store has its
   * own rule (Redlock's `driftFactor`). Without it: 1 % of the lease plus 2 ms.
   */
  clockDrift?(ttl: number): number;
  /**
   * Optional: for how many ms a contended release reserves the key for the process first in line (the
   * hand-off window). The manager keeps every ttl at least twice as long, so that a process that died
   * while first in line costs the others clearly less than a crashed holder does.
   */
  readonly handoffWindow?: number;
  /**
   * Optional: the least `ttl`, in ms, the store can grant (etcd counts leases in whole seconds: 1000). The
   * manager refuses a shorter ttl with `LockConfigurationError` where it is set: the module's defaults at
   * startup, a call's or a decorator's options when they are first used.
   */
  readonly minTtl?: number;
  /**
   * Optional: the longest keep, at most `ms`, that this store surely ends within `ms` (etcd counts leases in
   * whole seconds, grants none under its least lease, and drops one that ran out up to a second late); `0` when none is
   * that short. A scheduled run's claim on its tick asks it, so that a kept lease never outlasts its window and
   * refuses the next tick. Without it, a lease kept for `ms` (`extend`) ends after `ms`.
   */
  keepWithin?(ms: number): number;
  /** Frees what the store owns (connections it opened, timers); never a client the user passed in. */
  close(): Promise<void>;
}
