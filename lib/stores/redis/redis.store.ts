import { performance } from 'node:perf_hooks';
import { newOwnerId } from '../../utils/owner-id.js';
import { isOne } from './client/reply.js';
import type { RedisClientPort } from './client/redis-client-port.js';
import type { LockStoreError } from '../../errors/lock-store.error.js';
import type {
  AcquireRequest,
  AcquireResult,
  LeaseRenewal,
  LockState,
  ReleaseWatch,
} from '../../interfaces/lease.interface.js';
import type { LockStore, LockStoreHealth, LockStoreVerification } from '../../interfaces/lock-store.interface.js';
import type { LeaseLimits } from '../../interfaces/lease-limits.interface.js';
import { resourceKeys, type ResourceKeys } from './resource-keys.js';
import { toClientPort } from './client/client-port.js';
import { closeClient } from './close-client.js';
import { commandTimeoutOf, isCluster } from './client/port-settings.js';
import { groupByNode, subscriberClient } from './cluster-client.js';
import { ConnectionWatch, unreachableServer } from './connection-failure.js';
import { RedisLine } from './line/redis-line.js';
import type { WaitingLine } from '../../interfaces/waiting-line.interface.js';
import { leaseValue, readStoredLease } from './lease-value.js';
import { RedisPermitStore } from './permits/redis-permit-store.js';
import type { PermitStore } from '../../interfaces/permit-store.interface.js';
import { RedisRecords } from './redis-records.js';
import { RedisListing } from './redis-listing.js';
import type { LockListing, LockRevoking } from '../../interfaces/lock-listing.interface.js';
import type { ResponseRecords } from '../../interfaces/response-records.interface.js';
import { checkRedisStoreOptions, type RedisLockStoreOptions } from './redis-store-options.js';
import { ReleaseSubscriber, SUBSCRIPTION_LINGER } from './release-subscriber.js';
import type { ReplicaAck } from './replica-ack.js';
import { ReplicaConfirmation } from './replica-confirmation.js';
import { extendOnOneServer } from './extend-on-one-server.js';
import { NotifiableWatch } from '../shared/notifiable-watch.js';
import { evalAfterNoScript, runScript, runScriptBatch } from './script-runner.js';
import { ACQUIRE, acquireArgs, EXTEND, RELEASE, releaseArgs } from './scripts/index.js';
import { PASSED_ON } from './scripts/acquire.script.js';
import { isReleased, passedOnLease, wasMarked } from './scripts/release.script.js';
import { isMarkedLease, RELEASE_UNMARKED } from './scripts/release-unmarked.script.js';
import { PassedOnLeases } from './line/passed-on-leases.js';
import { redisHealth, verifyRedis } from './redis-checks.js';
import { isWrongType, pipelineValues, redisStoreError } from './store-error.js';
import { LINE_MODE, lineModeOf, lineTtlOf, UNCOUNTED_LISTENERS } from './line/line-protocol.js';
import { describeWrongType } from './wrong-type.js';

export type { RedisLockStoreOptions } from './redis-store-options.js';

/** How many resources' key names a store remembers (see keysOf). */
const RECENT_KEYS = 4096;

/**
 * A lock store on one Redis or Valkey server, or a Redis Cluster, through ioredis.
 * Every operation is one Lua script on one hash slot; no KEYS or SCAN is ever used. Beside it: the Lua in
 * scripts/, the line of waiting processes in line/, permits in permits/, checks in redis-checks.ts, replicas in
 * replica-confirmation.ts.
 */
export class RedisLockStore implements LockStore {
  /** The store's port on its client: an ioredis or iovalkey client itself, a node-redis or GLIDE client's adapter. */
  readonly client: RedisClientPort;
  /** How long a contended release reserves the key for the process first in line, in ms. */
  private readonly handoffWindow: number;
  /**
   * Its hand-off window; its line of waiting processes (while the window and release notices are on); and
   * semaphores and readers-writer locks on the same keys, fences and notices as its leases (a permit and a
   * mutex lease never share a key: see permits/scripts/permit.lua.ts); and response records, one key each.
   */
  readonly capabilities: {
    readonly limits: LeaseLimits;
    readonly line?: WaitingLine;
    readonly permits: PermitStore;
    readonly records: ResponseRecords;
    readonly listing: LockListing;
    readonly revoking: LockRevoking;
  };
  private readonly prefix: string;
  private readonly owner = newOwnerId();
  private readonly subscriber?: ReleaseSubscriber;
  private readonly publishCommand: string;
  private readonly replicaAck?: ReplicaAck;
  private readonly acceptEvictionRisk: boolean;
  /** The connection errors of a client we own, from its first attempt on (a client of yours is left alone). */
  private readonly connection?: ConnectionWatch;
  private closed = false;
  /** The line of waiting processes, while the hand-off window and release notices are on. */
  private readonly line?: RedisLine;
  private readonly recentKeys = new Map<string, ResourceKeys>();
  /** Keys whose last first ask was refused (as many as RECENT_KEYS): their next first ask is the script. */
  private readonly refusedLately = new Set<string>();
  /** Keys whose last release found the lease marked by a waiter (as many as RECENT_KEYS): their next is RELEASE. */
  private readonly markedLately = new Set<string>();
  /** Leases our releases granted straight to waiters elsewhere: a refusal by one of them needs no PTTL. */
  private readonly passedOn = new PassedOnLeases();
  private readonly replicas = new ReplicaConfirmation({
    client: () => this.client,
    release: (key, token) => this.release(key, token),
    failure: (operation, key, error) => this.failure(operation, key, this.keysOf(key), error),
    keysOf: (key) => this.keysOf(key),
  });

  /** @throws LockConfigurationError when an option is invalid or has an unknown name */
  constructor(private readonly options: RedisLockStoreOptions) {
    this.client = toClientPort(options?.client, 'client', options?.ownsClient === true);
    const settings = checkRedisStoreOptions(options, commandTimeoutOf(this.client));
    this.prefix = settings.keyPrefix;
    this.handoffWindow = settings.handoffWindow;
    this.replicaAck = settings.replicaAck;
    this.acceptEvictionRisk = settings.acceptEvictionRisk;
    if (options.ownsClient) this.connection = new ConnectionWatch(this.client);
    const cluster = isCluster(this.client);
    const notices = settings.releaseNotices;
    this.publishCommand = notices ? (cluster ? 'SPUBLISH' : 'PUBLISH') : '';
    if (notices) {
      this.subscriber = new ReleaseSubscriber(() => subscriberClient(this.client), {
        sharded: cluster,
        owner: this.owner,
        linger: SUBSCRIPTION_LINGER,
        handoffWindow: this.handoffWindow,
        onGrant: (version, fence) => this.line?.grantArrived(version, fence) ?? false,
      });
    }
    // the line serves hand-offs: it needs the window, and notices to call the next in line
    if (this.subscriber && this.handoffWindow > 0) {
      this.line = new RedisLine({
        client: this.client,
        owner: this.owner,
        handoffWindow: this.handoffWindow,
        publish: this.publishCommand,
        subscriber: this.subscriber,
        replicated: this.replicaAck !== undefined,
        keysOf: (key) => this.keysOf(key),
        run: (operation, key, keys, command) => this.run(operation, key, keys, command),
        release: (key, token) => this.release(key, token),
      });
    }
    const permits = new RedisPermitStore(
      {
        client: this.client,
        keyPrefix: this.prefix,
        releaseNotices: notices,
        // permits always go to their line in order: a window of at least 1 ms
        handoffWindow: Math.max(1, this.handoffWindow),
      },
      this.replicaAck,
    );
    // the listing and forced releases: one object, both capabilities
    const listing = new RedisListing({ client: this.client, keyPrefix: this.prefix, publish: this.publishCommand });
    this.capabilities = {
      limits: { handoffWindow: this.handoffWindow },
      ...(this.line ? { line: this.line } : {}),
      permits,
      records: new RedisRecords(this.client, this.prefix),
      listing,
      revoking: listing,
    };
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    const keys = this.keysOf(request.key);
    const { waiting } = request;
    const line = this.line ? lineModeOf(waiting) : LINE_MODE.stayOut;
    const firstAsk = line !== LINE_MODE.leaveWhenGranted;
    // the common case first: a free key, no fence, no place in the line to give up, is one plain SET NX PX;
    // a caller that will wait for a key refused at its last first ask goes straight to the script, which also
    // gives it its place in the line: the SET NX would most likely be refused again, a round trip lost
    const skipsSet = waiting !== undefined && this.refusedLately.has(request.key);
    if (!request.fencing && firstAsk && !skipsSet) {
      let granted: string | null;
      // straight on the client, no wrapper: each async layer would cost every lease a promise
      try {
        granted = await this.client.set(keys.lock, leaseValue(request.token, request.holder), 'PX', request.ttl, 'NX');
      } catch (error) {
        throw await this.failure('acquire', request.key, keys, error);
      }
      if (granted === 'OK') {
        if (this.replicaAck) await this.replicas.confirmGrant(request, keys, this.replicaAck);
        return { acquired: true };
      }
      if (this.refusedLately.size >= RECENT_KEYS) this.refusedLately.clear();
      this.refusedLately.add(request.key);
    }
    // a waiter in the line leaves its request there, so that a release can grant it the lease directly
    const offer = line !== LINE_MODE.stayOut && waiting?.next === true ? this.line?.offer(request) : undefined;
    const passedOn = this.passedOn.tokenOf(request.key);
    const args = acquireArgs(request, this.owner, {
      line,
      lineTtl: lineTtlOf(waiting),
      // a waiter that hears release notices marks the lease, so that its release sends one
      marks: waiting !== undefined && this.subscriber !== undefined,
      ...(offer === undefined ? {} : { offer }),
      ...(passedOn === undefined ? {} : { passedOn }),
    });
    const reply = await this.run('acquire', request.key, keys, () =>
      runScript(this.client, ACQUIRE, [keys.lock, keys.fence, keys.line], args),
    );
    const [granted, value] = reply as [number, number];
    if (!isOne(granted)) return { acquired: false, remainingTtl: this.remainingOf(request.key, value, passedOn) };
    // granted at the first ask: the key is free again, and its next first ask may be a plain SET NX
    if (firstAsk) this.refusedLately.delete(request.key);
    if (offer !== undefined) this.line?.spent(request.key, request.token);
    if (this.replicaAck) await this.replicas.confirmGrant(request, keys, this.replicaAck);
    return request.fencing ? { acquired: true, fence: value } : { acquired: true };
  }

  async release(key: string, token: string): Promise<boolean> {
    const keys = this.keysOf(key);
    if (!this.markedLately.has(key)) {
      let reply: unknown;
      // EVALSHA straight on the client (the uncontended path); a forgotten script runs again by EVAL
      try {
        reply = await this.client.evalsha(RELEASE_UNMARKED.sha, 1, keys.lock, token);
      } catch (error) {
        reply = await this.run('release', key, keys, () =>
          evalAfterNoScript(this.client, RELEASE_UNMARKED, { keys: [keys.lock], args: [token], error }),
        );
      }
      if (!isMarkedLease(reply)) return isOne(reply);
      // still ours, and waited for: the full release passes it on, and so does the next of this key at once
      if (this.markedLately.size >= RECENT_KEYS) this.markedLately.clear();
      this.markedLately.add(key);
    }
    return this.releaseToWaiters(key, keys, token);
  }

  async extend(key: string, token: string, ttl: number): Promise<boolean> {
    const keys = this.keysOf(key);
    const reply = await this.run('extend', key, keys, () => runScript(this.client, EXTEND, [keys.lock], [token, ttl]));
    if (!isOne(reply) || !this.replicaAck) return isOne(reply);
    const [outcome] = await this.replicas.confirmRenewals([{ key, token, ttl }], this.replicaAck);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  async extendMany(renewals: readonly LeaseRenewal[]): Promise<Array<boolean | Error>> {
    if (renewals.length === 0) return [];
    const outcomes: Array<boolean | Error> = [];
    // a Cluster pipeline may only hold keys of slots that one node serves: one batch per node
    const groups = groupByNode(
      this.client,
      renewals.map((renewal) => this.keysOf(renewal.key).lock),
    );
    await Promise.all(
      groups.map(async (group) => {
        const results = await this.extendBatch(group.map((index) => renewals[index]));
        group.forEach((index, position) => (outcomes[index] = results[position]));
      }),
    );
    return outcomes;
  }

  async inspect(key: string): Promise<LockState> {
    const keys = this.keysOf(key);
    const replies = await this.run('inspect', key, keys, async () =>
      pipelineValues(await this.client.pipeline().get(keys.lock).pttl(keys.lock).get(keys.fence).exec()),
    );
    const [current, pttl, fence] = replies as [string | null, number, string | null];
    const stored = readStoredLease(current);
    const held = stored?.lease === true;
    return {
      held,
      ...(held && pttl >= 0 ? { remainingTtl: pttl } : {}),
      ...(fence !== null ? { fence: Number(fence) } : {}),
      ...(held && stored.holder !== undefined ? { holder: stored.holder } : {}),
    };
  }

  async watch(key: string, since?: number): Promise<ReleaseWatch> {
    if (!this.subscriber || this.closed) return NotifiableWatch.timerOnly();
    try {
      const keys = this.keysOf(key);
      return await this.subscriber.watch(this.line?.noticesOf(keys) ?? keys.channel, since);
    } catch {
      // pub/sub refused (ACL, proxy without pub/sub): the waiter falls back to its backoff timer
      return NotifiableWatch.timerOnly();
    }
  }

  /**
   * Checks that the store can work: its scripts load, and no server may evict leases (redis-checks.ts).
   * @throws LockConfigurationError naming each server that may evict leases, its policy and the fix
   * @throws LockStoreError naming the missing permission or the node that does not answer
   */
  async verify(): Promise<LockStoreVerification> {
    return verifyRedis(this.client, { acceptEvictionRisk: this.acceptEvictionRisk, connection: this.connection });
  }

  /**
   * Checks that every server (each master of a Cluster) has the scripts cached, and loads the missing ones.
   * @throws LockStoreError when a server does not answer or may not load scripts
   */
  async health(): Promise<LockStoreHealth> {
    return redisHealth(this.client);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // grants given back must reach the server before the connection goes
    await this.line?.close();
    await Promise.all([this.subscriber?.close(), this.capabilities.permits.close()]);
    if (this.options.ownsClient) await closeClient(this.client);
    this.connection?.stop();
  }

  /** Releases a lease waiters may have marked: tells them, or grants it straight to the first in line (RELEASE). */
  private async releaseToWaiters(key: string, keys: ResourceKeys, token: string): Promise<boolean> {
    // with the line on, every waiting process stands in it: listeners beyond our own are only subscriptions
    // lingering after a wait, and must not hold the key back from us
    const ownListeners = this.line ? UNCOUNTED_LISTENERS : this.subscriber?.isListening(keys.channel) ? 1 : 0;
    const args = releaseArgs(token, {
      channel: keys.channel,
      publish: this.publishCommand,
      owner: this.owner,
      handoffWindow: this.handoffWindow,
      ownListeners,
    });
    let reply: unknown;
    const sentAt = performance.now();
    try {
      reply = await this.client.evalsha(RELEASE.sha, 3, keys.lock, keys.fence, keys.line, ...args);
    } catch (error) {
      const scriptKeys = [keys.lock, keys.fence, keys.line];
      reply = await this.run('release', key, keys, () =>
        evalAfterNoScript(this.client, RELEASE, { keys: scriptKeys, args, error }),
      );
    }
    const passed = passedOnLease(reply);
    if (passed) this.passedOn.passed(key, passed, sentAt);
    // a lease nobody marked: the spell of waiting is over, the next release of this key tries the short one
    if (!wasMarked(reply)) this.markedLately.delete(key);
    return isReleased(reply);
  }

  /**
   * Renews leases that one node serves in one round trip: one EXTEND_MANY run on a single server, a pipeline
   * of EXTEND on a Cluster node (its keys span slots, which one script may not touch).
   */
  private async extendBatch(renewals: readonly LeaseRenewal[]): Promise<Array<boolean | Error>> {
    const calls = renewals.map((renewal) => {
      const keys = this.keysOf(renewal.key);
      return { keys: [keys.lock], args: [renewal.token, renewal.ttl] };
    });
    let replies: unknown[];
    try {
      replies = isCluster(this.client)
        ? await runScriptBatch(this.client, EXTEND, calls)
        : await extendOnOneServer(this.client, calls);
    } catch (error) {
      const unreachable = unreachableServer(this.client, error);
      const failure = redisStoreError('renew', undefined, unreachable?.cause ?? error, unreachable?.detail);
      return renewals.map(() => failure);
    }
    const outcomes = await Promise.all(
      replies.map(async (reply, index) =>
        reply instanceof Error
          ? this.failure('renew', renewals[index].key, this.keysOf(renewals[index].key), reply)
          : isOne(reply),
      ),
    );
    const extended = renewals.filter((_renewal, index) => outcomes[index] === true);
    if (!this.replicaAck || extended.length === 0) return outcomes;
    const confirmed = await this.replicas.confirmRenewals(extended, this.replicaAck);
    return outcomes.map((outcome) => (outcome === true ? (confirmed.shift() as boolean | Error) : outcome));
  }

  /**
   * The holder's remaining lease as ACQUIRE's refusal gives it (`value`): its PTTL, none for a key without expiry,
   * or, when the lease that refused is the one our release of `key` passed on (`passedOn`), the least it has left.
   */
  private remainingOf(key: string, value: number, passedOn: string | undefined): number | undefined {
    if (Number(value) === PASSED_ON && passedOn !== undefined) return this.passedOn.remaining(key, passedOn);
    return value >= 0 ? value : undefined;
  }

  /** The names of a resource's keys, remembered for the keys used lately (a lock is taken and released, often again). */
  private keysOf(key: string): ResourceKeys {
    let keys = this.recentKeys.get(key);
    if (keys === undefined) {
      if (this.recentKeys.size >= RECENT_KEYS) this.recentKeys.clear();
      keys = resourceKeys(this.prefix, key);
      this.recentKeys.set(key, keys);
    }
    return keys;
  }

  private async run<T>(operation: string, key: string, keys: ResourceKeys, command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (error) {
      throw await this.failure(operation, key, keys, error);
    }
  }

  /**
   * The LockStoreError of `operation`, naming the key of another type when Redis refused one (WRONGTYPE), or the
   * server and why when it could not be used, as the startup check says it.
   */
  private async failure(operation: string, key: string, keys: ResourceKeys, error: unknown): Promise<LockStoreError> {
    if (isWrongType(error)) {
      const wrongType = await describeWrongType(this.client, operation, keys);
      return redisStoreError(operation, key, error, wrongType?.detail, wrongType?.keyedDetail);
    }
    const unreachable = unreachableServer(this.client, error);
    return redisStoreError(operation, key, unreachable?.cause ?? error, unreachable?.detail);
  }
}
