import { inspect } from 'node:util';
import { performance } from 'node:perf_hooks';
import { LockLostError, type LockLostReason } from '../errors/lock-lost.error.js';
import type { PermitShape } from '../interfaces/permit-store.interface.js';
import { checkSignalOnRead } from '../utils/signal-checked-on-read.js';

/** What a Lock needs from whoever granted it, to extend and release itself. */
export interface LeaseController {
  extend(lock: Lock, ttl: number): Promise<void>;
  release(lock: Lock, keepFor?: number): Promise<boolean>;
  /** The share of a `ttl` ms lease kept back for clock drift (the store's, when it has its own). */
  drift(ttl: number): number;
  /** `lock`'s validity has passed and nobody has noticed yet: reports its loss now. */
  overdue(lock: Lock): void;
}

/** One grant of a lease, as the manager hands it to a new {@link Lock}. */
export interface LeaseGrant {
  /** The resource as the caller named it. */
  readonly key: string;
  /** The random token of this acquisition. */
  readonly token: string;
  /** The lease length in ms. */
  readonly ttl: number;
  /** The fence granted with this lease, when fencing is on. */
  readonly fence: number | undefined;
  /** `performance.now()` taken before the acquire request was sent: the lease counts from then. */
  readonly sentAt: number;
}

/** Safety margin for clock drift between us and the server: 1% of the lease plus 2 ms. */
export function clockDrift(ttl: number): number {
  return Math.floor(ttl * 0.01) + 2;
}

/**
 * A held lease on one resource. Its validity is tracked on the monotonic clock from the moment the
 * request was sent, so wall-clock jumps cannot stretch it. When the lease is lost, `signal` aborts with a
 * {@link LockLostError} that says why; when a shutdown's drain ends while it is held, `signal` aborts with
 * reason `shutdown` and the lease stays held.
 */
export class Lock {
  readonly #token: string;
  readonly #controller: LeaseController;
  /** Made on first use of `signal` (most leases never need one); aborted with `#stopReason`. */
  #abort?: AbortController;
  /** What `signal` aborts with: the loss, or the shutdown's request to stop, whichever came first. */
  #stopReason?: LockLostError;
  #lost?: LockLostError;
  #validUntil: number;
  #released = false;
  /** @internal what the manager's observer keeps about this lease from its grant to its end */
  observed?: object;
  /** @internal for a permit, how its key shares them (set once, at grant); absent for a mutex lease */
  shape?: PermitShape;

  /**
   * Made by the manager that grants the lease, not by application code. Not stripped from the `.d.ts`: a
   * class without its constructor there would look constructible with no arguments.
   * @param grant what the store granted, and when the request for it was sent
   * @param controller the manager that renews and releases it
   */
  constructor(grant: LeaseGrant, controller: LeaseController) {
    this.key = grant.key;
    this.ttl = grant.ttl;
    this.fence = grant.fence;
    this.#token = grant.token;
    this.#controller = controller;
    this.#validUntil = grant.sentAt + grant.ttl - controller.drift(grant.ttl);
  }

  /** The resource as the caller named it. */
  readonly key: string;
  /** The lease length in ms. */
  readonly ttl: number;
  /** The fence granted with this lease, when fencing is on. */
  readonly fence: number | undefined;

  /** The random token that names this acquisition. Keep it out of logs and responses. */
  get token(): string {
    return this.#token;
  }

  /**
   * Aborts with a `LockLostError` when the lease is lost before it is released, or when the application
   * shuts down and its drain ends before the holder released it (reason `shutdown`: the lease is kept).
   */
  get signal(): AbortSignal {
    if (!this.#abort) {
      this.#abort = new AbortController();
      if (this.#stopReason) this.#abort.abort(this.#stopReason);
      // a validity that passed unnoticed (the renewal timer has not run yet) is told to whoever reads it
      else checkSignalOnRead(this.#abort.signal, () => this.#noticeExpiry());
    }
    return this.#abort.signal;
  }

  #noticeExpiry(): void {
    if (!this.#stopReason && !this.#released && performance.now() >= this.#validUntil) this.#controller.overdue(this);
  }

  /** `performance.now()` time until which the lease is certainly ours. */
  get validUntil(): number {
    return this.#validUntil;
  }

  /** Milliseconds the lease is still certainly ours (0 once expired, lost or released). */
  get remainingTime(): number {
    return this.isHeld ? Math.max(0, Math.floor(this.#validUntil - performance.now())) : 0;
  }

  /** Whether the lease is still ours: not released, not lost, within its validity. */
  get isHeld(): boolean {
    return !this.#released && !this.#lost && performance.now() < this.#validUntil;
  }

  /** Whether `release()` has been called. */
  get isReleased(): boolean {
    return this.#released;
  }

  /**
   * Sets the lease to `ttl` ms from now (default: its original length), only if it is still ours.
   * @throws LockLostError when the lease is gone, released or taken (and the signal aborts)
   * @throws LockStoreError when the store fails
   */
  async extend(ttl: number = this.ttl): Promise<void> {
    if (this.#released) throw new LockLostError(this.key, 'released');
    if (this.#lost) throw this.#lost;
    await this.#controller.extend(this, ttl);
  }

  /**
   * Releases the lease if it is still ours. Never throws because the lease already ended: it resolves
   * `false` then (also on a second call), and a loss nobody had noticed yet (the store forgot the lease)
   * aborts the signal with a `LockLostError` of reason `taken`.
   * @param keepFor keep the key for this many ms instead of deleting it (token-checked), e.g. so a job
   *   that finished early is not run again by an instance whose clock is a little behind
   * @throws LockStoreError when the store fails
   */
  release(keepFor?: number): Promise<boolean> {
    // not async: the controller's promise itself, one layer less on every release
    if (this.#released) return Promise.resolve(false);
    this.#released = true;
    return this.#controller.release(this, keepFor);
  }

  /** @internal the lease was renewed: its validity now runs from `sentAt` */
  renewed(sentAt: number, ttl: number): void {
    this.#validUntil = sentAt + ttl - this.#controller.drift(ttl);
  }

  /**
   * @internal a renewal or extension to `ttl` ms sent at `sentAt` failed without telling whether the store
   * applied it: the lease is certainly ours only until the earlier of the two ends (a ttl shorter than the
   * validity left, once applied, ends the key first)
   */
  mayHaveRenewed(sentAt: number, ttl: number): void {
    this.#validUntil = Math.min(this.#validUntil, sentAt + ttl - this.#controller.drift(ttl));
  }

  /** @internal the lease was lost: the loss, once (the signal aborts with it unless it already aborted) */
  lose(reason: LockLostReason, cause?: unknown): LockLostError | undefined {
    if (this.#lost) return undefined;
    this.#lost = new LockLostError(this.key, reason, cause === undefined ? undefined : { cause });
    this.#stop(this.#lost);
    return this.#lost;
  }

  /**
   * @internal the shutdown's drain ended while the lease is held: the signal aborts with reason `shutdown`,
   * once, and the lease stays held; `undefined` when it was released, lost or asked already
   */
  askToStop(): LockLostError | undefined {
    if (this.#released || this.#stopReason) return undefined;
    const request = new LockLostError(this.key, 'shutdown');
    this.#stop(request);
    return request;
  }

  /** @internal the error of the lease's loss, once it was lost (never the shutdown's request to stop) */
  get loss(): LockLostError | undefined {
    return this.#lost;
  }

  #stop(reason: LockLostError): void {
    if (this.#stopReason) return;
    this.#stopReason = reason;
    this.#abort?.abort(reason);
  }

  /** A plain view for logs and JSON: never the token. */
  toJSON(): { key: string; fence?: number; remainingTime: number; isHeld: boolean } {
    return {
      key: this.key,
      ...(this.fence === undefined ? {} : { fence: this.fence }),
      remainingTime: this.remainingTime,
      isHeld: this.isHeld,
    };
  }

  [inspect.custom](): string {
    return `Lock ${inspect(this.toJSON())}`;
  }
}
