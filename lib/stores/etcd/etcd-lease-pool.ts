import { performance } from 'node:perf_hooks';
import type { Etcd3Client } from './etcd-client.js';
import type { EtcdKeepAlives } from './etcd-keep-alives.js';

/** An etcd lease of ours: its id, and the `performance.now()` until which etcd surely keeps it. */
export interface PooledLease {
  readonly id: string;
  readonly until: number;
}

/** Leases kept per length; more are revoked. */
const CAPACITY = 32;
/** A kept lease is not handed out again in the last moments of its life. */
const MARGIN = 500;

/**
 * Leases that hold no key any more (released, refused, moved), kept for the next grant of the same length:
 * a keep-alive (answered by the leader, no disk write) then stands in for a lease grant (a write agreed by a
 * quorum), and a refused attempt or a release costs no revocation. A lease is only handed out again once
 * its keep-alive says it lives, for its whole TTL from then on; a process that dies leaves its kept leases
 * to run out by their TTL, holding nothing.
 */
export class EtcdLeasePool {
  private readonly kept = new Map<number, PooledLease[]>();

  constructor(
    private readonly client: () => Promise<Etcd3Client>,
    private readonly keepAlives: EtcdKeepAlives,
  ) {}

  /** A lease of `seconds` that etcd keeps at least `seconds` from the moment this was called. */
  async take(seconds: number): Promise<PooledLease> {
    const asked = performance.now();
    const shelf = this.kept.get(seconds);
    for (let lease = shelf?.pop(); lease; lease = shelf?.pop()) {
      if (lease.until - asked < MARGIN) continue;
      const [ttl] = await this.keepAlives.renew([lease.id]);
      if (typeof ttl === 'number' && ttl >= seconds) return { id: lease.id, until: asked + seconds * 1000 };
    }
    const client = await this.client();
    const granted = await client.leaseClient.leaseGrant({ TTL: seconds });
    return { id: granted.ID, until: asked + Number(granted.TTL) * 1000 };
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
