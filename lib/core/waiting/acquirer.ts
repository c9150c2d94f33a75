import { performance } from 'node:perf_hooks';
import { isLockError, withKeyTemplate } from '../../errors/lock.error.js';
import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import { LockStoreError } from '../../errors/lock-store.error.js';
import type { AcquireTrace, GivenBackGrant, LockObserver } from '../events/lock-observer.js';
import type { AcquireRequest, AcquireResult, ReleaseWatch } from '../../interfaces/lease.interface.js';
import type { LockStore } from '../../interfaces/lock-store.interface.js';
import type { DirectGrant, WaitingLine } from '../../interfaces/waiting-line.interface.js';
import type { LockSettings } from '../../options/lock-settings.js';
import { backoffDelay, toldWaiterDelay } from '../../utils/backoff.js';
import { raceDeadline } from '../../utils/deadline.js';
import { newToken } from '../../utils/token.js';
import { retryUntil } from '../../utils/retry-until.js';
import { acquireRequest } from './acquire-request.js';
import { AnswerDeadlines, LEAST_ANSWER_TIME } from './answer-deadlines.js';
import { HandOverOffer } from './hand-over-offer.js';
import { lateGrantError, type LateGrant } from './late-grant.js';
import type { LeaseBook } from '../lease-book.js';
import { LocalQueue } from './local-queue.js';
import type { Lock } from '../lock.js';
import { shuttingDownError, type ShutdownGate } from '../shutdown-gate.js';

/** How an acquisition ended: a grant, or a refusal with the holder's remaining lease. */
export type Outcome = { readonly lock: Lock } | { readonly remainingTtl: number | undefined };
/** One try at the store: an outcome, or a late grant given back (`retry`: the wait has time left to ask again). */
export type Attempt = Outcome | GivenBackGrant;

/** One acquisition under way: what each of its store calls and waits needs. */
export interface Acquisition {
  readonly key: string;
  /**
   * The random token every attempt of this acquisition asks with; a new one once a request it left in the
   * store's line was withdrawn (a grant of that request is given back, by its token).
   */
  token: string;
  readonly settings: LockSettings;
  readonly trace: AcquireTrace;
  /** The `performance.now()` time its wait ends. */
  readonly deadline: number;
  /** When its last request to the store was sent. */
  sentAt: number;
  /** Whether the store has answered one of its requests (then the key was held when it was refused). */
  answered: boolean;
  /**
   * Whether its last request left its offer beside its process's place in the store's line, for a release to
   * grant directly (see `firstRequest`).
   */
  offered: boolean;
  /**
   * Whether one of its requests went unanswered past its wait and was left behind (`leaveUnanswered`): a grant
   * it brings is released by the token, so no later request may use that token.
   */
  leftBehind?: boolean;
  /** Settles once the ask left behind (see `leftBehind`) is answered or fails: its effect on the store is known. */
  unanswered?: Promise<void>;
}

/** A waiter's first attempt, refused: when it was sent and answered, and the holder's remaining lease it was told. */
export interface Refusal {
  readonly sentAt: number;
  readonly answeredAt: number;
  readonly remainingTtl: number | undefined;
}

/** What an acquirer works with: parts its manager owns, the queues and the gate shared with the lease book. */
export interface AcquirerParts {
  readonly store: LockStore;
  readonly observer: LockObserver;
  /** Where a grant becomes a held lease, and where a local holder is found. */
  readonly leases: LeaseBook;
  /** The local waiters per key: a key's queue is added with its first waiter and removed after its last. */
  readonly queues: Map<string, LocalQueue>;
  readonly shutdown: ShutdownGate;
}

/**
 * The waiting policy of a manager. The first acquisition of a key in this process asks the store at once;
 * while it is refused, it and every later one wait in the key's local queue, and only the queue's head talks
 * to the store: it sleeps until a release notice, a local release, its backoff or the holder's lease end, and
 * asks again. A local release may hand its lease straight to the head, and a store's release may grant it to
 * the head's request directly; a head that will be told so (see `toldOfTurn`) sleeps past its backoff, up to
 * `retry.maxDelay`. A grant that comes back after its validity is given back, and asked for again while the
 * wait lasts.
 */
export class Acquirer {
  protected readonly store: LockStore;
  /** The store's line of waiting processes, when it keeps one (`capabilities.line`). */
  protected readonly line?: WaitingLine;
  protected readonly observer: LockObserver;
  protected readonly leases: LeaseBook;
  private readonly queues: Map<string, LocalQueue>;
  protected readonly shutdown: ShutdownGate;
  /** Keys whose first ask from here, on its way, leaves its request in the store's line: one at a time. */
  private readonly offering = new Set<string>();
  /** Ends the wait for an answer that comes after its acquisition's wait. */
  private readonly answers = new AnswerDeadlines();

  constructor({ store, observer, leases, queues, shutdown }: AcquirerParts) {
    this.store = store;
    this.line = store.capabilities?.line;
    this.observer = observer;
    this.leases = leases;
    this.queues = queues;
    this.shutdown = shutdown;
  }

  /**
   * Acquires `key` with the waiting policy and reports the acquisition as events. The uncontended path (nobody
   * here waits for the key, the store grants at once) is this method, one `attempt` and the store's own call:
   * every other async layer costs each lease a promise and a microtask.
   */
  async acquire(key: string, settings: LockSettings): Promise<Outcome> {
    if (this.shutdown.begun) throw shuttingDownError(key);
    const trace = this.observer.start(key, settings);
    const deadline = trace.started + settings.wait;
    const acquisition: Acquisition = {
      key,
      token: newToken(),
      settings,
      trace,
      deadline,
      sentAt: trace.started,
      offered: false,
      answered: false,
    };
    let outcome: Outcome;
    // counted until it has given up any place it took in the store's line: a shutdown closes the store only
    // after that, however its waiters happen to leave once woken
    this.shutdown.enter();
    try {
      const queue = this.queues.get(key);
      let attempt = queue
        ? await this.behindLocalWaiters(acquisition, queue)
        : await this.attempt(acquisition, this.firstRequest(acquisition));
      if (!isGrant(attempt)) attempt = await this.afterRefusal(acquisition, attempt);
      // the last grant came back late and the wait has no time left for another: nobody else need hold the key
      if ('late' in attempt) throw lateGrantError(attempt.late);
      outcome = attempt;
      if (!isGrant(outcome)) this.gaveUp(acquisition);
    } catch (error) {
      this.gaveUp(acquisition, error);
      // a refusal or a failure because the service shuts down is part of the shutdown, not an outage to log
      if (this.shutdown.begun) this.observer.finished(trace, undefined);
      // a permit request whose shape disagrees with its key's: the caller's mistake, no store failure
      else if (!(error instanceof LockConfigurationError)) this.observer.failed(trace, error);
      throw isLockError(error) ? withKeyTemplate(error, settings.metricKey) : error;
    } finally {
      this.shutdown.leave();
    }
    this.observer.finished(trace, 'lock' in outcome ? outcome.lock : undefined);
    return outcome;
  }

  /**
   * The acquisition ends without a lease: refused, failed (`error`), or its grant came late. Nothing here: the
   * local queue gives up its process's place in the store's line (`closeQueue`).
   */
  protected gaveUp(_acquisition: Acquisition, _error?: unknown): void {}

  /** Others here wait for the key already: lines up behind them (unless this acquisition may not wait). */
  private async behindLocalWaiters(acquisition: Acquisition, queue: LocalQueue): Promise<Attempt> {
    const { key, settings, trace } = acquisition;
    const remainingTtl = this.leases.holderOf(key)?.remainingTime;
    this.observer.contended(trace, remainingTtl);
    return settings.wait === 0 ? { remainingTtl } : this.waitInQueue(acquisition, queue);
  }

  /**
   * The first ask found no grant: asks again while a late grant was given back and the wait lasts, and once
   * refused, reports contention and waits (unless this acquisition may not).
   */
  private async afterRefusal(acquisition: Acquisition, first: Attempt): Promise<Attempt> {
    const { settings, trace } = acquisition;
    // a late grant was given back: ask again while the wait lasts (the key is likely free, or ours again)
    while (retrying(first)) {
      // the grant spent the request that stood in the line
      acquisition.offered = false;
      first = await this.attempt(acquisition, firstWaiting(settings));
    }
    if (!('remainingTtl' in first)) return first;
    this.observer.contended(trace, first.remainingTtl);
    if (settings.wait === 0) return first;
    const { sentAt } = acquisition;
    return this.waitAfterRefusal(acquisition, {
      sentAt,
      answeredAt: performance.now(),
      remainingTtl: first.remainingTtl,
    });
  }

  /** Waits for the key after the first refusal: in the key's local queue, whose head asks the store. */
  protected waitAfterRefusal(acquisition: Acquisition, refused: Refusal): Promise<Attempt> {
    const { key, token } = acquisition;
    // another acquisition of the key may have made its queue while this one asked
    let queue = this.queues.get(key);
    if (!queue) this.queues.set(key, (queue = new LocalQueue()));
    else if (acquisition.offered) {
      // only the head's request may stand in the line: a grant that comes for ours is given back, so this
      // acquisition asks with another token from now on (its next request would find the given-back lease its own)
      this.line?.withdrawOffer?.(key, token);
      acquisition.token = newToken();
      acquisition.offered = false;
    }
    return this.waitInQueue(acquisition, queue, refused);
  }

  /**
   * What the first ask of an acquisition tells the store of its wait. Where a release grants the lease to the
   * request that stands beside the first waiting process's place (`grantsToWaiters`), the first ask of a caller
   * that waits leaves that request itself, so that as the head of the key's local queue it need not ask again
   * before it sleeps: one round trip less for every process that waits. One such first ask of a key at a time:
   * a second acquisition asking meanwhile would become the head behind the first one's request.
   */
  private firstRequest(acquisition: Acquisition): AcquireRequest['waiting'] {
    const { key, settings } = acquisition;
    if (settings.wait === 0 || !this.line?.grantsToWaiters || this.offering.has(key)) return firstWaiting(settings);
    this.offering.add(key);
    acquisition.offered = true;
    return { again: false, ttl: settings.wait, next: true };
  }

  /** Waits for its turn in the key's local queue until the deadline, then for the key as the queue's head. */
  private async waitInQueue(acquisition: Acquisition, queue: LocalQueue, refused?: Refusal): Promise<Attempt> {
    const { key, deadline } = acquisition;
    const waiter = queue.enter();
    let outcome: Attempt | undefined;
    try {
      const turn = await turnBefore(waiter.turn, deadline);
      // the wait can end before the refusal's reply arrives: what the store said of the holder still stands
      if (!turn) return { remainingTtl: this.leases.holderOf(key)?.remainingTime ?? refused?.remainingTtl };
      outcome = await this.waitAsHead(acquisition, queue, refused);
      return outcome;
    } finally {
      // a grant that comes for our request in the line after this is given back, not kept for a ttl
      // (the token asked with last: a late grant given back may have changed it)
      if (!isGrant(outcome)) this.line?.withdrawOffer?.(key, acquisition.token);
      queue.leave(waiter);
      if (queue.size === 0 && this.queues.get(key) === queue) this.closeQueue(key, queue, outcome);
    }
  }

  /**
   * The head's wait: each round asks the store (unless a local holder has the key, or the watch heard every
   * release since the refusal), then sleeps until a release or its backoff, and takes what that release
   * granted it directly or handed over, if anything. A head told of its turn sleeps `retry.maxDelay` instead of
   * its backoff: another request would only find its place again. Every sleep ends by the holder's lease end
   * and the deadline, and so does the wait for the release watch to open. Ends with a grant, a refusal at the
   * deadline, or a late grant with no time left to ask again.
   */
  protected async waitAsHead(acquisition: Acquisition, queue: LocalQueue, refused?: Refusal): Promise<Attempt> {
    const { key, settings, trace, deadline } = acquisition;
    if (this.shutdown.begun) throw shuttingDownError(key);
    const opening = this.watchReleases(acquisition, queue, refused);
    let last: Attempt = { remainingTtl: refused?.remainingTtl };
    // when the holder's lease ends at the latest, as the last refusal said (`performance.now()` time)
    let holderEnds = leaseEnd(refused?.remainingTtl, refused?.answeredAt);
    // a crashed holder sends no notice: a watch slow to open (a subscription's own connection on a busy server)
    // must not keep us waiting past the holder's lease, so at its end we ask without the watch; nor past the wait
    while (!(await openedBefore(opening, Math.min(holderEnds === undefined ? Infinity : holderEnds + 1, deadline)))) {
      if (this.shutdown.begun) throw shuttingDownError(key);
      if (performance.now() >= deadline) {
        // the holder's end unknown and no watch to hear its release: one ask at the wait's end, as the loop
        // below makes one, unless an ask of this acquisition was left behind with its token
        return holderEnds === undefined && !acquisition.leftBehind ? this.attempt(acquisition) : last;
      }
      last = await this.attempt(acquisition, { again: true, ttl: deadline - performance.now(), next: true });
      if (retrying(last)) continue;
      if (!('remainingTtl' in last)) return last;
      this.observer.contended(trace, last.remainingTtl);
      holderEnds = leaseEnd(last.remainingTtl, performance.now());
    }
    const { watch, covered } = await opening;
    for (let round = 0; ; round++) {
      if (this.shutdown.begun) throw shuttingDownError(key);
      const local = this.leases.holderOf(key);
      // an ask left behind unanswered may still be granted, and the release of that grant, by the same token,
      // would end the lease a later ask was granted: none is sent (the wait is over anyway)
      if (acquisition.leftBehind) return local ? { remainingTtl: local.remainingTime } : last;
      // without cover, a release between our refusal and the watch would go unheard: ask again first
      if (!local && !(round === 0 && covered)) {
        last = await this.attempt(acquisition, { again: true, ttl: deadline - performance.now(), next: true });
        // a late grant was given back: ask again at once, it says nothing about another holder
        if (retrying(last)) continue;
        if (!('remainingTtl' in last)) return last;
        this.observer.contended(trace, last.remainingTtl);
        holderEnds = leaseEnd(last.remainingTtl, performance.now());
      }
      const remaining = deadline - performance.now();
      if (remaining <= 0) return local ? { remainingTtl: local.remainingTime } : last;
      // a local holder wakes us on release; a remote one by notice, at the latest when its lease ends (counted
      // from the refusal's answer, not from now: the time since went by on the holder's lease too)
      const holderLeft = local
        ? local.remainingTime
        : holderEnds !== undefined
          ? holderEnds - performance.now()
          : undefined;
      const backoff =
        !local && this.toldOfTurn(acquisition, watch)
          ? toldWaiterDelay(settings.retry)
          : backoffDelay(round, settings.retry);
      const delay = Math.min(backoff, remaining, (holderLeft ?? Infinity) + 1);
      // a local holder can hand its lease straight to us when it releases, in its own store call
      const offer = local && this.line ? new HandOverOffer(acquisition.token, settings, trace) : undefined;
      if (offer) queue.standBy(offer);
      await watch.next(Math.max(1, delay));
      // a release may have granted the lease straight to our request in the line; its notice said so
      const direct = this.takeGrant(key, acquisition.token);
      if (offer) queue.withdraw(offer);
      const taken = direct
        ? await this.takeDirectGrant(acquisition, direct)
        : offer && (await this.takeHandedOver(acquisition, offer));
      if (!taken) continue;
      last = taken;
      if (!retrying(taken)) return taken;
    }
  }

  /**
   * The release watch of the key's queue, made for the first head; `covered` when it has missed no notice
   * since the refusal and the store has what it needs to serve it (then the head need not ask again before its
   * first sleep).
   */
  private async watchReleases(
    acquisition: Acquisition,
    queue: LocalQueue,
    refused: Refusal | undefined,
  ): Promise<{ watch: ReleaseWatch; covered: boolean }> {
    const { offered } = acquisition;
    // a watch made for our first refusal may cover every notice since that attempt was sent
    const since = queue.watch ? undefined : refused?.sentAt;
    queue.watch ??= this.openWatch(acquisition, since);
    const watch = await queue.watch;
    // (a store that grants the next waiter directly needs its request beside its place: it asks once more,
    // unless the first ask left it there)
    const covered =
      (offered || !this.line?.grantsToWaiters) &&
      since !== undefined &&
      watch.listeningSince !== undefined &&
      watch.listeningSince <= since;
    return { watch, covered };
  }

  /**
   * Whether the release that serves this acquisition's process will tell it so, and it need not ask at its
   * backoff: the store grants the request beside the first place in its line straight to its waiter, the last
   * request left one, and the watch has missed no notice since before that request was sent (a dropped
   * subscription clears `listeningSince`; the reconnect wakes the watch). What no notice reports, a place lost
   * unheard, is found by the request after `retry.maxDelay`; a crashed holder's end by the lease-end bound.
   */
  private toldOfTurn(acquisition: Acquisition, watch: ReleaseWatch): boolean {
    const since = watch.listeningSince;
    return (
      this.line?.grantsToWaiters === true && acquisition.offered && since !== undefined && since <= acquisition.sentAt
    );
  }

  /** Starts listening for the releases an acquisition waits for (`since`: as `LockStore.watch`). */
  protected openWatch(acquisition: Acquisition, since: number | undefined): Promise<ReleaseWatch> {
    return this.store.watch(acquisition.key, since);
  }

  /** The lease a release granted straight to `token`'s request on `key`, once, if one did (its notice said so). */
  protected takeGrant(key: string, token: string): DirectGrant | undefined {
    return this.line?.takeGrant?.(key, token);
  }

  /** Holds the lease a release granted straight to our request, unless it came too late (then gives it back). */
  private async takeDirectGrant(acquisition: Acquisition, direct: DirectGrant): Promise<Attempt> {
    const { key, token, settings } = acquisition;
    if (this.shutdown.begun) throw await this.shutdown.refuseGrant(key, token);
    const validUntil = direct.sentAt + settings.ttl - this.leases.drift(settings.ttl);
    const late = this.lateness(key, settings.ttl, validUntil);
    if (late) return this.giveBack(acquisition, late);
    const fence = settings.fencing ? direct.fence : undefined;
    return { lock: this.leases.grant({ key, token, settings, fence, sentAt: direct.sentAt }) };
  }

  /**
   * The lease a local release handed over for `offer`, if it did, unless our turn to use it came after its end
   * (then it is given back).
   */
  private async takeHandedOver(acquisition: Acquisition, offer: HandOverOffer): Promise<Attempt | undefined> {
    const handed = await offer.outcome;
    if (!handed) return undefined;
    const late = this.lateness(handed.key, handed.ttl, handed.validUntil);
    if (!late) return { lock: handed };
    this.leases.forget(handed);
    return this.giveBack(acquisition, late);
  }

  /**
   * The last waiter left `queue`: it goes, and with it the key's release watch and, unless it was granted, the
   * process's place in the store's line.
   */
  private closeQueue(key: string, queue: LocalQueue, outcome: Attempt | undefined): void {
    this.queues.delete(key);
    // nobody here waits any more: a place left in the store's line would cost the others a hand-off window
    if (!isGrant(outcome)) this.shutdown.track(this.line?.leaveLine(key) ?? Promise.resolve()).catch(() => undefined);
    void queue.watch?.then(
      (watch) => watch.close(),
      () => undefined,
    );
  }

  /** Asks the store once; a grant that came back after its validity is given back. */
  private async attempt(acquisition: Acquisition, waiting?: AcquireRequest['waiting']): Promise<Attempt> {
    const { key, token, settings, trace } = acquisition;
    trace.attempts++;
    const sentAt = performance.now();
    acquisition.sentAt = sentAt;
    // a request of the queue's head leaves its offer where releases grant one directly
    acquisition.offered = waiting?.next === true && this.line?.grantsToWaiters === true;
    let result;
    const answer = this.store.acquire(acquireRequest(key, token, settings, waiting));
    try {
      // fail fast asks once and takes the store's own time; a wait bounds each ask by its end
      result =
        settings.wait === 0
          ? await answer
          : await this.answers.within(
              answer,
              Math.max(acquisition.deadline, sentAt + LEAST_ANSWER_TIME),
              () => OVERDUE,
            );
      acquisition.answered = true;
    } catch (error) {
      // a request whose shape disagrees with its key's was refused, nothing granted: the caller's mistake
      if (error instanceof LockConfigurationError) throw error;
      if (error === OVERDUE) return this.leaveUnanswered(acquisition, answer, waiting);
      // the grant may have happened before the reply was lost: undo it, token-checked, in the background
      this.undoLostGrant(key, token, sentAt + settings.ttl);
      // and a release that grants the request it may have left in the line: given back at once
      if (waiting?.next) this.line?.withdrawOffer?.(key, token);
      throw error instanceof LockStoreError ? error : new LockStoreError('acquire', key, error);
    } finally {
      if (waiting?.next && !waiting.again) this.offering.delete(key);
    }
    if (!result.acquired) return { remainingTtl: result.remainingTtl };
    if (this.shutdown.begun) throw await this.shutdown.refuseGrant(key, token);
    const late = this.lateness(key, settings.ttl, sentAt + settings.ttl - this.leases.drift(settings.ttl));
    if (late) return this.giveBack(acquisition, late);
    return { lock: this.leases.grant({ key, token, settings, fence: result.fence, sentAt }) };
  }

  /**
   * Ends an acquisition whose ask went unanswered until its wait was over (and at least
   * {@link LEAST_ANSWER_TIME}): a refusal when the store answered an earlier ask of it (the key was held then),
   * else a store failure. The ask goes on without it: a grant it brings is released, token-checked, and a
   * failure undone as a lost reply's. No later ask may use the token, which the release would end: the
   * acquisition is marked `leftBehind`, and its head's loop asks no more.
   */
  private leaveUnanswered(
    acquisition: Acquisition,
    answer: Promise<AcquireResult>,
    waiting: AcquireRequest['waiting'],
  ): Attempt {
    const { key, token, settings, sentAt } = acquisition;
    acquisition.unanswered = answer.then(
      (result) => {
        if (result.acquired) this.shutdown.track(this.store.release(key, token)).catch(() => undefined);
      },
      () => this.undoLostGrant(key, token, sentAt + settings.ttl),
    );
    if (waiting?.next) this.line?.withdrawOffer?.(key, token);
    acquisition.leftBehind = true;
    if (acquisition.answered) return { remainingTtl: undefined };
    throw new LockStoreError(
      'acquire',
      key,
      undefined,
      `no answer within ${Math.round(performance.now() - sentAt)} ms (the wait was ${settings.wait} ms)`,
    );
  }

  /**
   * Releases, token-checked, a grant whose reply was lost. Retried while the store cannot be reached and the
   * grant could still hold the key (`until`): a client that does not resend fails the first try at once
   * while it reconnects, and a grant left there would keep the key from everyone for its whole ttl.
   */
  protected undoLostGrant(key: string, token: string, until: number): void {
    const undo = retryUntil(
      () => this.store.release(key, token),
      until,
      () => this.shutdown.begun,
    );
    this.shutdown.track(undo).catch(() => undefined);
  }

  /**
   * After a failed give-back: a failed release may still be applied, after the next ask if that used the same
   * token, and end what that ask was granted. The acquisition asks with a new token from now on, and the old
   * one is released in the background while its grant could hold the key.
   */
  protected leaveToken(acquisition: Acquisition, late: LateGrant): void {
    const { token } = acquisition;
    acquisition.token = newToken();
    acquisition.offered = false;
    this.line?.withdrawOffer?.(late.key, token);
    this.undoLostGrant(late.key, token, performance.now() + late.ttl);
  }

  /** How late a grant of a `ttl` ms lease valid until `validUntil` is now; `undefined` while it is valid. */
  private lateness(key: string, ttl: number, validUntil: number): LateGrant | undefined {
    const lateBy = performance.now() - validUntil;
    if (lateBy < 0) return undefined;
    return { key, ttl, lateBy, elapsed: lateBy + ttl - this.leases.drift(ttl) };
  }

  /**
   * Gives back a grant that came back after its validity ended: releases it, token-checked, so a lease
   * someone took since stays theirs, and waits for that before the acquisition asks again with the same
   * token (a retry that overtook the release would find its own token and be granted what is then deleted).
   * Reported as a `late-grant`, never as an acquired lease.
   */
  private async giveBack(acquisition: Acquisition, late: LateGrant): Promise<GivenBackGrant> {
    const { token, trace } = acquisition;
    try {
      await this.shutdown.track(this.store.release(late.key, token));
    } catch (error) {
      this.observer.storeError('release', late.key, error, trace);
      this.leaveToken(acquisition, late);
    }
    // an acquisition that may not ask with its token again (see leaveToken) ends here
    const givenBack = { late, retry: !acquisition.leftBehind && performance.now() < trace.started + trace.wait };
    this.observer.lateGrant(trace, givenBack);
    return givenBack;
  }
}

/** Whether `turn` comes before `deadline`: never once the deadline has passed, even when the turn has come. */
async function turnBefore(turn: Promise<void>, deadline: number): Promise<boolean> {
  const remaining = deadline - performance.now();
  if (remaining <= 0) return false;
  return raceDeadline(
    turn.then(() => true),
    remaining,
    () => false,
  );
}

/** Whether `opening` settles before `until` (a `performance.now()` time); a failure to open is thrown. */
function openedBefore(opening: Promise<unknown>, until: number): Promise<boolean> {
  return raceDeadline(
    opening.then(() => true),
    Math.max(0, until - performance.now()),
    () => false,
  );
}

/** When a lease with `remainingTtl` ms left at `answeredAt` ends, if both are known. */
function leaseEnd(remainingTtl: number | undefined, answeredAt: number | undefined): number | undefined {
  return remainingTtl === undefined || answeredAt === undefined ? undefined : answeredAt + remainingTtl;
}

/** The first request of an acquisition: with a place in the store's line when it may wait. */
function firstWaiting(settings: LockSettings): AcquireRequest['waiting'] {
  return settings.wait > 0 ? { again: false, ttl: settings.wait } : undefined;
}

/** What an ask past its time is rejected with, to tell it from the store's own failures. */
const OVERDUE = Symbol('overdue');

/** Whether `attempt` is a late grant given back while the wait has time left to ask again. */
function retrying(attempt: Attempt): boolean {
  return 'late' in attempt && attempt.retry;
}

/** Whether an acquisition ended with a grant (not when it failed, timed out, or is still under way). */
export function isGrant(attempt: Attempt | undefined): boolean {
  return attempt !== undefined && 'lock' in attempt;
}
