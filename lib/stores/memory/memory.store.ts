import { performance } from 'node:perf_hooks';
import type {
  AcquireRequest,
  AcquireResult,
  LeaseRenewal,
  LockState,
  ReleaseWatch,
} from '../../interfaces/lease.interface.js';
import type { LockStore, LockStoreHealth } from '../../interfaces/lock-store.interface.js';
import { LocalWatches } from './local-watches.js';
import { takeFence } from './memory-fences.js';
import { MemoryPermitStore } from './memory-permit-store.js';
import type { PermitStore } from '../../interfaces/permit-store.interface.js';
import { MemoryRecords } from './memory-records.js';
import type { ResponseRecords } from '../../interfaces/response-records.interface.js';
import type { LockListing, LockRevoking } from '../../interfaces/lock-listing.interface.js';
import { MemoryListing } from './memory-listing.js';

interface Lease {
  readonly token: string;
  expiresAt: number;
  timer: NodeJS.Timeout;
  /** Who holds it, as given at acquire; it lives and dies with the lease. */
  readonly holder?: string;
}

/**
 * A lock store inside one process: the same contract as the Redis store (TTL expiry, tokens, fences,
 * release notices), for tests and single-instance apps. Locks are not shared with other processes.
 */
export class MemoryLockStore implements LockStore {
  private readonly leases = new Map<string, Lease>();
  private readonly fences = new Map<string, number>();
  private readonly watches = new LocalWatches();
  /**
   * Semaphores and readers-writer locks on the same keys and fences as this store's leases: a permit and a
   * mutex lease never share a key.
   */
  private readonly permits = new MemoryPermitStore({
    mutex: { remainingOf: (key) => this.remainingOf(key) },
    fences: this.fences,
    onMutexTurn: (key) => this.watches.wake(key),
  });
  private readonly records = new MemoryRecords();
  private readonly listing = new MemoryListing({
    leaseKeys: () => this.leases.keys(),
    permitKeys: () => this.permits.heldKeys(),
    waiters: (key) => this.watches.count(key),
    endLease: (key) => {
      const token = this.leases.get(key)?.token;
      if (token !== undefined) this.expire(key);
      return token;
    },
    endPermits: (key) => this.permits.endAll(key),
    fences: this.fences,
  });
  /**
   * Permits (semaphores, readers-writer locks), response records, the listing and forced releases; no line of
   * processes, as there is one process.
   */
  readonly capabilities: {
    readonly permits: PermitStore;
    readonly records: ResponseRecords;
    readonly listing: LockListing;
    readonly revoking: LockRevoking;
  } = {
    permits: this.permits,
    records: this.records,
    listing: this.listing,
    revoking: this.listing,
  };

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    const current = this.leases.get(request.key);
    const permitsHold = current ? undefined : this.permits.permitsHold(request.key);
    if (permitsHold !== undefined) {
      if (request.waiting) this.permits.claimForMutex(request.key, request.waiting.ttl);
      return { acquired: false, remainingTtl: permitsHold };
    }
    if (current && current.token !== request.token) {
      return { acquired: false, remainingTtl: Math.max(0, Math.ceil(current.expiresAt - performance.now())) };
    }
    if (current) {
      this.setLease(request.key, request.token, request.ttl, request.holder ?? current.holder);
      return request.fencing ? { acquired: true, fence: this.fences.get(request.key) ?? 0 } : { acquired: true };
    }
    this.setLease(request.key, request.token, request.ttl, request.holder);
    this.permits.mutexGranted(request.key);
    if (!request.fencing) return { acquired: true };
    return { acquired: true, fence: takeFence(this.fences, request.key) };
  }

  async release(key: string, token: string): Promise<boolean> {
    const lease = this.leases.get(key);
    if (!lease || lease.token !== token) return false;
    this.expire(key);
    return true;
  }

  async extend(key: string, token: string, ttl: number): Promise<boolean> {
    const lease = this.leases.get(key);
    if (!lease || lease.token !== token) return false;
    this.setLease(key, token, ttl, lease.holder);
    return true;
  }

  async extendMany(renewals: readonly LeaseRenewal[]): Promise<Array<boolean | Error>> {
    return Promise.all(renewals.map((renewal) => this.extend(renewal.key, renewal.token, renewal.ttl)));
  }

  /** The remaining ms of the lease on `key`, `undefined` while none holds it. */
  private remainingOf(key: string): number | undefined {
    const lease = this.leases.get(key);
    return lease && Math.max(0, Math.ceil(lease.expiresAt - performance.now()));
  }

  async inspect(key: string): Promise<LockState> {
    const lease = this.leases.get(key);
    const fence = this.fences.get(key);
    return {
      held: lease !== undefined,
      ...(lease ? { remainingTtl: Math.max(0, Math.ceil(lease.expiresAt - performance.now())) } : {}),
      ...(fence !== undefined ? { fence } : {}),
      ...(lease?.holder !== undefined ? { holder: lease.holder } : {}),
    };
  }

  async watch(key: string): Promise<ReleaseWatch> {
    return this.watches.watch(key);
  }

  /** Always healthy: it lives in this process. */
  async health(): Promise<LockStoreHealth> {
    return {};
  }

  async close(): Promise<void> {
    for (const lease of this.leases.values()) clearTimeout(lease.timer);
    this.leases.clear();
    this.records.clear();
    await this.permits.close();
    this.watches.wakeAll();
  }

  private setLease(key: string, token: string, ttl: number, holder: string | undefined): void {
    const previous = this.leases.get(key);
    if (previous) clearTimeout(previous.timer);
    const timer = setTimeout(() => this.expire(key), ttl);
    timer.unref();
    this.leases.set(key, { token, expiresAt: performance.now() + ttl, timer, holder });
  }

  /** Ends a lease (release or TTL) and wakes its waiters, as a Redis release notice would. */
  private expire(key: string): void {
    const lease = this.leases.get(key);
    if (lease) clearTimeout(lease.timer);
    this.leases.delete(key);
    this.watches.wake(key);
  }
}
