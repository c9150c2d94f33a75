import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import { LockStoreError } from '../../errors/lock-store.error.js';
import type {
  AcquireRequest,
  AcquireResult,
  LeaseRenewal,
  LockState,
  ReleaseWatch,
} from '../../interfaces/lease.interface.js';
import type { LockStore, LockStoreHealth } from '../../interfaces/lock-store.interface.js';
import type { LockStoreCapabilities } from '../../interfaces/store-capabilities.interface.js';
import type { HandOverResult } from '../../interfaces/waiting-line.interface.js';
import { createEtcdClients, type Etcd3Client } from './etcd-client.js';
import { EtcdGrants } from './etcd-grants.js';
import { EtcdKeepAlives } from './etcd-keep-alives.js';
import { EtcdMembers } from './etcd-members.js';
import { etcdResourceKeys, type EtcdResourceKeys } from './etcd-keys.js';
import { inspectTxn, permissionProbeTxn, releaseTxn } from './etcd-transactions.js';
import { EtcdLeaseBook } from './etcd-lease-book.js';
import { EtcdListing } from './etcd-listing.js';
import { EtcdLeasePool } from './etcd-lease-pool.js';
import { remainingLease } from './etcd-lease-remaining.js';
import { EtcdLine } from './etcd-line.js';
import { EtcdRecords } from './etcd-records.js';
import { EtcdRefusals } from './etcd-refusals.js';
import { EtcdReleaseWatcher } from './etcd-release-watcher.js';
import { revokeLease } from './etcd-spare-lease.js';
import type { WatchedRoom } from './etcd-watch-room.js';
import { MIN_ETCD_TTL, resolveEtcdOptions, validateEtcdTtl, type EtcdLockStoreOptions } from './etcd-options.js';
import { etcdFailure } from './etcd-failure.js';

/** How long a resource stays watched after its last waiter (as the Redis store lingers on a channel). */
const WATCH_LINGER = 2000;
/**
 * How long after its end etcd may still hold a lease: it looks for the leases that ran out every 500 ms, and
 * their revocation is a write the cluster agrees on (slower on a loaded machine).
 */
const EXPIRY_LAG = 1000;

/**
 * A lock store on an etcd cluster (v3 API, through the optional `etcd3` package). A lease is an etcd lease of
 * `ttl` rounded up to whole seconds plus the resource's key, written in a transaction only while the key does
 * not exist (`create_revision == 0`) and nobody waits ahead of us; the fence is the revision of that grant.
 * Release and extend check the key's value (the token). Waiting processes stand in a line per resource,
 * ordered by revision as etcd's own lock recipe orders them; waiters hear releases through one watch stream
 * per store, renewals go through one keep-alive stream per store. Every write is agreed by a quorum of the
 * cluster: a failover of the leader loses no lease and no fence.
 *
 * etcd counts lease TTLs in whole seconds: a ttl of 1500 ms becomes a 2 s etcd lease (at least the cluster's
 * own minimum, 1.5 election timeouts), while the holder's validity stays on the 1500 ms it asked for. A ttl
 * under 1 s is refused.
 */
export class EtcdLockStore implements LockStore {
  /**
   * Its ttl rules (leases of whole seconds, at least one; keeps that end within a window), its line of
   * waiting processes per resource, the response records of idempotent requests, the listing and forced
   * releases; no permits yet.
   */
  readonly capabilities: LockStoreCapabilities;
  private readonly prefix: string;
  private readonly members: Promise<EtcdMembers>;
  /** The members' unary calls, each failing over to the next member (see EtcdMembers). */
  private readonly client: Promise<Etcd3Client>;
  private readonly ownsClient: boolean;
  private readonly keepAlives: EtcdKeepAlives;
  private readonly watcher: EtcdReleaseWatcher;
  private readonly line: EtcdLine;
  private readonly pool: EtcdLeasePool;
  private readonly book: EtcdLeaseBook;
  private readonly refusals = new EtcdRefusals();
  private readonly grants: EtcdGrants;
  private closed = false;

  /** @throws LockConfigurationError when an option cannot work */
  constructor(options: EtcdLockStoreOptions) {
    const resolved = resolveEtcdOptions(options);
    this.prefix = resolved.keyPrefix;
    this.ownsClient = resolved.client === undefined;
    const clients = resolved.client
      ? Promise.resolve([resolved.client])
      : createEtcdClients({
          hosts: resolved.hosts,
          auth: resolved.auth,
          credentials: resolved.credentials,
          timeout: resolved.timeout,
        });
    const names = resolved.client ? ['the etcd3 client given'] : resolved.hosts;
    this.members = clients.then((made) => new EtcdMembers(made, names));
    this.client = this.members.then((members) => members.routed);
    // a missing etcd3 package is reported by the first call (verify() at startup); never unhandled
    this.client.catch(() => undefined);
    const members = (): Promise<EtcdMembers> => this.members;
    this.keepAlives = new EtcdKeepAlives(members, resolved.timeout);
    this.watcher = new EtcdReleaseWatcher(members, { linger: WATCH_LINGER, timeout: resolved.timeout });
    this.line = new EtcdLine(members, this.keepAlives, resolved.sessionTtl);
    this.pool = new EtcdLeasePool(() => this.client, this.keepAlives);
    this.book = new EtcdLeaseBook({
      members,
      keepAlives: this.keepAlives,
      pool: this.pool,
      keysOf: (key) => this.keysOf(key),
      timeout: resolved.timeout,
    });
    const access = { prefix: () => this.prefix, run: this.run.bind(this) };
    // the listing and forced releases: one object, both capabilities
    const listing = new EtcdListing(access);
    this.capabilities = {
      limits: { minTtl: MIN_ETCD_TTL, keepWithin: (ms) => this.keepWithin(ms) },
      line: {
        handOver: (key, token, next) => this.handOver(key, token, next),
        leaveLine: (key) => this.leaveLine(key),
      },
      records: new EtcdRecords(access),
      listing,
      revoking: listing,
      absent: { permits: 'the etcd store has no semaphores or readers-writer locks yet' },
    };
    this.grants = new EtcdGrants({
      line: this.line,
      keepAlives: this.keepAlives,
      pool: this.pool,
      book: this.book,
      refusals: this.refusals,
      leaveLine: (key) => this.leaveLine(key),
    });
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    validateEtcdTtl(request.ttl);
    const keys = this.keysOf(request.key);
    return this.run('acquire', request.key, (client) => this.grants.acquire(client, request, keys));
  }

  async release(key: string, token: string): Promise<boolean> {
    const keys = this.keysOf(key);
    return this.run('release', key, async (client) => {
      const reply = await client.kv.txn(releaseTxn(keys, token));
      const held = this.book.end(token);
      if (!reply.succeeded) return false;
      // the lease holds nothing any more: it serves our next grant of its length, or runs out by its TTL
      const lease = reply.responses[0].response_delete_range?.prev_kvs?.[0]?.lease;
      if (held && lease === held.id) this.pool.give(held, held.seconds);
      else if (lease) revokeLease(client, lease);
      return true;
    });
  }

  /** See `WaitingLine.handOver`. */
  private async handOver(key: string, token: string, next: AcquireRequest): Promise<HandOverResult> {
    validateEtcdTtl(next.ttl);
    const keys = this.keysOf(key);
    // the line has one place per store: with two waiting queues here (two managers), one could starve the other
    if (this.watcher.watchers(this.roomOf(keys)) !== 1) {
      return { released: await this.release(key, token), handedOver: false };
    }
    return this.run('release', key, (client) => this.grants.handOver(client, keys, token, next));
  }

  /** See `WaitingLine.leaveLine`. */
  private async leaveLine(key: string): Promise<void> {
    if (this.closed) return;
    const keys = this.keysOf(key);
    await this.run('leave the line of', key, () => this.line.leave(keys));
  }

  /**
   * The longest keep that surely ends within `ms`: whole seconds, counting etcd's lag in dropping a lease that ran
   * out, and no shorter than the least lease the cluster grants (one would last longer than asked); `0` when none
   * fits.
   */
  private keepWithin(ms: number): number {
    const seconds = Math.floor((ms - EXPIRY_LAG) / 1000);
    return seconds >= this.pool.leastLease ? seconds * 1000 : 0;
  }

  async extend(key: string, token: string, ttl: number): Promise<boolean> {
    const [outcome] = await this.extendMany([{ key, token, ttl }]);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  /** See `EtcdLeaseBook.renew`. */
  extendMany(renewals: readonly LeaseRenewal[]): Promise<Array<boolean | Error>> {
    return this.book.renew(renewals);
  }

  async inspect(key: string): Promise<LockState> {
    const keys = this.keysOf(key);
    return this.run('inspect', key, async (client) => {
      const reply = await client.kv.txn(inspectTxn(keys));
      const [current] = reply.responses[0].response_range?.kvs ?? [];
      const [holder] = reply.responses[1].response_range?.kvs ?? [];
      const [fence] = reply.responses[2].response_range?.kvs ?? [];
      const fenceField = fence ? { fence: Number(fence.mod_revision) } : {};
      if (!current) return { held: false, ...fenceField };
      const remainingTtl = await remainingLease(client, current.lease);
      return {
        held: true,
        ...(remainingTtl === undefined ? {} : { remainingTtl }),
        ...fenceField,
        // the record of the same lease only: one left by a lease deleted from outside describes nobody
        ...(holder && holder.lease === current.lease ? { holder: Buffer.from(holder.value).toString('utf8') } : {}),
      };
    });
  }

  async watch(key: string, since?: number): Promise<ReleaseWatch> {
    const keys = this.keysOf(key);
    const room = this.roomOf(keys);
    return this.watcher.watch(room, since, this.refusals.takeWatchStart(keys, since));
  }

  /**
   * Checks that the cluster answers and that this client may read and write the store's keys, without
   * writing anything (etcd checks the permissions of both branches of a transaction).
   * @throws LockStoreError naming what failed
   */
  async verify(): Promise<void> {
    await this.run('connect', undefined, async (client) => {
      await client.maintenance.status();
      const probe = this.keysOf('__nestjs-lock:verify__').lock;
      await client.kv.txn(permissionProbeTxn(probe));
    });
  }

  /** One round trip to a member: it answers and knows a leader. */
  async health(): Promise<LockStoreHealth> {
    await this.run('check its health', undefined, async (client) => {
      const status = await client.maintenance.status();
      if (!status.leader || status.leader === '0') throw new Error('the etcd member answering knows no leader');
    });
    return {};
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.watcher.close();
    await Promise.all([this.line.close().catch(() => undefined), this.pool.close()]);
    this.keepAlives.close();
    if (this.ownsClient) {
      const members = await this.members.catch(() => undefined);
      members?.close();
    }
  }

  private roomOf(keys: EtcdResourceKeys): WatchedRoom {
    return {
      start: keys.room,
      end: keys.roomEnd,
      lock: keys.lock,
      wasAhead: (createRevision) => this.line.isAhead(keys, createRevision),
    };
  }

  private keysOf(key: string): EtcdResourceKeys {
    return etcdResourceKeys(this.prefix, key);
  }

  private async run<T>(
    operation: string,
    key: string | undefined,
    command: (client: Etcd3Client) => Promise<T>,
  ): Promise<T> {
    if (this.closed) throw new LockStoreError(operation, key, undefined, 'the etcd store is closed');
    let client: Etcd3Client;
    try {
      client = await this.client;
    } catch (error) {
      // a missing etcd3 package is the application's configuration, not an outage
      throw error instanceof LockConfigurationError ? error : this.storeError(operation, key, error);
    }
    try {
      return await command(client);
    } catch (error) {
      if (isLeaseNotFound(error)) this.line.resetSession();
      throw this.storeError(operation, key, error);
    }
  }

  private storeError(operation: string, key: string | undefined, error: unknown): LockStoreError {
    if (error instanceof LockStoreError) return error;
    return new LockStoreError(operation, key, error, etcdFailure(error));
  }
}

function isLeaseNotFound(error: unknown): boolean {
  return error instanceof Error && /lease not found/.test(error.message);
}
