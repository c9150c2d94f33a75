import type {
  LockListing,
  LockListingPage,
  LockListingQuery,
  LockRevocation,
  LockRevoking,
} from '../../interfaces/lock-listing.interface.js';
import { takeFence } from './memory-fences.js';

/** What the listing of an in-process store reads and ends of it. */
export interface MemoryListingSource {
  /** The keys of live mutex leases. */
  leaseKeys(): Iterable<string>;
  /** The keys of live permits. */
  permitKeys(): Iterable<string>;
  /** How many wait for `key` in this process (open release watches). */
  waiters(key: string): number;
  /** Ends the mutex lease of `key`; its token, or `undefined` when none was held. */
  endLease(key: string): string | undefined;
  /** Ends every permit of `key`; their tokens. */
  endPermits(key: string): Promise<string[]>;
  /** The fence counters shared by leases and permits. */
  readonly fences: Map<string, number>;
}

/** How many revoked tokens an in-process store remembers, so that their holders hear `revoked`. */
const REMEMBERED_REVOCATIONS = 1024;

/**
 * The operator's view of a `MemoryLockStore`: its keys in order, a page's last key the cursor of the next, and
 * forced releases that take the key's next fence.
 */
export class MemoryListing implements LockListing, LockRevoking {
  /** Tokens ended by a forced release, oldest first, as `key\ntoken`. */
  private readonly revoked = new Set<string>();

  constructor(private readonly source: MemoryListingSource) {}

  async keys(query: LockListingQuery): Promise<LockListingPage> {
    const prefix = query.prefix ?? '';
    const after = query.cursor;
    const held = new Set<string>();
    for (const key of [...this.source.leaseKeys(), ...this.source.permitKeys()]) {
      if (key.startsWith(prefix) && (after === undefined || key > after)) held.add(key);
    }
    // in key order, so that the last key of a page is where the next one starts
    const sorted = [...held].sort();
    const keys = sorted.slice(0, query.limit);
    return sorted.length > query.limit ? { keys, cursor: keys[keys.length - 1] } : { keys };
  }

  async waiters(key: string): Promise<number> {
    return this.source.waiters(key);
  }

  async revoke(key: string): Promise<LockRevocation> {
    const lease = this.source.endLease(key);
    const permits = await this.source.endPermits(key);
    const tokens = lease === undefined ? permits : [lease, ...permits];
    for (const token of tokens) this.remember(`${key}\n${token}`);
    return { ended: tokens.length, fence: takeFence(this.source.fences, key) };
  }

  async wasRevoked(key: string, token: string): Promise<boolean> {
    return this.revoked.has(`${key}\n${token}`);
  }

  /** Remembers a revoked lease, forgetting the oldest past the bound (a revoked holder asks at its next renewal). */
  private remember(entry: string): void {
    this.revoked.add(entry);
    if (this.revoked.size > REMEMBERED_REVOCATIONS) this.revoked.delete(this.revoked.values().next().value as string);
  }
}
