import { performance } from 'node:perf_hooks';
import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import { Acquirer, type Acquisition, type AcquirerParts, type Attempt, type Refusal } from '../waiting/acquirer.js';
import type { LateGrant } from '../waiting/late-grant.js';
import { LocalQueue } from '../waiting/local-queue.js';
import type { ReleaseWatch } from '../../interfaces/lease.interface.js';
import type { DirectGrant } from '../../interfaces/waiting-line.interface.js';
import type { PermitLeaseStore } from './permit-lease-store.js';

/** What a permit acquirer works with: an acquirer's parts, over the permits of the manager's store. */
export interface PermitAcquirerParts extends AcquirerParts {
  readonly store: PermitLeaseStore;
}

/**
 * The waiting policy of permits: the acquirer's, with one difference. Several permits of a key may be held
 * at once, so the store's line orders the waiters, not a local queue: every refused request that may wait
 * keeps a place of its own (its token's), sleeps on a release watch of its own with its backoff, bounded by
 * the refusal's `remainingTtl` (a crashed holder sends no notice), and asks again, unless a release granted
 * its place the permit directly (the store's `takeGrant`: its notice wakes that waiter alone); it gives its
 * place up when it stops waiting without a permit (timeout, shutdown, failure, also of its first request),
 * which also ends a permit granted to it meanwhile. Late grants are given back and asked for again as for a
 * mutex.
 */
export class PermitAcquirer extends Acquirer {
  private readonly permits: PermitLeaseStore;
  /** The queue of one of each waiter, for the shutdown to wake them. */
  private readonly waiters = new Set<LocalQueue>();
  /** How many waiters each key has here. */
  private readonly waitingPerKey = new Map<string, number>();

  constructor(parts: PermitAcquirerParts) {
    super(parts);
    this.permits = parts.store;
  }

  protected override async waitAfterRefusal(acquisition: Acquisition, refused: Refusal): Promise<Attempt> {
    const { key } = acquisition;
    // a queue of one, never shared: it carries this waiter's release watch
    const own = new LocalQueue();
    this.waiters.add(own);
    this.waitingPerKey.set(key, (this.waitingPerKey.get(key) ?? 0) + 1);
    try {
      return await this.waitAsHead(acquisition, own, refused);
    } finally {
      this.waiters.delete(own);
      const left = (this.waitingPerKey.get(key) ?? 1) - 1;
      if (left > 0) this.waitingPerKey.set(key, left);
      else this.waitingPerKey.delete(key);
      void own.watch?.then(
        (watch) => watch.close(),
        () => undefined,
      );
    }
  }

  /**
   * Gives up the place the acquisition's requests took in the line, and with it a permit a release granted that
   * place meanwhile: left there, the place would hold back every waiter behind it, and a release would grant it a
   * permit nobody holds, for the offer's ttl. Also after a first request that failed (the store may have taken
   * it) or went unanswered: then once more after its answer came, since its script may make the place after a
   * leaving sent now.
   */
  protected override gaveUp(acquisition: Acquisition, error?: unknown): void {
    // it took no place: it could not wait, or its shape disagreed with the key's
    if (acquisition.settings.wait === 0 || error instanceof LockConfigurationError) return;
    const { key, token, unanswered } = acquisition;
    const leave = (): void => void this.shutdown.track(this.permits.leavePlace(key, token)).catch(() => undefined);
    leave();
    void unanswered?.then(leave);
  }

  /** Each waiter has a watch of its own, which the notice of a permit granted straight to it wakes alone. */
  protected override openWatch(acquisition: Acquisition, since: number | undefined): Promise<ReleaseWatch> {
    return this.permits.watchFor(acquisition.key, acquisition.token, since);
  }

  /**
   * A permit's place in the line and its release watch are its token's, so it cannot ask with another: after a
   * failed give-back it asks no more (the failed release, applied later, would end the permit a next ask was
   * granted) and ends as a late grant, and its permit is released in the background while it could be held.
   */
  protected override leaveToken(acquisition: Acquisition, late: LateGrant): void {
    acquisition.leftBehind = true;
    this.undoLostGrant(late.key, acquisition.token, performance.now() + late.ttl);
  }

  protected override takeGrant(key: string, token: string): DirectGrant | undefined {
    return this.permits.takeGrant(key, token);
  }

  /** Whether a waiter of this process waits for a permit of `key` now. */
  waitsFor(key: string): boolean {
    return this.waitingPerKey.has(key);
  }

  /** Wakes every waiter (the shutdown began: each gives up its place and is refused). */
  wakeWaiters(): void {
    for (const queue of this.waiters) queue.wake();
  }
}
