import { performance } from 'node:perf_hooks';
import { LockLostError } from '../errors/lock-lost.error.js';
import { LockNotAcquiredError } from '../errors/lock-not-acquired.error.js';
import { LockStoreError } from '../errors/lock-store.error.js';
import type { LockLogger, LockOptions } from '../interfaces/lock-options.interface.js';
import { printable } from '../utils/printable.js';
import { Leadership, type LeaderLease } from './leadership.js';
import type {
  LeadershipEventBase,
  LeadershipEventMap,
  LeadershipLostEvent,
  ResignationCause,
} from './leadership-events.js';
import { leaderKey } from './leader-key.js';

/** What a campaign needs from its manager. */
export interface CampaignHost {
  /** Takes the leader's lease (the manager's `acquire`: renewed, signalled when lost, drained at shutdown). */
  acquire(key: string, options: LockOptions): Promise<LeaderLease>;
  emit<E extends keyof LeadershipEventMap>(event: E, payload: LeadershipEventMap[E]): void;
  readonly logger?: LockLogger;
}

/** What one campaign is for, checked. */
export interface CampaignPlan {
  readonly name: string;
  readonly fn: (leadership: Leadership) => unknown;
  /** The lease's ttl, in ms. */
  readonly ttl: number;
  /** The pause before campaigning again after a term ended or the store failed, in ms. */
  readonly backoff: number;
}

/** The term this instance holds. */
interface Term {
  readonly leadership: Leadership;
  readonly lock: LeaderLease;
  readonly since: number;
  lost: boolean;
}

/**
 * One instance's campaign for one leadership, until stopped: it asks for the leader's lease (fenced, renewed),
 * waiting as long as a ttl each time, and asks again while another instance leads. Won, it runs
 * the function with the term; when the function returns or throws it resigns (releases the lease, so a follower
 * takes over at once), rests for the back-off and campaigns again. A lost lease aborts the term's signal at
 * once; the next campaign starts when the function has returned. Nothing here ever rejects.
 */
export class Campaign {
  private readonly key: string;
  private readonly lockOptions: LockOptions;
  private stopping?: 'stopped' | 'shutdown';
  private term?: Term;
  /** The current term's run, from its grant until its lease was released. */
  private serving?: Promise<unknown>;
  /** Ends the back-off in progress at once. */
  private interrupt?: () => void;

  constructor(
    private readonly plan: CampaignPlan,
    private readonly host: CampaignHost,
  ) {
    this.key = leaderKey(plan.name);
    this.lockOptions = {
      ttl: plan.ttl,
      wait: plan.ttl,
      fencing: true,
      autoRenew: true,
      label: this.key,
      metricKey: this.key,
    };
    void this.run().catch((error: unknown) => this.report('the campaign failed', error));
  }

  /** The term this instance holds right now, if it leads. */
  get leadership(): Leadership | undefined {
    return this.term?.leadership;
  }

  /** Whether this instance leads right now (its term has not ended and its lease is valid). */
  get isLeader(): boolean {
    return this.term?.leadership.isLeader ?? false;
  }

  /**
   * Stops campaigning and resigns: the term's signal aborts (reason `resigned`), and once its function has
   * returned the lease is released. Resolves then, at once when this instance does not lead (an ask on its way
   * gives back what it gets).
   */
  async stop(cause: 'stopped' | 'shutdown'): Promise<void> {
    this.stopping ??= cause;
    this.interrupt?.();
    this.term?.leadership.end(new LockLostError(this.key, 'resigned'));
    await this.serving;
  }

  private async run(): Promise<void> {
    while (!this.stopping) {
      const lock = await this.win();
      if (!lock) return;
      if (this.stopping) {
        await lock.release().catch(() => false);
        return;
      }
      this.serving = this.serve(lock);
      const ended = await this.serving;
      // after a loss another instance leads, or the store is down: asking again finds out which
      if (ended !== 'lost') await this.pause(this.plan.backoff);
    }
  }

  /**
   * Asks for the lease until it is granted (the lock) or the campaign is stopped (`undefined`). Each ask waits
   * up to a ttl as any waiter does (release notices, the store's line, sleeps bounded by the leader's lease),
   * so a follower takes over at once after a resignation and within the ttl after a crash.
   */
  private async win(): Promise<LeaderLease | undefined> {
    while (!this.stopping) {
      try {
        const lock = await this.host.acquire(this.key, this.lockOptions);
        if (!this.stopping) return lock;
        await lock.release().catch(() => false);
      } catch (error) {
        if (this.stopping) break;
        if (error instanceof LockNotAcquiredError) continue;
        // a store failure was reported (and logged) by the manager; anything else is logged here
        if (!(error instanceof LockStoreError)) this.report('asking for the lease failed', error);
        await this.pause(this.plan.backoff);
      }
    }
    return undefined;
  }

  /** Rests for `ms` (unless stopped meanwhile). */
  private pause(ms: number): Promise<void> {
    if (this.stopping || ms <= 0) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.interrupt = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      this.interrupt = done;
    });
  }

  /** Runs the function for the term `lock` won, then resigns unless the term was lost. */
  private async serve(lock: LeaderLease): Promise<ResignationCause | 'lost'> {
    const { name } = this.plan;
    const leadership = new Leadership(name, lock);
    const term: Term = { leadership, lock, since: performance.now(), lost: false };
    this.term = term;
    const onLoss = (): void => this.lose(term);
    lock.signal.addEventListener('abort', onLoss, { once: true });
    this.host.emit('elected', { ...this.about(leadership), ttl: lock.ttl });
    this.host.logger?.log?.(printable(`Leadership "${name}": this instance leads, term ${leadership.term}.`));
    let cause: ResignationCause = 'returned';
    try {
      await this.plan.fn(leadership);
    } catch (error) {
      cause = 'threw';
      this.report(`the leader's function threw in term ${leadership.term}; it resigns and campaigns again`, error);
    }
    lock.signal.removeEventListener('abort', onLoss);
    this.term = undefined;
    if (!term.lost) leadership.end(new LockLostError(this.key, 'resigned'));
    // a failed release was reported as a store error: the lease then ends by its ttl
    await lock.release().catch(() => false);
    // the release finds a loss no renewal had seen yet
    this.lose(term);
    if (term.lost) return 'lost';
    const resigned = this.stopping ?? cause;
    this.host.emit('resigned', {
      ...this.about(leadership),
      cause: resigned,
      duration: performance.now() - term.since,
    });
    return resigned;
  }

  /** The term's lease was lost (if it was: a shutdown's request to stop is no loss): the term ends, once. */
  private lose(term: Term): void {
    const error = term.lock.loss;
    if (!error || term.lost) return;
    term.lost = true;
    term.leadership.end(error);
    this.host.emit('leadership-lost', {
      ...this.about(term.leadership),
      reason: error.reason as LeadershipLostEvent['reason'],
      error,
      duration: performance.now() - term.since,
    });
  }

  /** What every event of `leadership` tells. */
  private about(leadership: Leadership): LeadershipEventBase {
    return { name: this.plan.name, key: this.key, keyTemplate: this.key, term: leadership.term };
  }

  private report(what: string, error: unknown): void {
    const detail = error instanceof Error ? (error.stack ?? `${error.name}: ${error.message}`) : String(error);
    try {
      this.host.logger?.error(printable(`Leadership "${this.plan.name}": ${what}: ${detail}`));
    } catch {
      // a logger that throws must not stop the campaign
    }
  }
}
