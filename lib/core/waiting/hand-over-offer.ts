import type { AcquireTrace } from '../events/lock-observer.js';
import type { Lock } from '../lock.js';
import type { LockSettings } from '../../options/lock-settings.js';

/**
 * A local waiter's standing request to be handed the lease by the local holder's release, in the same
 * store call (one round trip instead of a release and then an acquire). Only the head of a key's local
 * queue makes one, and only while the holder is in this process.
 */
export class HandOverOffer {
  /** Set once a releaser took the offer; resolves with the lease it handed over, or `undefined`. */
  outcome?: Promise<Lock | undefined>;
  private resolve?: (lock: Lock | undefined) => void;

  constructor(
    readonly token: string,
    readonly settings: LockSettings,
    readonly trace: AcquireTrace,
  ) {}

  /** Marks the offer taken by a releaser: the waiter now waits for {@link settle}, not for its timer. */
  take(): void {
    this.outcome = new Promise((resolve) => (this.resolve = resolve));
  }

  /** Ends a taken offer with the lease handed over, or `undefined` (the waiter goes on trying itself). */
  settle(lock: Lock | undefined): void {
    this.resolve?.(lock);
    this.resolve = undefined;
  }
}
