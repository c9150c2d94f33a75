import { performance } from 'node:perf_hooks';
import type { LeaseRenewal, ReleaseWatch } from '../../interfaces/lease.interface.js';
import type { PermitRequest, PermitResult, PermitState, PermitStore } from '../../interfaces/permit-store.interface.js';
import { MAX_DURATION } from '../../utils/duration.js';
import { validateInteger } from '../../options/validate-options.js';
import { DEFAULT_HANDOFF_WINDOW } from '../shared/handoff-window.js';
import { callLine, hasLapsed, type HeldPermit, type LineCall, type WaitingPlace } from '../shared/permit-line.js';
import { decidePermit } from '../shared/permit-decision.js';
import { checkPermitShape } from '../../options/permit-shape.js';
import { limitOfShape, modeOfCode, permitState } from '../shared/permit-state.js';
import { LocalWatches } from './local-watches.js';
import { MutexFirst } from './mutex-first.js';
import { takeFence } from './memory-fences.js';

/** The mutex leases a {@link MemoryPermitStore} shares its keys with. */
export interface MutexLeases {
  /** The remaining ms of the mutex lease on `key`, `undefined` while none holds it. */
  remainingOf(key: string): number | undefined;
}

/** Options of {@link MemoryPermitStore}. */
export interface MemoryPermitStoreOptions {
  /**
   * The mutex leases on the same keys (a `MemoryLockStore`'s): no permit is granted while one holds the key.
   * Read in the same step as the permit's decision, as the mutex's own grant reads the permits: a reading
   * awaited before it could be stale by then, and let a permit in beside a mutex lease granted meanwhile.
   * Without it, permits know of no mutex leases.
   */
  readonly mutex?: MutexLeases;
  /** Wakes the mutex's waiters of a key whose permits a waiting mutex caller claimed, once they ended. */
  readonly onMutexTurn?: (key: string) => void;
  /**
   * The fence counters to share with that store, so that fences grow across its leases and these permits.
   * @default a map of this store's own
   */
  readonly fences?: Map<string, number>;
  /** For how many ms a freed permit stays reserved for the waiter first in line. @default 20 */
  readonly handoffWindow?: number;
}

/** One resource's permits and line, while any of them lasts (its shape goes with them). */
interface Resource {
  shape: string;
  readonly permits: Map<string, HeldPermit>;
  line: WaitingPlace[];
  /** Fires when the next permit or reservation ends, or the last place's wait: the line is called again. */
  timer?: NodeJS.Timeout;
}

/**
 * Semaphores and readers-writer locks inside one process: the contract of {@link RedisPermitStore} (TTLs,
 * tokens, fences, the line and its reservations, notices), for tests and single-instance apps.
 */
export class MemoryPermitStore implements PermitStore {
  readonly handoffWindow: number;
  private readonly resources = new Map<string, Resource>();
  private readonly watches = new LocalWatches();
  private readonly fences: Map<string, number>;
  private readonly mutex?: MutexLeases;
  private readonly mutexFirst: MutexFirst;

  /** @throws LockConfigurationError when `handoffWindow` is not a whole number of ms from 1 */
  constructor(options: MemoryPermitStoreOptions = {}) {
    this.handoffWindow = validateInteger(
      'handoffWindow',
      options.handoffWindow ?? DEFAULT_HANDOFF_WINDOW,
      1,
      MAX_DURATION,
    );
    this.fences = options.fences ?? new Map<string, number>();
    this.mutex = options.mutex;
    this.mutexFirst = new MutexFirst(this.handoffWindow, options.onMutexTurn ?? (() => undefined));
  }

  async acquire(request: PermitRequest): Promise<PermitResult> {
    const shape = checkPermitShape(request.shape);
    const mutexTtl = this.mutexTtl(request.key);
    const now = performance.now();
    const { key } = request;
    const resource = this.resourceOf(key, now);
    const decision = decidePermit(resource, request, shape, {
      now,
      window: this.handoffWindow,
      mutexTtl,
      nextFence: () => takeFence(this.fences, key),
      permit: (held) => held,
      place: (place) => place,
    });
    if (decision.line) this.tell(key, decision.line);
    if (decision.changed) this.settle(key, resource, now);
    return decision.result;
  }

  async release(key: string, token: string): Promise<boolean> {
    const mutexTtl = this.mutexTtl(key);
    const now = performance.now();
    const resource = this.resources.get(key);
    if (!resource) return false;
    this.prune(resource, now);
    const released = resource.permits.delete(token);
    this.callAndSettle(key, resource, mutexTtl, now);
    return released;
  }

  async leaveLine(key: string, token: string): Promise<void> {
    const mutexTtl = this.mutexTtl(key);
    const now = performance.now();
    const resource = this.resources.get(key);
    if (!resource) return;
    this.prune(resource, now);
    resource.line = resource.line.filter((place) => place.token !== token);
    this.callAndSettle(key, resource, mutexTtl, now);
  }

  async extend(key: string, token: string, ttl: number): Promise<boolean> {
    const now = performance.now();
    const resource = this.resources.get(key);
    const permit = resource?.permits.get(token);
    if (!resource || !permit || permit.expiresAt <= now) return false;
    permit.expiresAt = now + ttl;
    this.settle(key, resource, now);
    return true;
  }

  async extendMany(renewals: readonly LeaseRenewal[]): Promise<Array<boolean | Error>> {
    return Promise.all(renewals.map((renewal) => this.extend(renewal.key, renewal.token, renewal.ttl)));
  }

  async inspect(key: string): Promise<PermitState> {
    const now = performance.now();
    const resource = this.resources.get(key);
    const fence = this.fences.get(key);
    const permits = [...(resource?.permits.values() ?? [])]
      .filter((permit) => permit.expiresAt > now)
      .sort((a, b) => a.expiresAt - b.expiresAt)
      .map((permit) => ({
        ...(permit.mode === 'p' ? {} : { mode: modeOfCode(permit.mode) }),
        remainingTtl: Math.max(0, Math.ceil(permit.expiresAt - now)),
        ...(permit.fence !== undefined ? { fence: permit.fence } : {}),
        ...(permit.holder !== undefined ? { holder: permit.holder } : {}),
      }));
    const waiting = (resource?.line ?? []).filter((place) => place.until > now && !hasLapsed(place, now)).length;
    return permitState({ shape: resource?.shape, permits, waiting, fence });
  }

  async watch(key: string): Promise<ReleaseWatch> {
    return this.watches.watch(key);
  }

  async close(): Promise<void> {
    for (const resource of this.resources.values()) clearTimeout(resource.timer);
    this.resources.clear();
    this.watches.wakeAll();
  }

  /** The keys with a live permit right now (for the store's listing). */
  heldKeys(): string[] {
    const now = performance.now();
    const held: string[] = [];
    for (const [key, resource] of this.resources) {
      if ([...resource.permits.values()].some((permit) => permit.expiresAt > now)) held.push(key);
    }
    return held;
  }

  /** Ends every permit of `key` (a forced release) and calls its line; returns the tokens it ended. */
  async endAll(key: string): Promise<string[]> {
    const mutexTtl = this.mutexTtl(key);
    const now = performance.now();
    const resource = this.resources.get(key);
    if (!resource) return [];
    this.prune(resource, now);
    const ended = [...resource.permits.keys()];
    resource.permits.clear();
    this.callAndSettle(key, resource, mutexTtl, now);
    this.watches.wake(key);
    return ended;
  }

  /** For how many ms live permits of `key` keep a mutex lease out (until the last ends); `undefined` for none. */
  permitsHold(key: string): number | undefined {
    const now = performance.now();
    const last = this.lastPermitEnd(key, now);
    return last === undefined ? undefined : Math.max(1, Math.ceil(last - now));
  }

  /**
   * A mutex caller refused by live permits waits `waitFor` ms: no new permit is granted until they ended, or its
   * wait did (MutexFirst).
   */
  claimForMutex(key: string, waitFor: number): void {
    this.mutexFirst.claim(key, performance.now() + waitFor);
  }

  /** A mutex lease of `key` was granted: a claim it made on the key's permits is spent. */
  mutexGranted(key: string): void {
    this.mutexFirst.served(key);
  }

  /** The remaining ms of what holds `key` against permits (a mutex lease, a mutex's claim), `undefined` for none. */
  private mutexTtl(key: string): number | undefined {
    const lease = this.mutex?.remainingOf(key);
    if (lease !== undefined) return lease;
    const now = performance.now();
    return this.mutexFirst.holdsFor(key, now, this.lastPermitEnd(key, now));
  }

  /** When the last live permit of `key` ends (`performance.now()` time), `undefined` while none lives. */
  private lastPermitEnd(key: string, now: number): number | undefined {
    let last: number | undefined;
    for (const permit of this.resources.get(key)?.permits.values() ?? []) {
      if (permit.expiresAt > now && (last === undefined || permit.expiresAt > last)) last = permit.expiresAt;
    }
    return last;
  }

  /** The resource of `key`, its ended permits and places pruned; a new empty one when it has none. */
  private resourceOf(key: string, now: number): Resource {
    const resource = this.resources.get(key);
    if (!resource) {
      const created: Resource = { shape: '', permits: new Map(), line: [] };
      this.resources.set(key, created);
      return created;
    }
    this.prune(resource, now);
    return resource;
  }

  /** Ends permits whose lease ran out and places whose wait ended. */
  private prune(resource: Resource, now: number): void {
    for (const [token, permit] of resource.permits) if (permit.expiresAt <= now) resource.permits.delete(token);
    resource.line = resource.line.filter((place) => place.until > now);
  }

  /** Reserves freed permits for the line in its order, tells waiters, and keeps the resource while it lasts. */
  private callAndSettle(key: string, resource: Resource, mutexTtl: number | undefined, now: number): void {
    this.tell(key, this.callLine(resource, limitOfShape(resource.shape), mutexTtl, now));
    this.settle(key, resource, now);
  }

  /** Calls the line of `resource` (see callLine) with this store's window, a mutex lease holding it back. */
  private callLine(resource: Resource, limit: number | undefined, mutexTtl: number | undefined, now: number): LineCall {
    return callLine(resource.permits, resource.line, {
      limit,
      window: this.handoffWindow,
      exclusive: mutexTtl !== undefined,
      now,
    });
  }

  /** Wakes the key's waiters when the line reserved permits for places: they may claim them now. */
  private tell(key: string, line: LineCall): void {
    if (line.reserved > 0) this.watches.wake(key);
  }

  /**
   * Keeps the resource until its last permit or place ends, with a timer at the next moment something ends
   * by itself (the line is called then, as a release would).
   */
  private settle(key: string, resource: Resource, now: number): void {
    clearTimeout(resource.timer);
    resource.timer = undefined;
    if (resource.permits.size === 0) this.mutexFirst.permitsEnded(key, now);
    const ends = [
      ...[...resource.permits.values()].map((permit) => permit.expiresAt),
      ...resource.line.map((place) => (place.reservedUntil > now ? place.reservedUntil : place.until)),
    ];
    if (ends.length === 0) {
      if (this.resources.get(key) === resource) this.resources.delete(key);
      return;
    }
    const delay = Math.max(1, Math.ceil(Math.min(...ends) - now));
    resource.timer = setTimeout(() => this.onTimer(key, resource), delay);
    resource.timer.unref();
  }

  private onTimer(key: string, resource: Resource): void {
    const mutexTtl = this.mutexTtl(key);
    if (this.resources.get(key) !== resource) return;
    const now = performance.now();
    this.prune(resource, now);
    this.callAndSettle(key, resource, mutexTtl, now);
  }
}
