import { newOwnerId } from '../../utils/owner-id.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { Cluster, Redis } from 'ioredis';
import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import { LockStoreError } from '../../errors/lock-store.error.js';
import type {
  AcquireRequest,
  AcquireResult,
  DirectGrant,
  HandOverResult,
  LeaseRenewal,
  LockState,
  LockStore,
  LockStoreHealth,
  LockStoreVerification,
  ReleaseWatch,
} from '../../interfaces/lock-store.interface.js';
import { MAX_DURATION } from '../../utils/duration.js';
import { keySlot } from '../../utils/key-slot.js';
import { checkOptionNames, REDIS_STORE_OPTIONS } from '../../options/option-names.js';
import { quoted } from '../../utils/printable.js';
import { resourceKeys, type ResourceKeys } from './resource-keys.js';
import { validateBoolean, validateInteger, validateKeyPrefix } from '../../options/validate-options.js';
import { closeClient } from './close-client.js';
import { ConnectionWatch, describeConnectionFailure } from './connection-failure.js';
import { checkEviction, judgeEviction, type EvictionCheck } from './eviction-policy.js';
import { DirectGrants } from './direct-grants.js';
import { leaseValue, readStoredLease } from './lease-value.js';
import { labelOfServer } from './node-label.js';
import { ReleaseSubscriber } from './release-subscriber.js';
import {
  awaitReplicas,
  resolveReplicaAck,
  type ReplicaAck,
  type ReplicaAckOptions,
  type ReplicaAckOutcome,
} from './replica-ack.js';
import { extendOnOneServer } from './extend-on-one-server.js';
import { NotifiableWatch } from '../notifiable-watch.js';
import { runScript, runScriptBatch } from './script-runner.js';
import {
  ACQUIRE,
  acquireArgs,
  ALL_SCRIPTS,
  EXTEND,
  HAND_OVER,
  handOverArgs,
  RELEASE,
  releaseArgs,
  type ReleaseCall,
} from './scripts/index.js';
import { LINE_MODE, lineModeOf, ownChannel, UNCOUNTED_LISTENERS } from './waiting-line.js';

/** Options of {@link RedisLockStore}. */
export interface RedisLockStoreOptions {
  /** An ioredis `Redis` or `Cluster` client. */
  readonly client: Redis | Cluster;
  /**
   * Namespace of every key and channel: non-empty, printable, without `*?[]\\{}` (see README, Options).
   * @default 'lock:'
   */
  readonly keyPrefix?: string;
  /** Close `client` on `close()`: only for a client the store's creator made for it. @default false */
  readonly ownsClient?: boolean;
  /** Wake waiters by pub/sub release notices; off means waiters rely on backoff alone. @default true */
  readonly releaseNotices?: boolean;
  /**
   * After releasing a key that other processes wait for, reserve it against this store for this many ms
   * so a waiter elsewhere takes it next instead of this process re-taking it. `0` turns it off. A manager
   * using the store keeps every ttl at least twice as long (a waiter that died first in line costs the
   * others one window, which must stay well below what a crashed holder costs).
   * @default 20
   */
  readonly handoffWindow?: number;
  /**
   * Count a grant or renewal only once this many replicas have it (`WAIT` on the master that took it).
   * A grant they do not acknowledge in time is released and reported as a `LockStoreError`; a renewal
   * they do not acknowledge fails like any store error, and the holder keeps its earlier validity.
   * Off by default: replication is asynchronous, so a failover can lose a lease written just before it.
   * @example { replicas: 1, timeout: 50 }
   */
  readonly replicaAck?: ReplicaAckOptions;
  /**
   * Start even when a server may evict keys (`maxmemory` set with a `maxmemory-policy` other than
   * `noeviction`): `verify()` then warns instead of failing. An evicted lease lets a second holder in; its
   * holder hears of it (`taken`) at its next renewal.
   * @default false
   */
  readonly acceptEvictionRisk?: boolean;
}

const WRONG_TYPE = /WRONGTYPE/;
/** The hand-off window of a store that sets none, in ms. */
export const DEFAULT_HANDOFF_WINDOW = 20;
/** The type of value each key of a resource holds, as Redis `TYPE` names it. */
const KEY_TYPES: Readonly<Record<Exclude<keyof ResourceKeys, 'channel'>, string>> = {
  lock: 'string',
  fence: 'string',
  line: 'list',
  offers: 'hash',
};
/** The keys each operation's commands touch: where a WRONGTYPE can come from. */
const KEYS_TOUCHED: Readonly<Record<string, ReadonlyArray<keyof typeof KEY_TYPES>>> = {
  acquire: ['lock', 'fence', 'line', 'offers'],
  // a release may be a hand-over, which grants the next lease (and fence) in the same script
  release: ['lock', 'fence', 'line', 'offers'],
  'leave the line of': ['line', 'offers'],
  extend: ['lock'],
  renew: ['lock'],
  inspect: ['lock', 'fence'],
};

/** {@link RedisLockStoreOptions} other than the client, checked. */
export interface RedisStoreSettings {
  readonly keyPrefix: string;
  readonly handoffWindow: number;
  readonly releaseNotices: boolean;
  readonly replicaAck?: ReplicaAck;
  readonly acceptEvictionRisk: boolean;
}

/**
 * Checks every option of a {@link RedisLockStore} except the client, so that a module can refuse bad
 * options before it opens a connection.
 * @param commandTimeout the client's `commandTimeout`, which a `replicaAck.timeout` must stay under
 * @throws LockConfigurationError naming the option
 */
export function checkRedisStoreOptions(
  options: Omit<RedisLockStoreOptions, 'client'>,
  commandTimeout: number | undefined,
): RedisStoreSettings {
  checkOptionNames(options, REDIS_STORE_OPTIONS);
  if (options.ownsClient !== undefined) validateBoolean('ownsClient', options.ownsClient);
  const replicaAck = resolveReplicaAck(options.replicaAck, commandTimeout);
  return {
    keyPrefix: validateKeyPrefix(options.keyPrefix ?? 'lock:'),
    handoffWindow: validateInteger('handoffWindow', options.handoffWindow ?? DEFAULT_HANDOFF_WINDOW, 0, MAX_DURATION),
    releaseNotices: validateBoolean('releaseNotices', options.releaseNotices ?? true),
    ...(replicaAck === undefined ? {} : { replicaAck }),
    acceptEvictionRisk: validateBoolean('acceptEvictionRisk', options.acceptEvictionRisk ?? false),
  };
}
/** How long a key's channel stays subscribed after its last waiter: a busy key is not re-subscribed per wait. */
export const SUBSCRIPTION_LINGER = 2000;
/** The least a key's line of waiting processes lives after it starts (waits longer than this set it longer). */
const LINE_TTL = 60_000;
/** How many resources' key names a store remembers (see keysOf). */
const RECENT_KEYS = 4096;
/** How long verify() waits for a Cluster client to learn its topology before it reports the cluster unreachable. */
const CLUSTER_READY_TIMEOUT = 10_000;

/**
 * A lock store on one Redis or Valkey server, or a Redis Cluster, through ioredis.
 * Every operation is one Lua script on one hash slot; no KEYS or SCAN is ever used.
 */
export class RedisLockStore implements LockStore {
  readonly client: Redis | Cluster;
  /** How long a contended release reserves the key for the process first in line, in ms. */
  readonly handoffWindow: number;
  private readonly prefix: string;
  private readonly owner = newOwnerId();
  private readonly subscriber?: ReleaseSubscriber;
  private readonly publishCommand: string;
  private readonly replicaAck?: ReplicaAck;
  private readonly acceptEvictionRisk: boolean;
  /** The connection errors of a client we own, from its first attempt on (a client of yours is left alone). */
  private readonly connection?: ConnectionWatch;
  private closed = false;
  private readonly direct = new DirectGrants();
  private readonly givingBack = new Set<Promise<void>>();
  private readonly recentKeys = new Map<string, ResourceKeys>();

  /** @throws LockConfigurationError when an option is invalid or has an unknown name */
  constructor(private readonly options: RedisLockStoreOptions) {
    if (!options?.client || typeof options.client.evalsha !== 'function') {
      throw new LockConfigurationError('client', options?.client, 'expected an ioredis Redis or Cluster instance');
    }
    this.client = options.client;
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
        onGrant: (version, fence) => this.grantArrived(version, fence),
      });
    }
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    const keys = this.keysOf(request.key);
    const { waiting } = request;
    // the line serves hand-offs: with the window off, or without notices to call the next in line, stay out
    const line = this.usesLine ? lineModeOf(waiting) : LINE_MODE.stayOut;
    // the common case first: a free key, no fence, no place in the line to give up, is one plain SET NX PX
    if (!request.fencing && line !== LINE_MODE.leaveWhenGranted) {
      const value = leaseValue(request.token, request.holder);
      const granted = await this.run('acquire', request.key, keys, () =>
        this.client.set(keys.lock, value, 'PX', request.ttl, 'NX'),
      );
      if (granted === 'OK') {
        if (this.replicaAck) await this.confirmGrant(request, keys, this.replicaAck);
        return { acquired: true };
      }
    }
    // a waiter in the line leaves its request there, so that a release can grant it the lease directly
    const offer =
      line !== LINE_MODE.stayOut && waiting?.next === true && this.grantsToWaiters
        ? this.direct.offer(request.key, request.token, request.ttl, performance.now())
        : undefined;
    const args = acquireArgs(request, this.owner, {
      line,
      lineTtl: Math.max(LINE_TTL, Math.ceil(waiting?.ttl ?? 0)),
      // a waiter that hears release notices marks the lease, so that its release sends one
      marks: waiting !== undefined && this.subscriber !== undefined,
      ...(offer === undefined ? {} : { offer }),
    });
    const reply = await this.run('acquire', request.key, keys, () =>
      runScript(this.client, ACQUIRE, [keys.lock, keys.fence, keys.line, keys.offers], args),
    );
    const [granted, value] = reply as [number, number];
    if (granted !== 1) return { acquired: false, remainingTtl: value >= 0 ? value : undefined };
    if (offer !== undefined) this.direct.spent(request.key, request.token);
    if (this.replicaAck) await this.confirmGrant(request, keys, this.replicaAck);
    return request.fencing ? { acquired: true, fence: value } : { acquired: true };
  }

  /** Waiting processes stand in a line per key: it serves hand-offs, so it needs the window and notices. */
  private get usesLine(): boolean {
    return this.handoffWindow > 0 && this.subscriber !== undefined;
  }

  /**
   * Whether a release grants the lease straight to the waiter first in line (see RELEASE): with the line, and
   * without replicaAck, whose grants must each wait for the replicas.
   */
  get grantsToWaiters(): boolean {
    return this.usesLine && !this.replicaAck;
  }

  /** The channel this store's waiters of a key listen on: its own in the line, else the key's. */
  private noticesOf(keys: ResourceKeys): string {
    return this.grantsToWaiters ? ownChannel(keys.channel, this.owner) : keys.channel;
  }

  /** A release granted version `version` to one of our waiters: wake them, or give it back if none will take it. */
  private grantArrived(version: number, fence: number): boolean {
    const outcome = this.direct.arrived(version, fence);
    if (!outcome) return false;
    if ('wake' in outcome) return true;
    this.giveBack(outcome.giveBack.key, outcome.giveBack.token, outcome.giveBack.ttl);
    return false;
  }

  /**
   * Releases a direct grant nobody here will use, so the key passes to the next in line at once; again after a
   * store error (a connection cut right then), while the grant could still be alive: left alone, it would hold
   * the key for its whole ttl.
   */
  private giveBack(key: string, token: string, ttl: number): void {
    const until = performance.now() + ttl;
    const call = (async () => {
      for (let delay = 20; ; delay = Math.min(2 * delay, 500)) {
        try {
          await this.release(key, token);
          return;
        } catch {
          if (this.closed || performance.now() + delay > until) return;
          await sleep(delay);
        }
      }
    })();
    this.givingBack.add(call);
    void call.finally(() => this.givingBack.delete(call));
  }

  takeGrant(key: string, token: string): DirectGrant | undefined {
    return this.direct.take(key, token);
  }

  withdrawOffer(key: string, token: string): void {
    for (const untaken of this.direct.withdraw(key, token)) this.giveBack(untaken.key, untaken.token, untaken.ttl);
  }

  async release(key: string, token: string): Promise<boolean> {
    const keys = this.keysOf(key);
    // with the line on, every waiting process stands in it: listeners beyond our own are only subscriptions
    // lingering after a wait, and must not hold the key back from us
    const ownListeners = this.usesLine ? UNCOUNTED_LISTENERS : this.subscriber?.isListening(keys.channel) ? 1 : 0;
    const args = releaseArgs(token, { ...this.releaseCall(keys), ownListeners });
    const reply = await this.run('release', key, keys, () =>
      runScript(this.client, RELEASE, [keys.lock, keys.fence, keys.line, keys.offers], args),
    );
    return reply === 1;
  }

  async handOver(key: string, token: string, next: AcquireRequest): Promise<HandOverResult> {
    const keys = this.keysOf(key);
    // a hand-over needs the line (it tells whether another process waits), and exactly one local waiting
    // queue: two managers sharing this store share one place in the line, and one could keep the key from the
    // other; with replicaAck each grant must wait for replicas on its own
    if (this.replicaAck || !this.usesLine || this.subscriber?.watchers(this.noticesOf(keys)) !== 1) {
      return { released: await this.release(key, token), handedOver: false };
    }
    const args = handOverArgs(token, this.releaseCall(keys), next);
    const reply = await this.run('release', key, keys, () =>
      runScript(this.client, HAND_OVER, [keys.lock, keys.fence, keys.line, keys.offers], args),
    );
    const [outcome, fence] = reply as [number, number];
    if (outcome === 0) return { released: false, handedOver: false };
    if (outcome === 1) return { released: true, handedOver: false };
    // the next waiter holds it now: requests it left in the line are spent
    this.direct.spent(next.key, next.token);
    return next.fencing ? { released: true, handedOver: true, fence } : { released: true, handedOver: true };
  }

  /** How this store's releases of `keys` tell the waiters, but for its own listeners. */
  private releaseCall(keys: ResourceKeys): Omit<ReleaseCall, 'ownListeners'> {
    return {
      channel: keys.channel,
      publish: this.publishCommand,
      owner: this.owner,
      handoffWindow: this.handoffWindow,
    };
  }

  async leaveLine(key: string): Promise<void> {
    if (!this.usesLine || this.closed) return;
    const keys = this.keysOf(key);
    await this.run('leave the line of', key, keys, async () => {
      const replies =
        (await this.client.pipeline().lrem(keys.line, 0, this.owner).hdel(keys.offers, this.owner).exec()) ?? [];
      for (const [error] of replies) if (error) throw error;
    });
  }

  async extend(key: string, token: string, ttl: number): Promise<boolean> {
    const keys = this.keysOf(key);
    const reply = await this.run('extend', key, keys, () => runScript(this.client, EXTEND, [keys.lock], [token, ttl]));
    if (reply !== 1 || !this.replicaAck) return reply === 1;
    const [outcome] = await this.confirmRenewals([{ key, token, ttl }], this.replicaAck);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  async extendMany(renewals: readonly LeaseRenewal[]): Promise<Array<boolean | Error>> {
    if (renewals.length === 0) return [];
    const outcomes: Array<boolean | Error> = [];
    // a Cluster pipeline may only hold keys of slots that one node serves: one batch per node
    const groups = this.groupByNode(renewals.map((renewal) => this.keysOf(renewal.key).lock));
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
    const replies = await this.run('inspect', key, keys, async () => {
      const results = await this.client.pipeline().get(keys.lock).pttl(keys.lock).get(keys.fence).exec();
      return (results ?? []).map(([error, value]) => {
        if (error) throw error;
        return value;
      });
    });
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
      return await this.subscriber.watch(this.noticesOf(this.keysOf(key)), since);
    } catch {
      // pub/sub refused (ACL, proxy without pub/sub): the waiter falls back to its backoff timer
      return NotifiableWatch.timerOnly();
    }
  }

  /**
   * Checks that the store can work: loads every script (proving the connection and the user's right to
   * run scripts), then reads each server's `maxmemory` and `maxmemory-policy`. On a Cluster it does so on
   * every master, after a PING, naming the node that fails; replicas are not checked (a promoted replica is
   * sent the script again on its first NOSCRIPT).
   * @returns a warning for a server that may evict leases when `acceptEvictionRisk` is set, and one for the
   * servers whose policy could not be read (CONFIG GET refused)
   * @throws LockConfigurationError naming each server that may evict leases, its policy and the fix
   * @throws LockStoreError naming the missing permission or the node that does not answer
   */
  async verify(): Promise<LockStoreVerification> {
    const checks: EvictionCheck[] = [];
    if (!isCluster(this.client)) {
      await this.verifyServer(this.client);
      checks.push(await checkEviction(this.client, labelOfServer(this.client)));
    } else {
      for (const master of await this.masters(this.client)) {
        const address = `${master.options.host}:${master.options.port}`;
        try {
          await master.ping();
        } catch (error) {
          const reason = describeConnectionFailure(error, master.options.commandTimeout) ?? message(error);
          throw new LockStoreError('reach', undefined, error, `master ${address} does not answer PING (${reason})`);
        }
        await this.verifyNode(master, ` on master ${address}`);
        checks.push(await checkEviction(master, `master ${address}`));
      }
    }
    return { warnings: judgeEviction(checks, this.acceptEvictionRisk) };
  }

  /**
   * Loads the scripts on a single server; when it cannot be reached, says which one (`host:port`, never
   * credentials) and why (`ECONNREFUSED`, a timeout, `NOAUTH`, `WRONGPASS`), which ioredis reports only
   * through its `error` events.
   */
  private async verifyServer(client: Redis): Promise<void> {
    // on a client of yours, listen only while checking: a listener of ours would silence ioredis' own warning
    const connection = this.connection ?? new ConnectionWatch(client);
    try {
      await this.verifyNode(client, ` on ${labelOfServer(client)}`, connection);
    } finally {
      if (connection !== this.connection) connection.stop();
    }
  }

  private async verifyNode(node: Redis, where: string, connection?: ConnectionWatch): Promise<void> {
    for (const script of ALL_SCRIPTS) {
      try {
        await node.script('LOAD', script.lua);
      } catch (error) {
        const cause = connection?.causeOf(error) ?? error;
        const unreachable = describeConnectionFailure(cause, node.options.commandTimeout);
        if (unreachable !== undefined) {
          throw new LockStoreError(
            `reach Redis at ${labelOfServer(node)}`,
            undefined,
            withoutArguments(cause),
            unreachable,
          );
        }
        const detail = /NOPERM/.test(message(error))
          ? `the Redis user may not run scripts${where} (${message(error)}); grant it +evalsha +eval +script|load, or +@scripting`
          : `${message(error)}${where}`;
        throw new LockStoreError('load its Lua scripts', undefined, withoutArguments(error), detail);
      }
    }
  }

  /**
   * Asks every server (each master of a Cluster) which of the scripts it has cached, in one round trip
   * each, and loads the missing ones again, so the next lock operation needs no resend.
   * @throws LockStoreError when a server does not answer or may not load scripts
   */
  async health(): Promise<LockStoreHealth> {
    const nodes = isCluster(this.client) ? this.client.nodes('master') : [this.client];
    let reloaded = 0;
    try {
      for (const node of nodes) {
        const cached = (await node.script('EXISTS', ...ALL_SCRIPTS.map((script) => script.sha))) as number[];
        for (const [index, script] of ALL_SCRIPTS.entries()) {
          if (cached[index] === 1) continue;
          await node.script('LOAD', script.lua);
          reloaded++;
        }
      }
    } catch (error) {
      const detail = /NOPERM/.test(message(error))
        ? `the Redis user may not check or load scripts (${message(error)}); grant it +script|exists +script|load`
        : message(error);
      throw new LockStoreError('check its health', undefined, withoutArguments(error), detail);
    }
    return { scriptsLoaded: true, ...(reloaded > 0 ? { scriptsReloaded: reloaded } : {}) };
  }

  /** The masters of a Cluster once the client knows them; a client that never connects fails in bounded time. */
  private async masters(cluster: Cluster): Promise<Redis[]> {
    let timer: NodeJS.Timeout | undefined;
    let lastError: unknown;
    // the client reports why it cannot connect only through 'error' events (e.g. a server without cluster mode)
    const onError = (error: unknown): void => {
      lastError = error;
    };
    cluster.on('error', onError);
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        // ioredis' "Failed to refresh slots cache" carries the node's own answer in lastNodeError
        const cause = (lastError as { lastNodeError?: unknown } | undefined)?.lastNodeError;
        const reason =
          lastError === undefined ? '' : `; last error: ${message(lastError)}${cause ? ` (${message(cause)})` : ''}`;
        reject(new Error(`not ready within ${CLUSTER_READY_TIMEOUT} ms (status ${cluster.status}${reason})`));
      }, CLUSTER_READY_TIMEOUT);
    });
    try {
      // a command waits in the client's offline queue until it has learnt the slots
      await Promise.race([cluster.ping(), timeout]);
    } catch (error) {
      throw new LockStoreError('reach', undefined, error, `Redis Cluster unreachable: ${message(error)}`);
    } finally {
      clearTimeout(timer);
      cluster.off('error', onError);
    }
    const masters = cluster.nodes('master');
    if (masters.length === 0) {
      throw new LockStoreError('reach', undefined, undefined, 'the Cluster client knows no master node');
    }
    return masters;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // grants given back must reach the server before the connection goes
    await Promise.all(this.givingBack);
    await this.subscriber?.close();
    if (this.options.ownsClient) await closeClient(this.client);
    this.connection?.stop();
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
      const failure = new LockStoreError('renew', undefined, withoutArguments(error));
      return renewals.map(() => failure);
    }
    const outcomes = await Promise.all(
      replies.map((reply, index) =>
        reply instanceof Error
          ? this.storeError('renew', renewals[index].key, this.keysOf(renewals[index].key), reply)
          : reply === 1,
      ),
    );
    const extended = renewals.filter((_renewal, index) => outcomes[index] === true);
    if (!this.replicaAck || extended.length === 0) return outcomes;
    const confirmed = await this.confirmRenewals(extended, this.replicaAck);
    return outcomes.map((outcome) => (outcome === true ? (confirmed.shift() as boolean | Error) : outcome));
  }

  /**
   * Waits for the replicas to take a grant; if they do not in time, takes the grant back (token-checked)
   * and fails: a silent grant could pass to a second holder at the next failover.
   */
  private async confirmGrant(request: AcquireRequest, keys: ResourceKeys, ack: ReplicaAck): Promise<void> {
    let outcome: ReplicaAckOutcome | undefined;
    let failure: unknown;
    try {
      outcome = await awaitReplicas(this.client, ack, [keys.lock]);
    } catch (error) {
      failure = error;
    }
    if (outcome && outcome.acknowledged >= ack.replicas && outcome.holders[0] === request.token) return;
    await this.release(request.key, request.token).catch(() => undefined);
    const detail = !outcome
      ? `could not confirm the grant with its replicas (${message(failure)}); it was released`
      : outcome.holders[0] !== request.token
        ? 'the lease was gone from its master right after the grant (a failover?); it was not granted'
        : `only ${outcome.acknowledged} of ${ack.replicas} replicas acknowledged the grant within ${ack.timeout} ms ` +
          '(option replicaAck); it was released, since a failover now could hand the lock to a second holder';
    throw new LockStoreError('acquire', request.key, withoutArguments(failure), detail);
  }

  /**
   * Waits for the replicas to take renewals that one node served: each is `true` once acknowledged, `false`
   * when the key no longer holds the token on that master, or an error (the lease keeps its earlier expiry
   * on the replicas, so the holder must not count the renewal).
   */
  private async confirmRenewals(renewals: readonly LeaseRenewal[], ack: ReplicaAck): Promise<Array<boolean | Error>> {
    let outcome: ReplicaAckOutcome;
    try {
      outcome = await awaitReplicas(
        this.client,
        ack,
        renewals.map((renewal) => this.keysOf(renewal.key).lock),
      );
    } catch (error) {
      return Promise.all(
        renewals.map((renewal) => this.storeError('renew', renewal.key, this.keysOf(renewal.key), error)),
      );
    }
    return renewals.map((renewal, index) => {
      if (outcome.holders[index] !== renewal.token) return false;
      if (outcome.acknowledged >= ack.replicas) return true;
      const detail =
        `only ${outcome.acknowledged} of ${ack.replicas} replicas acknowledged the renewal within ${ack.timeout} ms ` +
        '(option replicaAck); it does not count until they do';
      return new LockStoreError('renew', renewal.key, undefined, detail);
    });
  }

  /** Indexes of `keys` grouped by the node that serves their slot (all in one group on a single server). */
  private groupByNode(keys: readonly string[]): number[][] {
    if (!isCluster(this.client)) return [keys.map((_key, index) => index)];
    const slots = this.client.slots;
    const groups = new Map<string, number[]>();
    keys.forEach((key, index) => {
      const slot = keySlot(key);
      // before the client has learnt the topology, each slot is its own group
      const owner = slots[slot]?.join(';') ?? `slot ${slot}`;
      const group = groups.get(owner);
      if (group) group.push(index);
      else groups.set(owner, [index]);
    });
    return [...groups.values()];
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
      throw await this.storeError(operation, key, keys, error);
    }
  }

  private async storeError(
    operation: string,
    key: string,
    keys: ResourceKeys,
    error: unknown,
  ): Promise<LockStoreError> {
    const detail = WRONG_TYPE.test(message(error)) ? await this.wrongTypeDetail(operation, keys) : undefined;
    return new LockStoreError(operation, key, withoutArguments(error), detail);
  }

  /**
   * Which key of the resource holds another type of value than the one the store keeps there, asked with
   * `TYPE` (Redis does not say which key a WRONGTYPE is about), for a message that names exactly that key.
   */
  private async wrongTypeDetail(operation: string, keys: ResourceKeys): Promise<string> {
    const touched = KEYS_TOUCHED[operation] ?? (Object.keys(KEY_TYPES) as Array<keyof typeof KEY_TYPES>);
    const advice = 'another part of the application uses this name: change keyPrefix or the key';
    try {
      const pipeline = this.client.pipeline();
      for (const field of touched) pipeline.type(keys[field]);
      const types = ((await pipeline.exec()) ?? []).map(([failure, type]) => (failure ? undefined : type));
      const wrong = touched
        .map((field, index) => ({ name: keys[field], type: types[index], expected: KEY_TYPES[field] }))
        .filter(({ type, expected }) => type !== undefined && type !== 'none' && type !== expected);
      if (wrong.length > 0) {
        const described = wrong.map(
          ({ name, type, expected }) =>
            `Redis key ${quoted(name)} holds another type of value (a ${type}, where the store keeps a ${expected})`,
        );
        return `${described.join('; ')}; ${advice}`;
      }
    } catch {
      // the probe failed too: fall back to naming every key the operation touched
    }
    return `one of the Redis keys ${touched.map((field) => quoted(keys[field])).join(', ')} holds another type of value than a lock's; ${advice}`;
  }
}

/**
 * ioredis attaches the failed command to its errors, arguments included; ours carry the lease token, and
 * a failed AUTH carries the password, which would reach every log that prints the LockStoreError with its
 * `cause`. Keeps the command name.
 */
function withoutArguments(error: unknown): unknown {
  const command = error instanceof Error ? (error as { command?: unknown }).command : undefined;
  if (typeof command === 'object' && command !== null) {
    (error as { command: unknown }).command = { name: (command as { name?: unknown }).name };
  }
  return error;
}

/**
 * The subscriber's own client, with the same nodes and options as the store's. ioredis routes SSUBSCRIBE
 * to the master of the channel's slot only with `shardedSubscribers` (one connection per master); without
 * it every SSUBSCRIBE goes to one random node and fails with MOVED for two slots in three.
 */
function subscriberClient(client: Redis | Cluster): Redis | Cluster {
  return isCluster(client) ? client.duplicate([], { shardedSubscribers: true }) : client.duplicate();
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function commandTimeoutOf(client: Redis | Cluster): number | undefined {
  const options = isCluster(client) ? client.options.redisOptions : client.options;
  return typeof options?.commandTimeout === 'number' ? options.commandTimeout : undefined;
}

function isCluster(client: Redis | Cluster): client is Cluster {
  return (client as { isCluster?: boolean }).isCluster === true;
}
