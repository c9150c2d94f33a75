import type { HandOverOffer } from './hand-over-offer.js';
import type { ReleaseWatch } from '../../interfaces/lease.interface.js';

interface Waiter {
  readonly turn: Promise<void>;
  readonly start: () => void;
}

/**
 * The waiters of one process for one key, in arrival order. Only the head talks to the store; the rest
 * wait their turn here, so N local waiters cost the store what one does, and none can overtake another.
 * The head's release watch is kept for the next head, so a busy key is subscribed once, not per waiter.
 */
export class LocalQueue {
  private readonly waiters: Waiter[] = [];
  /** The release watch shared by successive heads; closed when the queue empties. */
  watch?: Promise<ReleaseWatch>;
  /** The head's offer to take the lease straight from a local release, while it sleeps. */
  private offer?: HandOverOffer;

  get size(): number {
    return this.waiters.length;
  }

  /** Joins the queue; `turn` resolves when this waiter is at its head. */
  enter(): Waiter {
    let start!: () => void;
    const turn = new Promise<void>((resolve) => (start = resolve));
    const waiter = { turn, start };
    this.waiters.push(waiter);
    if (this.waiters.length === 1) start();
    return waiter;
  }

  /** Leaves the queue (acquired, timed out or failed) and hands the head to the next waiter. */
  leave(waiter: Waiter): void {
    const index = this.waiters.indexOf(waiter);
    if (index < 0) return;
    this.waiters.splice(index, 1);
    if (index === 0) this.waiters[0]?.start();
  }

  /** The head sleeps and would take the lease from a local release: see {@link takeOffer}. */
  standBy(offer: HandOverOffer): void {
    this.offer = offer;
  }

  /** The head woke: its offer, if no releaser took it, lapses. */
  withdraw(offer: HandOverOffer): void {
    if (this.offer === offer) this.offer = undefined;
  }

  /** For a releaser: the head's standing offer, marked taken, or `undefined` when there is none. */
  takeOffer(): HandOverOffer | undefined {
    const offer = this.offer;
    this.offer = undefined;
    offer?.take();
    return offer;
  }

  /** Wakes the head's current wait: a lock on this key was released inside this process. */
  wake(): void {
    void this.watch?.then(
      (watch) => watch.wake(),
      () => undefined,
    );
  }
}
