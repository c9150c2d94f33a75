import { performance } from 'node:perf_hooks';
import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import { LockStoreError } from '../../errors/lock-store.error.js';
import type {
  AcquireRequest,
  AcquireResult,
  HandOverResult,
  LeaseRenewal,
  LockState,
  LockStore,
  LockStoreHealth,
  ReleaseWatch,
} from '../../interfaces/lock-store.interface.js';
import {
  createEtcdClients,
  type EtcdKeyValue,
  type EtcdRequestOp,
  type EtcdResponseOp,
  type Etcd3Client,
} from './etcd-client.js';
import { EtcdKeepAlives } from './etcd-keep-alives.js';
import { EtcdMembers } from './etcd-members.js';
import { etcdResourceKeys, type EtcdResourceKeys } from './etcd-keys.js';
import { EtcdLeasePool } from './etcd-lease-pool.js';
import { EtcdLine } from './etcd-line.js';
import { EtcdReleaseWatcher, type WatchedRoom } from './etcd-release-watcher.js';
import {
  leaseSeconds,
  MIN_ETCD_TTL,
  resolveEtcdOptions,
  validateEtcdTtl,
  type EtcdLockStoreOptions,
} from './etcd-options.js';

/** How long a resource stays watched after its last waiter (as the Redis store lingers on a channel). */
const WATCH_LINGER = 2000;
/** The least time, in ms, a renewal waits for its answers (a quarter of the lease otherwise, at most `timeout`). */
const RENEWAL_TIMEOUT_FLOOR = 500;
/** etcd's default limit of operations in one transaction (`--max-txn-ops`). */
const MAX_TXN_OPS = 128;
/** Leases recorded between two sweeps of the records of leases that ended without a release (lost, kept). */
const SWEEP_EVERY = 256;
/** Refusals remembered for the watch that follows them (a waiter's), the oldest dropped first. */
const MAX_REFUSALS = 1000;

/** What this store knows of a lease it granted: the etcd lease behind it and its length in whole seconds. */
interface HeldLease {
  readonly id: string;
  readonly seconds: number;
  /** `performance.now()` after which etcd has surely dropped it: the record may go then. */
  until: number;
}

/** A refused attempt: the revision at which it was refused, for the watch that follows to start right after it. */
interface Refusal {
  readonly revision: string;
  readonly at: number;
}

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
  /** The least ttl this store grants, in ms: etcd leases are whole seconds. */
  readonly minTtl = MIN_ETCD_TTL;
  private readonly prefix: string;
  private readonly timeout: number;
  private readonly members: Promise<EtcdMembers>;
  /** The members' unary calls, each failing over to the next member (see EtcdMembers). */
  private readonly client: Promise<Etcd3Client>;
  private readonly ownsClient: boolean;
  private readonly keepAlives: EtcdKeepAlives;
  private readonly watcher: EtcdReleaseWatcher;
  private readonly line: EtcdLine;
  private readonly pool: EtcdLeasePool;
  private readonly leases = new Map<string, HeldLease>();
  private readonly refusals = new Map<string, Refusal>();
  private recorded = 0;
  private closed = false;

  /** @throws LockConfigurationError when an option cannot work */
  constructor(options: EtcdLockStoreOptions) {
    const resolved = resolveEtcdOptions(options);
    this.prefix = resolved.keyPrefix;
    this.timeout = resolved.timeout;
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
    this.watcher = new EtcdReleaseWatcher(members, WATCH_LINGER, resolved.timeout);
    this.line = new EtcdLine(members, this.keepAlives, resolved.sessionTtl);
    this.pool = new EtcdLeasePool(() => this.client, this.keepAlives);
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    validateEtcdTtl(request.ttl);
    const keys = this.keysOf(request.key);
    return this.run('acquire', request.key, async (client) => {
      const seconds = leaseSeconds(request.ttl);
      const pooled = await this.pool.take(seconds);
      let outcome;
      try {
        outcome = await this.attempt(client, request, keys, pooled.id);
        if (outcome === 'stale-line') outcome = await this.attempt(client, request, keys, pooled.id);
      } catch (error) {
        // a failed transaction may still have been applied: that lease may hold our key, so it goes
        this.revoke(client, pooled.id);
        throw error;
      }
      if (outcome === 'stale-line' || !outcome.acquired) {
        // refused: the lease holds nothing, and serves the next attempt
        this.pool.give(pooled, seconds);
        return outcome === 'stale-line' ? { acquired: false, remainingTtl: undefined } : outcome.result;
      }
      if (outcome.lease === pooled.id) {
        this.record(request.token, pooled.id, seconds, pooled.until);
      } else {
        // our earlier grant stood, on its own lease
        this.record(request.token, outcome.lease, outcome.seconds, performance.now() + outcome.seconds * 1000);
        this.pool.give(pooled, seconds);
      }
      return outcome.result;
    });
  }

  /**
   * One grant transaction. Refused: the holder's remaining lease, and a place in the line when the caller
   * waits; `stale-line` when only our outdated idea of the line refused us (ask once more).
   */
  private async attempt(
    client: Etcd3Client,
    request: AcquireRequest,
    keys: EtcdResourceKeys,
    lease: string,
  ): Promise<
    | { acquired: true; lease: string; seconds: number; result: AcquireResult }
    | { acquired: false; result: AcquireResult }
    | 'stale-line'
  > {
    const sentAt = performance.now();
    const join = request.waiting ? [await this.joinOp(keys)] : [];
    const hadPlace = this.line.has(keys);
    const reply = await client.kv.txn({
      compare: [{ key: keys.lock, target: 'Create', result: 'Equal', create_revision: 0 }, this.line.gate(keys)],
      success: [...this.grantOps(keys, request, lease), this.line.leaveOp(keys)],
      failure: [
        { request_range: { key: keys.lock } },
        { request_range: { key: keys.fence } },
        {
          request_range: {
            key: keys.line,
            range_end: keys.lineEnd,
            sort_target: 'Create',
            sort_order: 'Ascend',
            limit: 1,
          },
        },
        ...join,
      ],
    });
    if (reply.succeeded) {
      this.line.forget(keys);
      return {
        acquired: true,
        lease,
        seconds: leaseSeconds(request.ttl),
        result: granted(request, reply.header.revision),
      };
    }
    const [current] = reply.responses[0].response_range?.kvs ?? [];
    const [fence] = reply.responses[1].response_range?.kvs ?? [];
    const [head] = reply.responses[2].response_range?.kvs ?? [];
    if (current && Buffer.from(current.value).toString('utf8') === request.token) {
      // our own grant, whose reply was lost: refresh it, so it lasts its ttl from this attempt on
      return this.regranted(client, request, keys, current, fence);
    }
    if (request.waiting) {
      this.line.joined(keys, joinedRevision(reply.responses[3]), request.waiting.ttl);
      this.remember(keys, { revision: reply.header.revision, at: sentAt });
    }
    if (!current) {
      // free, yet refused by the line: by a waiter ahead of us, or by our own place as we remembered it wrongly
      const headIsOurs = head !== undefined && Buffer.from(head.key).equals(this.line.entryOf(keys));
      if (head === undefined || headIsOurs) {
        if (head === undefined && hadPlace) this.line.forget(keys);
        if (headIsOurs) this.line.joined(keys, head.create_revision, request.waiting?.ttl ?? 0);
        return 'stale-line';
      }
      return { acquired: false, result: { acquired: false, remainingTtl: undefined } };
    }
    return { acquired: false, result: { acquired: false, remainingTtl: await this.remaining(client, current.lease) } };
  }

  /** Our earlier grant stands: its lease is kept alive now, and answered as granted, with its fence. */
  private async regranted(
    client: Etcd3Client,
    request: AcquireRequest,
    keys: EtcdResourceKeys,
    current: EtcdKeyValue,
    fence: EtcdKeyValue | undefined,
  ): Promise<
    | { acquired: true; lease: string; seconds: number; result: AcquireResult }
    | { acquired: false; result: AcquireResult }
  > {
    const [ttl] = await this.keepAlives.renew([current.lease]);
    if (ttl instanceof Error) throw ttl;
    if (ttl === 0) return { acquired: false, result: { acquired: false, remainingTtl: undefined } };
    if (this.line.has(keys)) void this.leaveLine(request.key).catch(() => undefined);
    const revision = fence?.mod_revision ?? current.mod_revision;
    return { acquired: true, lease: current.lease, seconds: ttl, result: granted(request, revision) };
  }

  /** The writes of a grant: the lease's key, its holder record (or none), and the fence. */
  private grantOps(keys: EtcdResourceKeys, request: AcquireRequest, lease: string): EtcdRequestOp[] {
    return [
      { request_put: { key: keys.lock, value: Buffer.from(request.token, 'utf8'), lease } },
      // a grant without a record drops one left by a lease deleted from outside
      request.holder
        ? { request_put: { key: keys.holder, value: Buffer.from(request.holder, 'utf8'), lease } }
        : { request_delete_range: { key: keys.holder } },
      ...(request.fencing ? [{ request_put: { key: keys.fence, value: Buffer.alloc(0) } }] : []),
    ];
  }

  private async joinOp(keys: EtcdResourceKeys): Promise<EtcdRequestOp> {
    return this.line.joinOp(keys);
  }

  async release(key: string, token: string): Promise<boolean> {
    const keys = this.keysOf(key);
    return this.run('release', key, async (client) => {
      const reply = await client.kv.txn({
        compare: [ownedBy(keys, token)],
        success: [
          { request_delete_range: { key: keys.lock, prev_kv: true } },
          { request_delete_range: { key: keys.holder } },
        ],
        failure: [],
      });
      const held = this.leases.get(token);
      this.leases.delete(token);
      if (!reply.succeeded) return false;
      // the lease holds nothing any more: it serves our next grant of its length, or runs out by its TTL
      const lease = reply.responses[0].response_delete_range?.prev_kvs?.[0]?.lease;
      if (held && lease === held.id) this.pool.give(held, held.seconds);
      else if (lease) this.revoke(client, lease);
      return true;
    });
  }

  async handOver(key: string, token: string, next: AcquireRequest): Promise<HandOverResult> {
    validateEtcdTtl(next.ttl);
    const keys = this.keysOf(key);
    // the line has one place per store: with two waiting queues here (two managers), one could starve the other
    if (this.watcher.watchers(this.roomOf(keys)) !== 1) {
      return { released: await this.release(key, token), handedOver: false };
    }
    return this.run('release', key, async (client) => {
      const seconds = leaseSeconds(next.ttl);
      const pooled = await this.pool.take(seconds);
      const lease = pooled.id;
      let reply;
      try {
        reply = await client.kv.txn({
          compare: [ownedBy(keys, token), this.line.gate(keys)],
          success: [...this.grantOps(keys, next, lease), this.line.leaveOp(keys)],
          failure: [
            {
              request_txn: {
                compare: [ownedBy(keys, token)],
                success: [{ request_delete_range: { key: keys.lock } }, { request_delete_range: { key: keys.holder } }],
                failure: [],
              },
            },
          ],
        });
      } catch (error) {
        this.revoke(client, lease);
        throw error;
      }
      const old = this.leases.get(token);
      this.leases.delete(token);
      if (reply.succeeded) {
        this.line.forget(keys);
        this.record(next.token, lease, seconds, pooled.until);
        if (old) this.pool.give(old, old.seconds);
        return next.fencing
          ? { released: true, handedOver: true, fence: Number(reply.header.revision) }
          : { released: true, handedOver: true };
      }
      this.pool.give(pooled, seconds);
      const released = reply.responses[0].response_txn?.succeeded === true;
      if (released && old) this.pool.give(old, old.seconds);
      return released ? { released: true, handedOver: false } : { released: false, handedOver: false };
    });
  }

  async leaveLine(key: string): Promise<void> {
    if (this.closed) return;
    const keys = this.keysOf(key);
    await this.run('leave the line of', key, () => this.line.leave(keys));
  }

  async extend(key: string, token: string, ttl: number): Promise<boolean> {
    const [outcome] = await this.extendMany([{ key, token, ttl }]);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  /**
   * Renews leases in one batch: one keep-alive per etcd lease on the shared stream, and one read of the keys
   * (per 128) to check each still holds its token. A lease asked for another length than it was granted
   * with moves its key to a new etcd lease of that length (etcd cannot change a lease's TTL).
   */
  async extendMany(renewals: readonly LeaseRenewal[]): Promise<Array<boolean | Error>> {
    if (renewals.length === 0) return [];
    const outcomes: Array<boolean | Error> = new Array(renewals.length);
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
        outcomes[index] = await this.moveLease(renewals[index]).catch((error: unknown) =>
          this.storeError('renew', renewals[index].key, error),
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
    const timeout = Math.min(this.timeout, Math.max(RENEWAL_TIMEOUT_FLOOR, Math.floor(shortest / 4)));
    const [ttls, holders] = await Promise.all([
      this.keepAlives.renew(ids, timeout),
      this.holdersOf(
        indexes.map((index) => renewals[index].key),
        timeout,
      ).catch((error: unknown) => asError(error)),
    ]);
    indexes.forEach((index, position) => {
      const ttl = ttls[position];
      const renewal = renewals[index];
      if (ttl instanceof Error) outcomes[index] = this.storeError('renew', renewal.key, ttl);
      else if (holders instanceof Error) outcomes[index] = this.storeError('renew', renewal.key, holders);
      else outcomes[index] = ttl > 0 && holders[position] === renewal.token;
      const held = this.leases.get(renewal.token);
      if (outcomes[index] === true && held && typeof ttl === 'number') held.until = performance.now() + ttl * 1000;
    });
  }

  /** The token each key holds now (`undefined`: none), read in transactions of at most 128 reads. */
  private async holdersOf(keys: readonly string[], timeout: number): Promise<Array<string | undefined>> {
    const members = await this.members;
    const tokens: Array<string | undefined> = [];
    for (let start = 0; start < keys.length; start += MAX_TXN_OPS) {
      const chunk = keys.slice(start, start + MAX_TXN_OPS);
      const reply = await members.txnWithin(
        { compare: [], success: chunk.map((key) => ({ request_range: { key: this.keysOf(key).lock } })), failure: [] },
        timeout,
      );
      reply.responses.forEach((response) => {
        const [kv] = response.response_range?.kvs ?? [];
        tokens.push(kv ? Buffer.from(kv.value).toString('utf8') : undefined);
      });
    }
    return tokens;
  }

  /** Puts a held key (and its holder record) on a new etcd lease of the asked length, token-checked. */
  private async moveLease(renewal: LeaseRenewal): Promise<boolean> {
    const client = await this.client;
    const keys = this.keysOf(renewal.key);
    // etcd holds at least a second; holding longer than asked is safe, the holder's validity stays on its ttl
    const seconds = leaseSeconds(Math.max(renewal.ttl, MIN_ETCD_TTL));
    const pooled = await this.pool.take(seconds);
    const lease = pooled.id;
    let reply;
    try {
      reply = await client.kv.txn({
        compare: [ownedBy(keys, renewal.token)],
        success: [
          { request_put: { key: keys.lock, ignore_value: true, lease } },
          {
            request_txn: {
              compare: [{ key: keys.holder, target: 'Create', result: 'Greater', create_revision: 0 }],
              success: [{ request_put: { key: keys.holder, ignore_value: true, lease } }],
              failure: [],
            },
          },
        ],
        failure: [],
      });
    } catch (error) {
      this.revoke(client, lease);
      throw error;
    }
    if (!reply.succeeded) {
      this.pool.give(pooled, seconds);
      return false;
    }
    const old = this.leases.get(renewal.token);
    this.record(renewal.token, lease, seconds, pooled.until);
    if (old) this.pool.give(old, old.seconds);
    return true;
  }

  async inspect(key: string): Promise<LockState> {
    const keys = this.keysOf(key);
    return this.run('inspect', key, async (client) => {
      const reply = await client.kv.txn({
        compare: [],
        success: [
          { request_range: { key: keys.lock } },
          { request_range: { key: keys.holder } },
          { request_range: { key: keys.fence } },
        ],
        failure: [],
      });
      const [current] = reply.responses[0].response_range?.kvs ?? [];
      const [holder] = reply.responses[1].response_range?.kvs ?? [];
      const [fence] = reply.responses[2].response_range?.kvs ?? [];
      const fenceField = fence ? { fence: Number(fence.mod_revision) } : {};
      if (!current) return { held: false, ...fenceField };
      const remainingTtl = await this.remaining(client, current.lease);
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
    const id = keys.room.toString('latin1');
    const refusal = this.refusals.get(id);
    this.refusals.delete(id);
    // a refusal at or after `since` tells the revision from which on nothing may be missed
    const start =
      refusal && since !== undefined && refusal.at >= since ? { afterRevision: refusal.revision, since } : undefined;
    return this.watcher.watch(room, since, start);
  }

  /**
   * Checks that the cluster answers and that this client may read and write the store's keys, without
   * writing anything (etcd checks the permissions of both branches of a transaction).
   * @throws LockStoreError naming what failed
   */
  async verify(): Promise<void> {
    await this.run('reach', undefined, async (client) => {
      await client.maintenance.status();
      const probe = this.keysOf('__nestjs-lock:verify__').lock;
      await client.kv.txn({
        compare: [{ key: probe, target: 'Create', result: 'Less', create_revision: 0 }],
        success: [{ request_put: { key: probe, value: Buffer.alloc(0) } }],
        failure: [{ request_range: { key: probe } }],
      });
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

  /** The holder's remaining lease in ms, as etcd tells it (whole seconds, rounded up, within the granted TTL). */
  private async remaining(client: Etcd3Client, lease: string): Promise<number | undefined> {
    if (!lease || lease === '0') return undefined;
    const answer = await client.leaseClient.leaseTimeToLive({ ID: lease });
    const ttl = Number(answer.TTL);
    // -1: expired, its keys are being deleted; the watch hears when
    if (ttl < 0) return undefined;
    return Math.min(ttl + 1, Number(answer.grantedTTL)) * 1000;
  }

  /**
   * Records a lease we granted. A lease that ends without a release (lost, or kept for `holdAtLeast`) leaves
   * its record: every so often, records of leases etcd has surely dropped go.
   */
  private record(token: string, id: string, seconds: number, until: number): void {
    this.leases.set(token, { id, seconds, until });
    if (++this.recorded % SWEEP_EVERY !== 0) return;
    const now = performance.now();
    for (const [held, lease] of this.leases) if (lease.until < now) this.leases.delete(held);
  }

  private remember(keys: EtcdResourceKeys, refusal: Refusal): void {
    const id = keys.room.toString('latin1');
    this.refusals.delete(id);
    this.refusals.set(id, refusal);
    if (this.refusals.size > MAX_REFUSALS) this.refusals.delete(this.refusals.keys().next().value as string);
  }

  private revoke(client: Etcd3Client, lease: string): void {
    client.leaseClient.leaseRevoke({ ID: lease }).catch(() => undefined);
  }

  private roomOf(keys: EtcdResourceKeys): WatchedRoom {
    return { start: keys.room, end: keys.roomEnd, ownEntry: this.line.entryOf(keys) };
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
    return new LockStoreError(operation, key, error);
  }
}

/** The comparison that the key is held by `token`. */
function ownedBy(
  keys: EtcdResourceKeys,
  token: string,
): { key: Buffer; target: 'Value'; result: 'Equal'; value: Buffer } {
  return { key: keys.lock, target: 'Value', result: 'Equal', value: Buffer.from(token, 'utf8') };
}

function granted(request: AcquireRequest, revision: string): AcquireResult {
  return request.fencing ? { acquired: true, fence: Number(revision) } : { acquired: true };
}

/** The revision of our place from the join operation: the put's, or the place's own when it existed. */
function joinedRevision(response: EtcdResponseOp | undefined): string | undefined {
  const join = response?.response_txn;
  if (!join) return undefined;
  if (join.succeeded) return join.responses[0]?.response_put?.header.revision;
  return join.responses[0]?.response_range?.kvs[0]?.create_revision;
}

function isLeaseNotFound(error: unknown): boolean {
  return error instanceof Error && /lease not found/.test(error.message);
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
