import { performance } from 'node:perf_hooks';
import type { ReleaseWatch } from '../../../interfaces/lease.interface.js';
import type { DirectGrant } from '../../../interfaces/waiting-line.interface.js';

/** One waiter's requests that left an offer with its place (PERMIT_ACQUIRE's ARGV 12), by version. */
interface Waiter {
  readonly key: string;
  readonly token: string;
  readonly ttl: number;
  /** When each of its latest requests was sent (`performance.now()`), by version. */
  readonly sent: Map<number, number>;
  /** What a release granted it, from the notice: the lease counts from when that request was sent. */
  granted?: DirectGrant;
  /** Its request failed without a reply: a grant that comes for it is given back; forgotten after this time. */
  withdrawnUntil?: number;
}

/** A permit a release granted to a request nobody will take: to give back within its ttl. */
export interface UntakenGrant {
  readonly key: string;
  readonly token: string;
  readonly ttl: number;
}

/** How many of a waiter's latest requests are remembered: a release reads the one that stands when it runs. */
const KEPT_REQUESTS = 4;

/**
 * The offers this store's permit waiters left in the lines of the keys they wait for, so that a notice
 * `=version fence` on the process's own channel (a release granted that request its permit) reaches the one
 * waiter it is for, wakes only it, and tells it from when its permit counts. A waiter that stops waiting gives
 * up its place with PERMIT_LEAVE_LINE, which also ends a permit granted to it meanwhile.
 */
export class PermitGrants {
  private readonly waiters = new Map<string, Waiter>();
  private readonly versions = new Map<number, Waiter>();
  /** The watch each waiter sleeps on, by token: its grant's notice wakes it alone (not every waiter of the key). */
  private readonly watches = new Map<string, ReleaseWatch>();
  private nextVersion = 1;

  /** Registers a request of `token` about to be sent with an offer; returns the version it stands under. */
  offer(key: string, token: string, ttl: number, sentAt: number): number {
    this.forgetWithdrawn(sentAt);
    let waiter = this.waiters.get(token);
    if (!waiter || waiter.key !== key || waiter.withdrawnUntil !== undefined) {
      if (waiter) this.forget(waiter);
      waiter = { key, token, ttl, sent: new Map() };
      this.waiters.set(token, waiter);
    }
    const version = this.nextVersion++;
    waiter.sent.set(version, sentAt);
    this.versions.set(version, waiter);
    for (const old of waiter.sent.keys()) {
      if (waiter.sent.size <= KEPT_REQUESTS) break;
      waiter.sent.delete(old);
      this.versions.delete(old);
    }
    return version;
  }

  /**
   * A notice said the request of `version` was granted its permit: wakes its waiter. Returns the key and token
   * of a grant nobody will take (its request failed), to give back; nothing for a version no waiter here has.
   */
  arrived(version: number, fence: number): UntakenGrant | undefined {
    const waiter = this.versions.get(version);
    const sentAt = waiter?.sent.get(version);
    if (!waiter || sentAt === undefined) return undefined;
    if (waiter.withdrawnUntil !== undefined) {
      this.forget(waiter);
      return untaken(waiter);
    }
    waiter.granted = { fence, sentAt };
    this.watches.get(waiter.token)?.wake();
    return undefined;
  }

  /** The permit a release granted to `token`'s request on `key`, once: its waiter holds it from now on. */
  take(key: string, token: string): DirectGrant | undefined {
    const waiter = this.waiters.get(token);
    if (waiter?.key !== key || !waiter.granted) return undefined;
    this.forget(waiter);
    return waiter.granted;
  }

  /** `watch` is the one `token`'s waiter sleeps on: its grant wakes it (at once when it came already). */
  attach(token: string, watch: ReleaseWatch): void {
    this.watches.set(token, watch);
    if (this.waiters.get(token)?.granted) watch.wake();
  }

  /** `token`'s waiter closed `watch`. */
  detach(token: string, watch: ReleaseWatch): void {
    if (this.watches.get(token) === watch) this.watches.delete(token);
  }

  /** `token` holds its permit by its own request, or gave its place up: its offers are spent. */
  spent(token: string): void {
    const waiter = this.waiters.get(token);
    if (waiter) this.forget(waiter);
  }

  /**
   * `token`'s request failed without a reply, or so did its giving up of its place: a release may grant it a
   * permit later, or did already. Returns the one granted already (to give back); a later one is given back
   * when its notice comes (see `arrived`), until it would have ended by its ttl.
   */
  withdraw(token: string): UntakenGrant | undefined {
    const waiter = this.waiters.get(token);
    if (!waiter) return undefined;
    if (waiter.granted) {
      this.forget(waiter);
      return untaken(waiter);
    }
    waiter.withdrawnUntil = performance.now() + 2 * waiter.ttl;
    return undefined;
  }

  private forget(waiter: Waiter): void {
    if (this.waiters.get(waiter.token) === waiter) this.waiters.delete(waiter.token);
    for (const version of waiter.sent.keys()) this.versions.delete(version);
  }

  private forgetWithdrawn(now: number): void {
    for (const waiter of this.waiters.values()) {
      if (waiter.withdrawnUntil !== undefined && waiter.withdrawnUntil < now) this.forget(waiter);
    }
  }
}

function untaken({ key, token, ttl }: Waiter): UntakenGrant {
  return { key, token, ttl };
}
