import type { Etcd3Client } from './etcd-client.js';
import type { EtcdLeasePool, PooledLease } from './etcd-lease-pool.js';

/** A lease taken from the pool that ended up holding nothing (a refused attempt, a hand-over not made). */
export interface SpareLease {
  readonly lease: PooledLease;
  /** The pool's renewal of the lease (see `TakenLease.renewed` in etcd-lease-pool.ts). */
  readonly renewed: Promise<void>;
  /** Its length, in whole seconds. */
  readonly seconds: number;
}

/** Keeps a lease that holds nothing for the next grant once its renewal came through, else revokes it. */
export function keepSpare(pool: EtcdLeasePool, client: Etcd3Client, { lease, renewed, seconds }: SpareLease): void {
  renewed.then(
    () => pool.give(lease, seconds),
    () => revokeLease(client, lease.id),
  );
}

/** Revokes `lease` (deleting what it holds) without waiting; if that fails, the lease runs out by its TTL. */
export function revokeLease(client: Etcd3Client, lease: string): void {
  client.leaseClient.leaseRevoke({ ID: lease }).catch(() => undefined);
}
