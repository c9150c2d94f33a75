import { performance } from 'node:perf_hooks';
import type { LockLostReason } from '../errors/lock-lost.error.js';
import type { LockStore } from '../interfaces/lock-store.interface.js';
import type { Lock } from './lock.js';

interface Tracked {
  readonly lock: Lock;
  readonly renew: boolean;
  /** When the next renewal is due (`performance.now()` time). */
  dueAt: number;
  /** Since when renewals have been failing, if they are. */
  failingSince?: number;
  /** The store error the last failing renewal met: the cause of a loss to an unreachable store. */
  lastError?: Error;
  inFlight: boolean;
  /** The store call of the renewal sent for it, while one is on its way. */
  renewal?: Promise<unknown>;
}

/** When an entry next needs the timer: its renewal, or the end of its validity. */
function nextTime(entry: Tracked): number {
  return entry.renew && !entry.inFlight ? Math.min(entry.dueAt, entry.lock.validUntil) : entry.lock.validUntil;
}

/** How many renewals go into one batch. */
const BATCH_SIZE = 500;
/** Pause before retrying a renewal that met a store error. */
const RETRY_DELAY = 100;
/** Timers fire a few ms late on a busy event loop; a check that runs later than this was held up by a stall. */
const TIMER_SLACK = 10;

/** What the scheduler tells about renewals besides losses (for events and metrics). */
export interface RenewalHooks {
  /** A lease was renewed. */
  renewed?(lock: Lock): void;
  /** A renewal met a store error; it is retried until the lease's validity runs out. */
  failed?(lock: Lock, error: Error): void;
}

/**
 * The one renewal scheduler of a store: renews every auto-renewed lease at about a third of its TTL, in
 * pipelined, token-checked batches, and watches every held lease's validity. A lease whose renewal says
 * "not yours", whose renewals keep failing until its validity runs out, or whose renewal only got to run
 * after its validity (an event-loop stall) is reported lost. It never throws from its timer.
 */
export class LeaseRenewer {
  private readonly tracked = new Map<Lock, Tracked>();
  private timer?: NodeJS.Timeout;
  private timerAt = Infinity;
  /** When the armed timer should fire: its time, or the moment it was armed if that time had passed. */
  private timerDue = 0;
  private stopped = false;

  constructor(
    private readonly store: LockStore,
    private readonly onLost: (lock: Lock, reason: LockLostReason, cause?: unknown) => void,
    private readonly hooks: RenewalHooks = {},
  ) {}

  /** Number of leases being watched. */
  get size(): number {
    return this.tracked.size;
  }

  /** Watches a lease until `remove`; with `'renew'` also keeps it alive, with `'watch'` only notices its end. */
  add(lock: Lock, care: 'renew' | 'watch'): void {
    const renew = care === 'renew';
    // a third into the lease's validity, which began when the acquire was sent: a reply that came late
    // (a busy event loop, a burst of acquisitions) must not push the first renewal past the lease's end
    const entry: Tracked = { lock, renew, dueAt: lock.validUntil - (2 * lock.ttl) / 3, inFlight: false };
    this.tracked.set(lock, entry);
    // O(1) on the acquire path: only an earlier deadline than the armed one moves the timer
    this.arm(nextTime(entry));
  }

  /** Stops watching (and renewing) a lease. */
  remove(lock: Lock): void {
    // the timer stays armed (unref'd; its tick finds nothing to do): a process taking one lock after another
    // would otherwise pay a setTimeout and a clearTimeout per lock
    this.tracked.delete(lock);
  }

  /**
   * `lock`'s validity was set anew from `sentAt` (an extension, or a failed one the store may have applied): a
   * shorter one is renewed, and its end noticed, in time.
   */
  revalidated(lock: Lock, sentAt: number): void {
    const entry = this.tracked.get(lock);
    if (!entry) return;
    entry.dueAt = Math.min(entry.dueAt, sentAt + (lock.validUntil - sentAt) / 3);
    this.arm(nextTime(entry));
  }

  /**
   * The renewal of `lock` already sent and not yet answered, if any: a store that spreads calls over several
   * connections (a pool) may apply it after a call sent later, such as the extension that keeps a released key.
   */
  renewalOnItsWay(lock: Lock): Promise<unknown> | undefined {
    return this.tracked.get(lock)?.renewal;
  }

  /** Stops for good: no timer is left behind. */
  stop(): void {
    this.stopped = true;
    this.tracked.clear();
    this.clearTimer();
  }

  private clearTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = Infinity;
  }

  /** Makes sure the timer fires by `at` (a `performance.now()` time). */
  private arm(at: number): void {
    if (this.stopped || at === Infinity || at >= this.timerAt) return;
    clearTimeout(this.timer);
    const now = performance.now();
    this.timerAt = at;
    this.timerDue = Math.max(at, now);
    this.timer = setTimeout(() => this.tick(), Math.max(0, at - now));
    this.timer.unref();
  }

  private tick(): void {
    const dueAt = this.timerDue;
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = performance.now();
    const due: Tracked[] = [];
    let next = Infinity;
    for (const entry of this.tracked.values()) {
      if (now >= entry.lock.validUntil) this.lose(entry, this.reasonForExpiry(entry, dueAt), entry.lastError);
      else if (entry.renew && !entry.inFlight && now + entry.lock.ttl / 6 >= entry.dueAt) {
        // renewing a little early lets leases taken at nearby times share one batch
        entry.inFlight = true;
        due.push(entry);
        next = Math.min(next, entry.lock.validUntil);
      } else next = Math.min(next, nextTime(entry));
    }
    this.arm(next);
    this.sendBatches(due, 0);
  }

  /** Reports `lock` lost now when its validity has passed, as its timer would once it runs. */
  loseIfOverdue(lock: Lock): void {
    const entry = this.tracked.get(lock);
    if (entry && performance.now() >= lock.validUntil) {
      this.lose(entry, this.reasonForExpiry(entry, this.timerDue), entry.lastError);
    }
  }

  /** Sends one batch, then yields to the event loop before the next, so thousands of renewals never block it long. */
  private sendBatches(due: Tracked[], start: number): void {
    if (start >= due.length || this.stopped) return;
    // a lease released while its batch waited is not renewed
    const batch = due.slice(start, start + BATCH_SIZE).filter((entry) => this.tracked.has(entry.lock));
    if (batch.length > 0) void this.renew(batch);
    if (start + BATCH_SIZE < due.length) setImmediate(() => this.sendBatches(due, start + BATCH_SIZE));
  }

  private async renew(batch: Tracked[]): Promise<void> {
    for (const entry of batch) entry.inFlight = true;
    const sentAt = performance.now();
    let outcomes: Array<boolean | Error>;
    try {
      const renewal = this.store.extendMany(
        batch.map(({ lock }) => ({ key: lock.key, token: lock.token, ttl: lock.ttl })),
      );
      for (const entry of batch) entry.renewal = renewal;
      outcomes = await renewal;
    } catch (error) {
      outcomes = batch.map(() => (error instanceof Error ? error : new Error(String(error))));
    }
    const now = performance.now();
    batch.forEach((entry, index) => {
      entry.inFlight = false;
      entry.renewal = undefined;
      if (!this.tracked.has(entry.lock)) return;
      const outcome = outcomes[index];
      if (outcome instanceof Error) this.report(() => this.hooks.failed?.(entry.lock, outcome));
      if (outcome === true) {
        entry.lock.renewed(sentAt, entry.lock.ttl);
        if (now >= entry.lock.validUntil) {
          // answered, but read only after the validity it gives: this process was held up (its timer for the
          // lease's end is overdue, as after a reply that came during a blocked event loop) or the store took
          // longer than the lease to answer
          this.lose(entry, this.timerAt <= now - TIMER_SLACK ? 'stalled' : 'store-unreachable');
          return;
        }
        entry.failingSince = undefined;
        entry.lastError = undefined;
        entry.dueAt = sentAt + entry.lock.ttl / 3;
        this.report(() => this.hooks.renewed?.(entry.lock));
      } else if (outcome === false) {
        this.lose(entry, 'taken');
      } else {
        // the failed renewal may have been applied: after an extension past the ttl, it shortened the lease
        entry.lock.mayHaveRenewed(sentAt, entry.lock.ttl);
        if (now >= entry.lock.validUntil) {
          this.lose(entry, 'store-unreachable', outcome);
        } else {
          entry.failingSince ??= sentAt;
          entry.lastError = outcome;
          entry.dueAt = now + Math.min(RETRY_DELAY, entry.lock.validUntil - now);
        }
      }
    });
    let next = Infinity;
    for (const entry of batch) if (this.tracked.has(entry.lock)) next = Math.min(next, nextTime(entry));
    this.arm(next);
  }

  /** Why a lease reached the end of its validity while we watched it, in a check that was due at `dueAt`. */
  private reasonForExpiry(entry: Tracked, dueAt: number): LockLostReason {
    if (!entry.renew) return 'expired';
    // a renewal that is still unanswered or kept failing: the store is the problem, not this process
    if (entry.inFlight || entry.failingSince !== undefined) return 'store-unreachable';
    // the check was due in time to renew, and ran only after the validity: the event loop was held up
    if (entry.lock.validUntil - dueAt > TIMER_SLACK) return 'stalled';
    // the lease came with too little validity left for the check to run in time: no stall happened
    return 'expired';
  }

  /** Runs a hook; a failing one must not stop the scheduler of every other lease. */
  private report(hook: () => void): void {
    try {
      hook();
    } catch {
      // reported by the hook's own owner; nothing to do here
    }
  }

  private lose(entry: Tracked, reason: LockLostReason, cause?: unknown): void {
    this.tracked.delete(entry.lock);
    try {
      this.onLost(entry.lock, reason, cause);
    } catch {
      // a failing loss handler must not stop the scheduler of every other lease
    }
  }
}
