import { performance } from 'node:perf_hooks';
import { withKeyTemplate } from '../errors/lock.error.js';
import { LockLostError, type LockLostReason } from '../errors/lock-lost.error.js';
import { LockStoreError } from '../errors/lock-store.error.js';
import type { LeaseLimits } from '../interfaces/lease-limits.interface.js';
import type { LockStore } from '../interfaces/lock-store.interface.js';
import type { LockRevoking } from '../interfaces/lock-listing.interface.js';
import type { WaitingLine } from '../interfaces/waiting-line.interface.js';
import type { LockObserver } from './events/lock-observer.js';
import { checkTtlForStore } from '../options/lease-bounds.js';
import { validateTtl, type LockSettings } from '../options/lock-settings.js';
import { acquireRequest } from './waiting/acquire-request.js';
import type { HandOverOffer } from './waiting/hand-over-offer.js';
import { LeasesByKey, type HeldLeases } from './held-leases.js';
import type { HoldTimes } from './hold-times.js';
import { LeaseRenewer } from './lease-renewer.js';
import type { LocalQueue } from './waiting/local-queue.js';
import { clockDrift, Lock, type LeaseController } from './lock.js';
import type { ShutdownGate } from './shutdown-gate.js';
import { raceDeadline } from '../utils/deadline.js';
import { retryUntil } from '../utils/retry-until.js';

/** What a lease book works with; its manager owns each part and shares the queues and the gate with its acquirer. */
export interface LeaseBookParts {
  readonly store: LockStore;
  readonly observer: LockObserver;
  /** The local waiters per key: a release wakes them, and hands its lease to the head's offer. */
  readonly queues: ReadonlyMap<string, LocalQueue>;
  readonly shutdown: ShutdownGate;
  /** Where each released lease's hold time is counted, for `retryAfter` estimates. */
  readonly holdTimes: HoldTimes;
  /** How the held leases are kept: one per key (a mutex, by default) or several (permits). */
  readonly held?: HeldLeases;
  /** Whether an acquisition of this process waits for `key` now. @default a local queue of the key exists */
  readonly waitsHere?: (key: string) => boolean;
}

/** A lease the store granted to `token` from a request sent at `sentAt`, with the settings it was asked with. */
export interface Grant {
  readonly key: string;
  readonly token: string;
  readonly settings: LockSettings;
  readonly fence: number | undefined;
  readonly sentAt: number;
}

/** How a release ends its lease in the store. */
type Ending =
  /** the key is kept `keptFor` more ms (token-checked), for `holdAtLeast` */
  | { readonly way: 'keep'; readonly keptFor: number }
  /** released and, in the same store call, granted to the local waiter that made `offer` */
  | { readonly way: 'hand-over'; readonly offer: HandOverOffer; readonly line: WaitingLine }
  /** deleted */
  | { readonly way: 'delete' };

/** The common ending, made once: a release is the uncontended path. */
const DELETE: Ending = { way: 'delete' };

/**
 * The leases a manager holds, one per key: grants them a renewal, extends and releases them (a release may
 * keep the key a while, or hand it to the next local waiter in the same store call), reports how each ends
 * (one `released` or `lost`), and drains them at shutdown, never ending one its holder has not let go. Every
 * `Lock` it grants calls back here.
 */
export class LeaseBook implements LeaseController {
  private readonly held: HeldLeases;
  private readonly renewer: LeaseRenewer;
  private readonly store: LockStore;
  /** The store's line of waiting processes, when it keeps one: a release may hand its lease over in it. */
  private readonly line?: WaitingLine;
  private readonly limits?: LeaseLimits;
  /** The store's forced releases, when it offers them: a lease it ended is lost as `revoked`. */
  private readonly revoking?: LockRevoking;
  private readonly observer: LockObserver;
  private readonly queues: ReadonlyMap<string, LocalQueue>;
  private readonly shutdown: ShutdownGate;
  private readonly holdTimes: HoldTimes;
  /** Called whenever a lease stops being held, for the shutdown (`emptied`). */
  private readonly releaseListeners = new Set<() => void>();
  private readonly waitsHere: (key: string) => boolean;

  constructor({ store, observer, queues, shutdown, holdTimes, held, waitsHere }: LeaseBookParts) {
    this.held = held ?? new LeasesByKey();
    this.waitsHere = waitsHere ?? ((key) => queues.has(key));
    this.store = store;
    this.line = store.capabilities?.line;
    this.limits = store.capabilities?.limits;
    this.observer = observer;
    this.queues = queues;
    this.shutdown = shutdown;
    this.holdTimes = holdTimes;
    this.revoking = store.capabilities?.revoking;
    this.renewer = new LeaseRenewer(store, (lock, reason, cause) => this.renewalLost(lock, reason, cause), {
      renewed: (lock) => observer.renewed(lock),
      failed: (lock, error) => observer.storeError('renew', lock.key, error, lock),
    });
  }

  /** Number of leases held right now. */
  get size(): number {
    return this.held.size;
  }

  /** The lease held on `key` in this process that keeps every other acquisition of it out, if any. */
  holderOf(key: string): Lock | undefined {
    return this.held.excluderOf(key);
  }

  /** Whether `lock` is held by this book. */
  holds(lock: Lock): boolean {
    return this.held.has(lock);
  }

  /** A lease whose validity has passed is reported lost now, not at the renewal timer's next run. */
  overdue(lock: Lock): void {
    this.renewer.loseIfOverdue(lock);
  }

  /** The share of a `ttl` ms lease kept back for clock drift: the store's own rule, else the default. */
  drift(ttl: number): number {
    return this.limits?.clockDrift?.(ttl) ?? clockDrift(ttl);
  }

  /** Starts holding a lease the store granted, renewed when its settings say so. */
  grant({ key, token, settings, fence, sentAt }: Grant): Lock {
    const lock = new Lock({ key, token, ttl: settings.ttl, fence, sentAt }, this);
    if (settings.shape) lock.shape = settings.shape;
    this.held.add(lock);
    this.renewer.add(lock, settings.autoRenew ? 'renew' : 'watch');
    return lock;
  }

  /** Sets `lock` to `ttl` ms from now, for `Lock.extend`. */
  async extend(lock: Lock, ttl: number): Promise<void> {
    if (ttl !== lock.ttl) {
      const checked = validateTtl('ttl', ttl);
      checkTtlForStore(this.store, checked, this.drift(checked), 'ttl');
    }
    // a renewal on its way with the old ttl, applied after this extend on a store that spreads its calls over a
    // pool, would shorten the lease in the store below the validity the holder is told: it goes first
    const renewal = this.renewer.renewalOnItsWay(lock);
    if (renewal) {
      await answeredWithin(renewal, lock.validUntil - performance.now());
      // released or lost meanwhile: the extension is not sent (it would report a released lease lost)
      if (lock.isReleased) throw new LockLostError(lock.key, 'released');
      if (lock.loss) throw lock.loss;
    }
    const sentAt = performance.now();
    let extended: boolean;
    try {
      extended = await this.store.extend(lock.key, lock.token, ttl);
    } catch (error) {
      // the store may have applied it: an extension to less than the validity left ends the lease first
      lock.mayHaveRenewed(sentAt, ttl);
      this.renewer.revalidated(lock, sentAt);
      const failure = error instanceof LockStoreError ? error : new LockStoreError('extend', lock.key, error);
      this.observer.storeError('extend', lock.key, failure, lock);
      throw failure;
    }
    // lose() gives nothing only when the lease was lost before: then that loss is the answer
    if (!extended) throw (this.lose(lock, await this.whyTaken(lock)) ?? lock.loss) as LockLostError;
    if (lock.loss) {
      // lost while the extension was on its way (its validity ran out): its holder was told, so it stays lost,
      // and the key it extended is given back, token-checked
      this.shutdown.track(this.store.release(lock.key, lock.token)).catch(() => undefined);
      throw lock.loss;
    }
    lock.renewed(sentAt, ttl);
    this.renewer.revalidated(lock, sentAt);
    this.observer.extended(lock, ttl);
  }

  /** Ends `lock` in the store, for `Lock.release`; `false` when the store no longer had it. */
  async release(lock: Lock, keepFor?: number): Promise<boolean> {
    const renewal = this.renewer.renewalOnItsWay(lock);
    this.forget(lock);
    let ending = this.endingOf(lock, keepFor);
    let released: boolean;
    // counted: a shutdown closes the store only once every release it did not make itself is answered
    this.shutdown.enter();
    try {
      if (ending.way === 'keep' && renewal) ending = await keptAfter(renewal, ending.keptFor, lock.validUntil);
      released = await this.endInStore(lock, ending);
    } catch (error) {
      if (ending.way !== 'keep') this.retryRelease(lock);
      throw this.releaseFailed(lock, error);
    } finally {
      this.shutdown.leave();
      // a waiter that was not handed the lease (or whose hand-over failed) tries by itself, with its token:
      // a grant whose reply was lost is granted again to the same token
      if (ending.way === 'hand-over') ending.offer.settle(undefined);
      this.queues.get(lock.key)?.wake();
    }
    // the store no longer had our token: the lease ended before its holder was done, and the holder hears it
    if (!released) this.lose(lock, performance.now() >= lock.validUntil ? 'expired' : await this.whyTaken(lock));
    else this.endHold(lock, ending.way === 'keep' ? ending.keptFor : undefined);
    // a waiter of this process the release let in (handed the lease, granted a permit in the store's reply)
    // is the hand-off's path; the releaser's next step (often: to ask again) is not, and goes after it
    if (released && this.waitsHere(lock.key)) await afterWokenWaiters();
    return released;
  }

  /**
   * Stops holding `lock` (when it is the key's current lease), without reporting it as released or lost,
   * and tells a draining shutdown.
   */
  forget(lock: Lock): void {
    this.renewer.remove(lock);
    this.held.delete(lock);
    // a copy: a listener removes itself (no copy, and no work, while no shutdown drains)
    if (this.releaseListeners.size > 0) for (const listener of [...this.releaseListeners]) listener();
  }

  /** Stops every renewal for good (the shutdown is over: no lease is held). */
  stopRenewals(): void {
    this.renewer.stop();
  }

  /**
   * The shutdown's drain: waits up to `timeout` ms for the holders to let their leases go, then asks each
   * holder still holding one to stop (its signal aborts with reason `shutdown`) and keeps its lease, renewed
   * if it was. A lease its holder has not let go is never ended here: only its release, its loss, or the
   * end of the process ends it.
   */
  async drain(timeout: number): Promise<void> {
    await this.emptied(performance.now() + timeout);
    for (const lock of [...this.held]) {
      const request = lock.askToStop();
      if (!request) continue;
      withKeyTemplate(request, this.observer.keyTemplateOf(lock));
      this.observer.outlivedDrain(lock, timeout);
    }
  }

  /** Resolves once no lease is held, or at `deadline` (a `performance.now()` time) if that comes first. */
  emptied(deadline = Infinity): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.releaseListeners.delete(check);
        resolve();
      };
      const check = (): void => {
        if (this.held.size === 0) done();
      };
      const timer = deadline === Infinity ? undefined : setTimeout(done, Math.max(0, deadline - performance.now()));
      this.releaseListeners.add(check);
      check();
    });
  }

  /** How `lock` is to end: kept for `keepFor` ms, handed to the waiter next in this process, or deleted. */
  private endingOf(lock: Lock, keepFor: number | undefined): Ending {
    // a lease kept for holdAtLeast is not handed on
    if (keepFor !== undefined && keepFor > 0) return { way: 'keep', keptFor: keepFor };
    const { line } = this;
    // nor one released while the service shuts down
    if (!line || this.shutdown.begun) return DELETE;
    const offer = this.queues.get(lock.key)?.takeOffer();
    return offer ? { way: 'hand-over', offer, line } : DELETE;
  }

  /** The store call that ends `lock` as `ending` says; `false` when the store no longer had our token. */
  private endInStore(lock: Lock, ending: Ending): Promise<boolean> {
    switch (ending.way) {
      case 'keep':
        return this.store.extend(lock.key, lock.token, ending.keptFor);
      case 'hand-over':
        return this.handOver(lock, ending.offer, ending.line);
      case 'delete':
        return this.store.release(lock.key, lock.token);
    }
  }

  /**
   * Releases `lock` and, in the same store call, grants its key to the local waiter that made `offer`,
   * unless another process waits for it (then it is a plain release, and the waiter tries as usual).
   */
  private async handOver(lock: Lock, offer: HandOverOffer, line: WaitingLine): Promise<boolean> {
    const { token, settings, trace } = offer;
    trace.attempts++;
    const sentAt = performance.now();
    const result = await line.handOver(lock.key, lock.token, acquireRequest(lock.key, token, settings));
    if (!result.handedOver) return result.released;
    // a hand-over that was on its way when the shutdown began: the waiter is refused like any other
    if (this.shutdown.begun) await this.shutdown.refuseGrant(lock.key, token);
    else offer.settle(this.grant({ key: lock.key, token, settings, fence: result.fence, sentAt }));
    return result.released;
  }

  /**
   * Tries a failed release again in the background, token-checked, until the lease would have ended anyway: a
   * store that is back after a blip (a database restart, a dropped connection) frees the key at once, not at
   * the end of the ttl. Stops when the shutdown begins (the store is about to close; the lease ends by its ttl).
   */
  private retryRelease(lock: Lock): void {
    void retryUntil(
      () => this.store.release(lock.key, lock.token),
      lock.validUntil,
      () => this.shutdown.begun,
    );
  }

  /**
   * A release the store could not be told of: a `store-error`, and then the lease's `released` all the same
   * (its holder let go, and the lease ends by a retried release or its ttl), so that it still ends with one
   * terminal event.
   */
  private releaseFailed(lock: Lock, error: unknown): LockStoreError {
    const failure = error instanceof LockStoreError ? error : new LockStoreError('release', lock.key, error);
    this.observer.storeError('release', lock.key, failure, lock);
    this.observer.released(lock);
    return failure;
  }

  /** A lease was released: its hold (kept part included) counts towards the usual hold of its template. */
  private endHold(lock: Lock, keptFor: number | undefined): void {
    const template = this.observer.keyTemplateOf(lock);
    // a direct call without metricKey has no template to count towards: no clock read for it
    const heldFor = template === undefined ? undefined : this.observer.heldFor(lock);
    if (template !== undefined && heldFor !== undefined) this.holdTimes.record(template, heldFor + (keptFor ?? 0));
    this.observer.released(lock, keptFor);
  }

  /** A lease the renewer lost; one the store no longer held may have been force-released, which is asked first. */
  private renewalLost(lock: Lock, reason: LockLostReason, cause?: unknown): void {
    if (reason !== 'taken' || !this.revoking) {
      this.lose(lock, reason, cause);
      return;
    }
    void this.whyTaken(lock).then((why) => this.lose(lock, why));
  }

  /** Why the store no longer holds `lock`: `revoked` by an operator's forced release, else `taken`. */
  private async whyTaken(lock: Lock): Promise<LockLostReason> {
    if (!this.revoking) return 'taken';
    try {
      return (await this.revoking.wasRevoked(lock.key, lock.token)) ? 'revoked' : 'taken';
    } catch {
      // the store failing now says nothing about why the lease ended
      return 'taken';
    }
  }

  /** The lease ended before its holder released it: its signal aborts, and the key's local waiters wake. */
  private lose(lock: Lock, reason: LockLostReason, cause?: unknown) {
    this.forget(lock);
    const error = lock.lose(reason, cause);
    if (error) {
      withKeyTemplate(error, this.observer.keyTemplateOf(lock));
      this.observer.lost(lock, reason, error);
    }
    this.queues.get(lock.key)?.wake();
    return error;
  }
}

/**
 * Resolves once the promise reactions queued by now, and those they queue, have run: a woken waiter's way
 * from its wake-up to its caller is all promise reactions (no I/O), so it reaches its caller first.
 */
function afterWokenWaiters(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * The keep of a lease whose renewal is on its way, sent once that renewal is answered: applied after the keep,
 * on a store that spreads calls over a pool, it would give the key a whole ttl again. Waits no longer than the
 * keep or the lease's validity (`validUntil`, a `performance.now()` time), whichever ends first, and keeps only
 * what is left of `keptFor` then (nothing left: the key is deleted).
 */
async function keptAfter(renewal: Promise<unknown>, keptFor: number, validUntil: number): Promise<Ending> {
  const keptUntil = performance.now() + keptFor;
  await answeredWithin(renewal, Math.min(keptFor, validUntil - performance.now()));
  const left = Math.floor(keptUntil - performance.now());
  return left > 0 ? { way: 'keep', keptFor: left } : DELETE;
}

/** Waits until `renewal` is answered (a failure counts) or `ms` ms have passed, whichever comes first. */
async function answeredWithin(renewal: Promise<unknown>, ms: number): Promise<void> {
  await raceDeadline(
    renewal.catch(() => undefined),
    Math.max(0, ms),
    () => undefined,
  );
}
