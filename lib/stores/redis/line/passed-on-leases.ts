import { performance } from 'node:perf_hooks';
import type { PassedOnLease } from '../scripts/release.script.js';

/** How many keys' passed-on leases a store remembers (a busy loop needs one per key it contends for). */
const REMEMBERED_KEYS = 4096;

interface Remembered extends PassedOnLease {
  /** `performance.now()` before the release that granted it was sent: the lease began after that. */
  readonly sentAt: number;
}

/**
 * The leases this process's releases granted straight to waiters of other processes (RELEASE's reply), by key.
 * When the process asks for the key again and that lease refuses it, the store knows how long it has left at
 * least, without asking the server (ACQUIRE's PASSED_ON): it began after the release was sent and runs for the
 * ttl its waiter asked for, and an extension only moves its end later. That saves the PTTL of the releaser's
 * own refused ask on each cross-process hand-off of a process that asks again at once (a busy loop).
 */
export class PassedOnLeases {
  private readonly leases = new Map<string, Remembered>();

  /** The release of `key` sent at `sentAt` granted `lease` to a waiter elsewhere. */
  passed(key: string, lease: PassedOnLease, sentAt: number): void {
    if (this.leases.size >= REMEMBERED_KEYS && !this.leases.has(key)) this.leases.clear();
    this.leases.set(key, { ...lease, sentAt });
  }

  /**
   * The token of the lease passed on for `key` while the least it has left is more than half its ttl; past that
   * the holder may well have renewed it, and the server's PTTL says more.
   */
  tokenOf(key: string): string | undefined {
    const lease = this.leases.get(key);
    if (lease === undefined) return undefined;
    if (this.leastLeft(lease) > lease.ttl / 2) return lease.token;
    this.leases.delete(key);
    return undefined;
  }

  /** The least the lease of `token` passed on for `key` has left, in whole ms; `undefined` for another token. */
  remaining(key: string, token: string): number | undefined {
    const lease = this.leases.get(key);
    return lease?.token === token ? Math.max(0, Math.floor(this.leastLeft(lease))) : undefined;
  }

  private leastLeft(lease: Remembered): number {
    return lease.ttl - (performance.now() - lease.sentAt);
  }
}
