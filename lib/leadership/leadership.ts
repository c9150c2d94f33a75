import { inspect } from 'node:util';
import type { LockLostError } from '../errors/lock-lost.error.js';
import { checkSignalOnRead } from '../utils/signal-checked-on-read.js';

/** What a term uses of the leader's lease (a `Lock`, granted with a fence). */
export interface LeaderLease {
  /** The fence granted with the lease: the term. */
  readonly fence: number | undefined;
  /** The lease length in ms. */
  readonly ttl: number;
  /** Aborts when the lease is lost (or the shutdown's drain asks its holder to stop). */
  readonly signal: AbortSignal;
  /** Whether the lease is still certainly held. */
  readonly isHeld: boolean;
  /** The error of the lease's loss, once it was lost. */
  readonly loss: LockLostError | undefined;
  /** Releases the lease if it is still held; `false` when it was not. */
  release(): Promise<boolean>;
}

/**
 * One term of leadership, as the function given to `lead()` (or a `@Leader` method) receives it. `term` is the
 * fence of the leader's lease: it grows from one leader to the next, so a resource that remembers the highest
 * term it has seen and refuses anything lower shuts out a leader that lost its term but has not noticed yet
 * (paused by a garbage collection, a frozen VM, a slow network). `signal` aborts the moment the term ends.
 */
export class Leadership {
  readonly #lock: LeaderLease;
  readonly #abort = new AbortController();

  /**
   * Made by the campaign that won the term, not by application code.
   * @param name the leadership's name
   * @param lock the leader's lease, granted with a fence
   */
  constructor(name: string, lock: LeaderLease) {
    this.name = name;
    this.#lock = lock;
    this.term = lock.fence ?? 0;
    // the lease's own signal tells a validity that passed unnoticed when read, and its loss ends the term
    checkSignalOnRead(this.#abort.signal, () => {
      if (!this.#lock.isHeld) void this.#lock.signal.aborted;
    });
  }

  /** The leadership's name, as given to `lead()` or `@Leader`. */
  readonly name: string;

  /**
   * This term's number: above every term granted for this leadership before (the lease's fence; on etcd, the
   * revision of its grant). Send it with every write to a resource that checks it.
   */
  readonly term: number;

  /**
   * Aborts when the term ends: the lease was lost (its reason: `taken`, `expired`, `stalled`,
   * `store-unreachable`), or this instance resigned (`stop()`, the function returned, the shutdown: reason
   * `resigned`). Its `reason` is a `LockLostError`.
   */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /**
   * Whether this instance still leads, as far as it can tell: the term has not ended and its lease is within
   * its validity. A check, not a guarantee: a pause right after it can outlast the lease (see `term`).
   */
  get isLeader(): boolean {
    return !this.#abort.signal.aborted && this.#lock.isHeld;
  }

  /** @internal the term ended: the signal aborts with `reason`, once */
  end(reason: LockLostError): void {
    if (!this.#abort.signal.aborted) this.#abort.abort(reason);
  }

  /** A plain view for logs and JSON. */
  toJSON(): { name: string; term: number; isLeader: boolean } {
    return { name: this.name, term: this.term, isLeader: this.isLeader };
  }

  [inspect.custom](): string {
    return `Leadership ${inspect(this.toJSON())}`;
  }
}
