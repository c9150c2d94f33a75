import type { LeaseRenewal, ReleaseWatch } from './lease.interface.js';
import type { DirectGrant } from './waiting-line.interface.js';

/** The mode of a readers-writer permit: any number of readers together, or one writer alone. */
export type PermitMode = 'read' | 'write';

/**
 * How a resource shares out its permits: a semaphore of `limit` holders, or a readers-writer lock. Every
 * caller of one key must ask for the same shape while any permit or waiting place of the key exists (a
 * semaphore's `limit` included); the store keeps the shape with the resource for as long and refuses a
 * request for another one (see {@link PermitConflict}).
 */
export type PermitShape = { readonly limit: number } | { readonly mode: PermitMode };

/** What a store is asked to grant: one permit of `ttl` ms on `key`, a lease of its own named by `token`. */
export interface PermitRequest {
  /** The resource key as the user wrote it (the store adds its prefix). */
  readonly key: string;
  /** A fresh random token that names this permit: it releases and extends this permit only. */
  readonly token: string;
  /** Lease length of this permit in ms. */
  readonly ttl: number;
  /** How the resource shares its permits; see {@link PermitShape}. */
  readonly shape: PermitShape;
  /** Whether to grant the resource's next fence with the permit: above every fence granted for it before. */
  readonly fencing: boolean;
  /** Who takes the permit (the manager's holder record: host, pid, label, time; never the token). */
  readonly holder?: string;
  /**
   * Set when the caller waits if refused: the refusal gives it a place in the resource's line (or keeps the
   * one it has), so that freed permits go to the line in its order. `ttl`: how long, in ms, its place is worth
   * keeping (the rest of its wait). Without it a refused caller takes no place. `direct`: the caller waits with
   * `watch(key, since, token)` and gives its place up with `leaveLine` whenever it stops waiting without a
   * permit, so a release may grant it the permit directly (`takeGrant`) instead of reserving one for it.
   */
  readonly waiting?: { readonly ttl: number; readonly direct?: boolean };
}

/** A permit was granted to the request's token (with the resource's next fence when asked). */
export interface PermitGrant {
  readonly acquired: true;
  readonly fence?: number;
}

/** No permit now: the resource is full for this request, or others stand before it in the line. */
export interface PermitRefusal {
  readonly acquired: false;
  /**
   * In ms, how soon the store may have a permit for this request without a release notice: the soonest
   * end of a permit, of a reservation for a waiter first in line, or of a mutex lease on the key; `undefined`
   * when nothing it knows will end by itself. A waiter sleeps no longer than this (a crashed holder sends
   * no notice).
   */
  readonly remainingTtl: number | undefined;
  /** How many places stand before this request in the line when it has one (0: it is next), else absent. */
  readonly ahead?: number;
}

/** The resource is in use with another shape than the request's; nothing was granted, no place taken. */
export interface PermitConflict {
  readonly acquired: false;
  /** What the resource is in use as: the limit of a semaphore, or a readers-writer lock. */
  readonly inUseAs: number | 'read-write';
}

/** The answer to a permit request. */
export type PermitResult = PermitGrant | PermitRefusal | PermitConflict;

/** One live permit of a resource as `inspect` shows it; never its token. */
export interface PermitHolderState {
  /** Its mode, on a readers-writer resource. */
  readonly mode?: PermitMode;
  /** Its remaining lease in ms. */
  readonly remainingTtl: number;
  /** The fence it was granted with, when fencing was on. */
  readonly fence?: number;
  /** The `holder` text given with its request (as stored, uninterpreted). */
  readonly holder?: string;
}

/** What a store knows about a resource's permits, never a token. */
export interface PermitState {
  /** Whether at least one permit is held. */
  readonly held: boolean;
  /** How many permits are held. */
  readonly holders: number;
  /** The semaphore's limit, while the resource is in use as one. */
  readonly limit?: number;
  /** On a readers-writer resource in use: `write` while a writer holds it, else `read`. */
  readonly mode?: PermitMode;
  /** How many callers stand in the resource's line. */
  readonly waiting: number;
  /** The last fence granted for this resource (to a permit or a mutex lease of the same key). */
  readonly fence?: number;
  /** The live permits, longest-lived last. */
  readonly permits: readonly PermitHolderState[];
}

/**
 * The storage of N-holder semaphores and readers-writer locks. Each permit is a lease of its own (token,
 * expiry, token-checked release and extend); a permit that is never released ends by its TTL. A mutex lease
 * (`LockStore.acquire`) on the same key counts as an exclusive holder: no permit is granted beside it.
 *
 * Waiting: a refused request with `waiting` takes a place in the resource's line. A freed permit goes to the
 * line in order: the first place that fits is reserved for the store's `handoffWindow` and its process is told
 * by a release notice; a caller behind a place that does not fit waits behind it (so a waiting writer is not
 * overtaken by readers that come after it, and readers queued before a writer go in together before it).
 * A reserved waiter that does not come back within the window loses its place. A store may instead grant the
 * permit to a place whose request asked for it (`waiting.direct`) in the release itself, and tell only that
 * waiter (`watch` with its token, `takeGrant`).
 */
export interface PermitStore {
  /** Grants a permit if the request fits beside the holders and every place before it in the line. */
  acquire(request: PermitRequest): Promise<PermitResult>;
  /** Ends the permit `token` holds, and calls the line; `false` when it was gone (expired or never granted). */
  release(key: string, token: string): Promise<boolean>;
  /** Gives up the waiting place of `token` (a waiter that stops waiting), and calls those it held back. */
  leaveLine(key: string, token: string): Promise<void>;
  /** Sets the permit of `token` to `ttl` ms while it is live; never re-creates one that ended. */
  extend(key: string, token: string, ttl: number): Promise<boolean>;
  /** Renews many permits; each entry is the outcome of `extend` or the error it met. */
  extendMany(renewals: readonly LeaseRenewal[]): Promise<Array<boolean | Error>>;
  /** Reads a resource's permits (count, limit, mode, holder records); never a token. */
  inspect(key: string): Promise<PermitState>;
  /**
   * Starts listening for release notices of `key` (`since`: as `LockStore.watch`); with `token`, for that
   * waiter, whose watch a notice of a permit granted to it directly wakes alone (see `takeGrant`).
   */
  watch(key: string, since?: number, token?: string): Promise<ReleaseWatch>;
  /**
   * The permit a release granted straight to `token`'s waiting request on `key` (its place's offer), once: its
   * waiter holds it from then on, for its ttl counted from `sentAt`. A store whose releases grant none leaves
   * it out; its waiters ask again when woken.
   */
  takeGrant?(key: string, token: string): DirectGrant | undefined;
  /** For how many ms a freed permit stays reserved for the waiter first in line. */
  readonly handoffWindow: number;
  /** Frees what the store owns; never a client the user passed in. */
  close(): Promise<void>;
}
