import type { AcquireRequest } from './lease.interface.js';

/** The answer to a hand-over: whether the lease was still ours, and whether `next` got it. */
export type HandOverResult =
  | { readonly released: false; readonly handedOver: false }
  | { readonly released: true; readonly handedOver: false }
  | { readonly released: true; readonly handedOver: true; readonly fence?: number };

/** A lease a release granted straight to one of this process's waiting requests (see `WaitingLine.takeGrant`). */
export interface DirectGrant {
  /** The fence granted with it (0 without fencing). */
  readonly fence: number;
  /**
   * When the request that left its offer in the line was sent (`performance.now()`): the release that granted
   * it ran after that request was refused, so the lease counts from then, never from when the notice came.
   */
  readonly sentAt: number;
}

/**
 * A line of waiting processes per key, kept by the store: a contended release serves the process that has
 * waited longest. A store that keeps one gives each refused `AcquireRequest` with `waiting` a place for its
 * process, and offers this object as `capabilities.line`; the manager then hands leases over in one call and
 * gives up its place when nobody here waits any more.
 */
export interface WaitingLine {
  /**
   * Releases the lease while `token` holds it and, in the same atomic step, grants it to `next` (the releasing
   * process's next waiter) when nobody else waits for the key; when others may wait, it releases as
   * `LockStore.release` does and `next` gets nothing. Saves the next waiter its own round trip.
   */
  handOver(key: string, token: string, next: AcquireRequest): Promise<HandOverResult>;
  /** This process no longer waits for `key` and gives up its place in the key's line, if any. */
  leaveLine(key: string): Promise<void>;
  /**
   * `true` when a release may grant the lease straight to the next waiter's request (`takeGrant`); its
   * waiters then always leave their request with a second attempt instead of relying on a notice alone.
   */
  readonly grantsToWaiters?: boolean;
  /**
   * The lease a release granted straight to `token`'s waiting request on `key`, once (its notice said so). The
   * caller holds it from then on, for its ttl counted from `sentAt`. Given with `grantsToWaiters`.
   */
  takeGrant?(key: string, token: string): DirectGrant | undefined;
  /**
   * `token` asks for `key` no more: a direct grant that comes for it is given back (a token-checked release).
   * Never called for a token its waiter may still ask with.
   */
  withdrawOffer?(key: string, token: string): void;
}
