import { performance } from 'node:perf_hooks';
import { LockStoreError } from '../../errors/lock-store.error.js';
import type { LeaseRenewal } from '../../interfaces/lease.interface.js';
import type { Etcd3Client } from './etcd-client.js';
import type { EtcdKeepAlives } from './etcd-keep-alives.js';
import type { EtcdResourceKeys } from './etcd-keys.js';
import type { EtcdLeasePool, PooledLease } from './etcd-lease-pool.js';
import type { EtcdMembers } from './etcd-members.js';
import { leaseSeconds, MIN_ETCD_TTL } from './etcd-options.js';
import { moveTxn, readLocksTxn } from './etcd-transactions.js';

/** What the store knows of a lease it granted: the etcd lease behind it, its length, until when etcd keeps it. */
export interface HeldLease extends PooledLease {
  readonly seconds: number;
  until: number;
}

/** What the book needs of its store. */
export interface EtcdLeaseBookDeps {
  readonly members: () => Promise<EtcdMembers>;
  readonly keepAlives: EtcdKeepAlives;
  readonly pool: EtcdLeasePool;
  readonly keysOf: (key: string) => EtcdResourceKeys;
  /** Deadline of a call, in ms. */
  readonly timeout: number;
}

/** The least time, in ms, a renewal waits for its answers (a quarter of the lease otherwise, at most `timeout`). */
const RENEWAL_TIMEOUT_FLOOR = 500;
/** etcd's default limit of operations in one transaction (`--max-txn-ops`). */
const MAX_TXN_OPS = 128;
/** Leases recorded between two sweeps of the records of leases that ended without a release (lost, kept). */
const SWEEP_EVERY = 256;

/**
 * The leases one etcd store granted, by token, and their renewal: one keep-alive per etcd lease on the shared
 * stream plus one read of the keys (per 128) to check each still holds its token. A renewal to another length
 * than the lease was granted with moves its key to a new etcd lease of that length (etcd cannot change a
 * lease's TTL).
 */
export class EtcdLeaseBook {
  private readonly leases = new Map<string, HeldLease>();
  /** The lease each token's key is being moved to, while the move is on its way (see `move`). */
  private readonly moving = new Map<string, string>();
  private recorded = 0;

  constructor(private readonly deps: EtcdLeaseBookDeps) {}

  /**
   * Records a lease we granted. A lease that ends without a release (lost, or kept for `holdAtLeast`) leaves
   * its record: every so often, records of leases etcd has surely dropped go.
   */
  record(token: string, lease: HeldLease): void {
    this.leases.set(token, lease);
    if (++this.recorded % SWEEP_EVERY !== 0) return;
    const now = performance.now();
    for (const [held, known] of this.leases) if (known.until < now) this.leases.delete(held);
  }

  /** Forgets the lease of `token` (released, handed on) and says what it was, when we knew it. */
  end(token: string): HeldLease | undefined {
    const held = this.leases.get(token);
    this.leases.delete(token);
    return held;
  }

  /** Renews leases in one batch; each entry is the outcome of `extend` or the error it met. */
  async renew(renewals: readonly LeaseRenewal[]): Promise<Array<boolean | Error>> {
    if (renewals.length === 0) return [];
    const outcomes: Array<boolean | Error> = new Array<boolean | Error>(renewals.length);
    const kept: number[] = [];
    const moved: number[] = [];
    renewals.forEach((renewal, index) => {
      const held = this.leases.get(renewal.token);
      if (held && held.seconds === leaseSeconds(Math.max(renewal.ttl, MIN_ETCD_TTL))) kept.push(index);
      else moved.push(index);
    });
    await Promise.all([
      this.keepAlive(renewals, kept, outcomes),
      ...moved.map(async (index) => {
        outcomes[index] = await this.move(renewals[index]).catch((error: unknown) =>
          renewalError(renewals[index].key, error),
        );
      }),
    ]);
    return outcomes;
  }

  private async keepAlive(
    renewals: readonly LeaseRenewal[],
    indexes: readonly number[],
    outcomes: Array<boolean | Error>,
  ): Promise<void> {
    if (indexes.length === 0) return;
    const ids = indexes.map((index) => (this.leases.get(renewals[index].token) as HeldLease).id);
    // a renewal must fail in time for a second one (on another member) to fit in the lease's last two thirds
    const shortest = Math.min(...indexes.map((index) => renewals[index].ttl));
    const timeout = Math.min(this.deps.timeout, Math.max(RENEWAL_TIMEOUT_FLOOR, Math.floor(shortest / 4)));
    const [ttls, holders] = await Promise.all([
      this.deps.keepAlives.renew(ids, timeout),
      this.holdersOf(
        indexes.map((index) => renewals[index].key),
        timeout,
      ).catch((error: unknown) => (error instanceof Error ? error : new Error(String(error)))),
    ]);
    indexes.forEach((index, position) => {
      const ttl = ttls[position];
      const renewal = renewals[index];
      const holder = holders instanceof Error ? undefined : holders[position];
      if (ttl instanceof Error) outcomes[index] = renewalError(renewal.key, ttl);
      else if (holders instanceof Error) outcomes[index] = renewalError(renewal.key, holders);
      // the key on another lease than ours (a move whose answer was lost) ends with that lease; ours are the one
      // kept alive, the one a move on its way puts the key on, and the one such a move recorded since
      else
        outcomes[index] =
          ttl > 0 && holder?.token === renewal.token && this.isOurs(renewal.token, holder.lease, ids[position]);
      const held = this.leases.get(renewal.token);
      if (outcomes[index] === true && held && typeof ttl === 'number') held.until = performance.now() + ttl * 1000;
    });
  }

  /** The token each key holds now and its lease (`undefined`: none), read in transactions of at most 128 reads. */
  private async holdersOf(keys: readonly string[], timeout: number): Promise<Array<KeyHolder | undefined>> {
    const members = await this.deps.members();
    const holders: Array<KeyHolder | undefined> = [];
    for (let start = 0; start < keys.length; start += MAX_TXN_OPS) {
      const chunk = keys.slice(start, start + MAX_TXN_OPS);
      const reply = await members.txnWithin(readLocksTxn(chunk.map((key) => this.deps.keysOf(key))), timeout);
      reply.responses.forEach((response) => {
        const [kv] = response.response_range?.kvs ?? [];
        holders.push(kv && { token: Buffer.from(kv.value).toString('utf8'), lease: kv.lease });
      });
    }
    return holders;
  }

  /** Whether `lease`, which a key of `token` is on, is one of ours for it: `kept` (the one kept alive), or a move's. */
  private isOurs(token: string, lease: string, kept: string): boolean {
    return lease === kept || lease === this.moving.get(token) || lease === this.leases.get(token)?.id;
  }

  /** Puts a held key (and its holder record) on a new etcd lease of the asked length, token-checked. */
  private async move(renewal: LeaseRenewal): Promise<boolean> {
    const client: Etcd3Client = (await this.deps.members()).routed;
    const keys = this.deps.keysOf(renewal.key);
    // etcd holds at least a second; holding longer than asked is safe, the holder's validity stays on its ttl
    const seconds = leaseSeconds(Math.max(renewal.ttl, MIN_ETCD_TTL));
    const { lease: pooled, renewed } = await this.deps.pool.take(seconds);
    try {
      // before the move: the key must not go onto a lease that does not last its TTL from now on
      await renewed;
    } catch (error) {
      client.leaseClient.leaseRevoke({ ID: pooled.id }).catch(() => undefined);
      throw error;
    }
    // a move that fails may have been applied, now or later, and the new lease may hold the key: it is neither
    // revoked (that would delete a holder's key) nor pooled (another grant would share it), but runs out by its
    // TTL, and the next renewal on the old lease finds the key is not on it (see keepAlive)
    this.moving.set(renewal.token, pooled.id);
    let reply;
    try {
      reply = await client.kv.txn(moveTxn(keys, renewal.token, pooled.id));
    } finally {
      if (this.moving.get(renewal.token) === pooled.id) this.moving.delete(renewal.token);
    }
    if (!reply.succeeded) {
      this.deps.pool.give(pooled, seconds);
      return false;
    }
    const old = this.leases.get(renewal.token);
    this.record(renewal.token, { id: pooled.id, seconds, until: pooled.until });
    if (old) this.deps.pool.give(old, old.seconds);
    return true;
  }
}

/** Who holds a key: its token, on which etcd lease. */
interface KeyHolder {
  readonly token: string;
  readonly lease: string;
}

function renewalError(key: string, error: unknown): LockStoreError {
  return error instanceof LockStoreError ? error : new LockStoreError('renew', key, error);
}
