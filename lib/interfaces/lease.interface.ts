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
   * Set when the caller waits if refused. A store with a line of waiting processes per key (`capabilities.line`)
   * then gives it a place, so that a release reserves the key for the process that has waited longest.
   * `again`: the caller may already have a place (a grant then frees it). `ttl`: how long, in ms, its place is
   * worth keeping (the rest of its wait). `next`: the caller is the one of its process that waits next for
   * the key (the head of the manager's local queue), which takes a lease a release grants straight to its
   * request (see `WaitingLine.takeGrant`); only its request may stand beside the process's place. Other stores ignore it.
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
   * no second attempt to close the gap between that refusal and the watch. `undefined` again once notices
   * may have been lost (its connection dropped): a waiter that counted on being told asks at its backoff.
   */
  readonly listeningSince?: number;
}
