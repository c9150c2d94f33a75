import { performance } from 'node:perf_hooks';
import type { Etcd3Client } from './etcd-client.js';
import type { EtcdKeepAlives } from './etcd-keep-alives.js';

/** An etcd lease of ours: its id, and the `performance.now()` until which etcd surely keeps it. */
export interface PooledLease {
  readonly id: string;
  readonly until: number;
}

/** A lease to grant with, and the proof that it lasts its whole TTL from the moment it was asked for. */
export interface TakenLease {
  readonly lease: PooledLease;
  /**
   * Resolves once etcd renewed a kept lease (at once for a new one); rejects when it could not: a grant made
   * with it must then not count, and the lease is revoked (which deletes what it holds).
   */
  readonly renewed: Promise<void>;
}

/** Leases kept per length; more are revoked. */
const CAPACITY = 32;
/** A kept lease is not handed out again in the last moments of its life. */
const MARGIN = 500;
/** etcd's least lease with its default timing (1.5 election timeouts of 1 s, rounded up), in whole seconds. */
const DEFAULT_LEAST_LEASE = 2;

/**
 * Leases that hold no key any more (released, refused, moved), kept for the next grant of the same length:
 * a keep-alive (answered by the leader, no disk write), sent alongside the grant's transaction, then stands
 * in for a lease grant (a write agreed by a quorum, before the transaction), and a refused attempt or a
 * release costs no revocation. A kept lease is handed out only while it surely lives a while more, and a
 * grant made with it counts only once its keep-alive says it lives its whole TTL from then on; a process
 * that dies leaves its kept leases to run out by their TTL, holding nothing.
 */
export class EtcdLeasePool {
  private readonly kept = new Map<number, PooledLease[]>();
  /**
   * The shortest lease the cluster grants, in whole seconds: its default until a lease comes back longer than
   * asked (the cluster's timing is slower), then that.
   */
  leastLease = DEFAULT_LEAST_LEASE;

  constructor(
    private readonly client: () => Promise<Etcd3Client>,
    private readonly keepAlives: EtcdKeepAlives,
  ) {}

  /** A lease of `seconds` that etcd keeps at least `seconds` from the moment this was called, once `renewed`. */
  async take(seconds: number): Promise<TakenLease> {
    const asked = performance.now();
    const shelf = this.kept.get(seconds);
    for (let kept = shelf?.pop(); kept; kept = shelf?.pop()) {
      if (kept.until - asked < MARGIN) continue;
      const renewed = this.keepAlives.renew([kept.id]).then(([ttl]) => {
        if (typeof ttl !== 'number' || ttl < seconds) {
          throw ttl instanceof Error ? ttl : new Error('a lease kept for the next grant was gone');
        }
        this.granted(seconds, ttl);
      });
      // awaited by the grant; a failure here is the grant's
      renewed.catch(() => undefined);
      return { lease: { id: kept.id, until: asked + seconds * 1000 }, renewed };
    }
    const client = await this.client();
    const granted = await client.leaseClient.leaseGrant({ TTL: seconds });
    this.granted(seconds, Number(granted.TTL));
    return { lease: { id: granted.ID, until: asked + Number(granted.TTL) * 1000 }, renewed: Promise.resolve() };
  }

  /** etcd gave a lease of `ttl` s for `seconds` asked: a longer one is its least lease. */
  private granted(seconds: number, ttl: number): void {
    if (ttl > seconds) this.leastLease = Math.max(this.leastLease, ttl);
  }

  /** Keeps a lease that holds no key of ours any more, for the next grant of `seconds`. */
  give(lease: PooledLease, seconds: number): void {
    if (lease.until - performance.now() < MARGIN) return;
    const shelf = this.kept.get(seconds) ?? [];
    if (shelf.length >= CAPACITY) {
      void this.revoke(lease.id);
      return;
    }
    shelf.push(lease);
    this.kept.set(seconds, shelf);
  }

  /** Revokes every kept lease. */
  async close(): Promise<void> {
    const leases = [...this.kept.values()].flat();
    this.kept.clear();
    await Promise.all(leases.map((lease) => this.revoke(lease.id)));
  }

  private async revoke(id: string): Promise<void> {
    const client = await this.client().catch(() => undefined);
    await client?.leaseClient.leaseRevoke({ ID: id }).catch(() => undefined);
  }
}
