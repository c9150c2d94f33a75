import { performance } from 'node:perf_hooks';
import { newOwnerId } from '../../../utils/owner-id.js';
import { retryUntil } from '../../../utils/retry-until.js';
import { isOne } from '../client/reply.js';
import type { RedisClientPort } from '../client/redis-client-port.js';
import type { LockStoreError } from '../../../errors/lock-store.error.js';
import type { LeaseRenewal, ReleaseWatch } from '../../../interfaces/lease.interface.js';
import type { DirectGrant } from '../../../interfaces/waiting-line.interface.js';
import type {
  PermitHolderState,
  PermitRequest,
  PermitResult,
  PermitState,
  PermitStore,
} from '../../../interfaces/permit-store.interface.js';
import { MAX_DURATION } from '../../../utils/duration.js';
import { checkOptionNames, type OptionNames, type OptionsKind } from '../../../options/option-names.js';
import { validateBoolean, validateInteger, validateKeyPrefix } from '../../../options/validate-options.js';
import { closeClient } from '../close-client.js';
import { toClientPort } from '../client/client-port.js';
import type { RedisLockStoreOptions } from '../redis-store-options.js';
import { isCluster } from '../client/port-settings.js';
import { subscriberClient } from '../cluster-client.js';
import { NotifiableWatch } from '../../shared/notifiable-watch.js';
import { DEFAULT_HANDOFF_WINDOW } from '../../shared/handoff-window.js';
import { REDIS_CLIENT_OPTIONS } from '../redis-store-options.js';
import { ReleaseSubscriber, SUBSCRIPTION_LINGER } from '../release-subscriber.js';
import { runScript, runScriptBatch } from '../script-runner.js';
import { errorMessage, isWrongType, redisStoreError } from '../store-error.js';
import { awaitReplicas, type ReplicaAck } from '../replica-ack.js';
import { unreachableServer } from '../connection-failure.js';
import { permitKeys, permitScriptKeys, type PermitKeys } from './permit-keys.js';
import { PermitGrants, type UntakenGrant } from './permit-grants.js';
import { permitWrongTypeError } from './permit-wrong-type.js';
import { ownChannel } from '../line/line-protocol.js';
import {
  PERMIT_ACQUIRE,
  permitAcquireArgs,
  PERMIT_EXTEND,
  PERMIT_INSPECT,
  PERMIT_LEAVE_LINE,
  permitLeaveLineArgs,
  PERMIT_RELEASE,
  permitReleaseArgs,
  type PermitNotices,
} from './scripts/index.js';
import { checkPermitShape } from '../../../options/permit-shape.js';
import { inUseAs } from '../../shared/permit-codes.js';
import { modeOfCode, permitState } from '../../shared/permit-state.js';

/** Options of {@link RedisPermitStore}. */
export interface RedisPermitStoreOptions {
  /** A Redis client of a shape the store takes (see RedisLockStoreOptions.client). */
  readonly client: RedisLockStoreOptions['client'] | RedisClientPort;
  /**
   * Namespace of every key and channel; the same as the `RedisLockStore` of the same keys, so that a
   * resource's permits, its mutex leases and its fence counter share one slot and one another's keys.
   * @default 'lock:'
   */
  readonly keyPrefix?: string;
  /** Close `client` on `close()`: only for a client the store's creator made for it. @default false */
  readonly ownsClient?: boolean;
  /** Wake waiters by pub/sub release notices; off means waiters rely on their timers alone. @default true */
  readonly releaseNotices?: boolean;
  /**
   * For how many ms a freed permit stays reserved for the waiter first in line: a waiter that is gone
   * costs the others this long, and so do all the waiters of a process that is gone. At least 1 ms: permits
   * are always handed on in the line's order.
   * @default 20
   */
  readonly handoffWindow?: number;
}

/** `RedisPermitStore` constructor options. */
const REDIS_PERMIT_STORE_OPTIONS: OptionsKind = {
  title: 'RedisPermitStore options',
  names: REDIS_CLIENT_OPTIONS satisfies OptionNames<RedisPermitStoreOptions>,
};

/**
 * Semaphores and readers-writer locks on one Redis or Valkey server, or a Redis Cluster, through ioredis:
 * every operation is one Lua script on one hash slot, which reads the resource's permit state in one value and
 * writes it back in one (scripts/permit-state.lua.ts).
 */
export class RedisPermitStore implements PermitStore {
  readonly client: RedisClientPort;
  readonly handoffWindow: number;
  private readonly prefix: string;
  /** Names this store's waiting places in notices, so that only its own waiters wake for them. */
  private readonly owner = newOwnerId();
  private readonly subscriber?: ReleaseSubscriber;
  private readonly publishCommand: string;
  private readonly cluster: boolean;
  /** The offers our waiters left with their places, for the permits releases grant them directly. */
  private readonly grants = new PermitGrants();
  /** Grants nobody here takes, on their way back to the server. */
  private readonly givingBack = new Set<Promise<void>>();
  private closed = false;

  /**
   * @param replicaAck the `replicaAck` of the `RedisLockStore` these permits belong to: a grant or a renewal
   *   counts only once that many replicas took it (WAIT), and no release grants a waiter directly (that grant
   *   would count before any WAIT)
   * @throws LockConfigurationError when an option is invalid or has an unknown name
   */
  constructor(
    private readonly options: RedisPermitStoreOptions,
    private readonly replicaAck?: ReplicaAck,
  ) {
    const client = toClientPort(options?.client, 'client', options?.ownsClient === true);
    checkOptionNames(options, REDIS_PERMIT_STORE_OPTIONS);
    if (options.ownsClient !== undefined) validateBoolean('ownsClient', options.ownsClient);
    this.client = client;
    this.prefix = validateKeyPrefix(options.keyPrefix ?? 'lock:');
    this.handoffWindow = validateInteger(
      'handoffWindow',
      options.handoffWindow ?? DEFAULT_HANDOFF_WINDOW,
      1,
      MAX_DURATION,
    );
    this.cluster = isCluster(this.client);
    const notices = validateBoolean('releaseNotices', options.releaseNotices ?? true);
    this.publishCommand = notices ? (this.cluster ? 'SPUBLISH' : 'PUBLISH') : '';
    if (notices) {
      const client = this.client;
      this.subscriber = new ReleaseSubscriber(() => subscriberClient(client), {
        sharded: this.cluster,
        owner: this.owner,
        linger: SUBSCRIPTION_LINGER,
        handoffWindow: this.handoffWindow,
        onGrant: (version, fence) => this.grantArrived(version, fence),
      });
    }
  }

  async acquire(request: PermitRequest): Promise<PermitResult> {
    const shape = checkPermitShape(request.shape);
    const keys = this.keysOf(request.key);
    // a waiter leaves its offer with its place, for a release to grant it directly (only where it hears so)
    const version =
      request.waiting?.direct && this.subscriber && !this.replicaAck
        ? this.grants.offer(request.key, request.token, request.ttl, performance.now())
        : 0;
    const args = permitAcquireArgs(request, shape, this.owner, this.notices(keys), version, this.hearsGrants(keys));
    let reply: unknown;
    try {
      reply = await this.run('acquire', request.key, keys, () =>
        runScript(this.client, PERMIT_ACQUIRE, permitScriptKeys(keys), args),
      );
    } catch (error) {
      if (version) this.giveBack(this.grants.withdraw(request.token));
      throw error;
    }
    const [outcome, value, ahead] = reply as [number, number | string, number];
    if (isOne(outcome)) {
      this.grants.spent(request.token);
      if (this.replicaAck) await this.confirmGrant(request.key, request.token, this.replicaAck);
      return request.fencing ? { acquired: true, fence: Number(value) } : { acquired: true };
    }
    if (outcome === 2) return { acquired: false, inUseAs: inUseAs(String(value)) };
    const remainingTtl = Number(value) >= 0 ? Number(value) : undefined;
    return ahead >= 0 ? { acquired: false, remainingTtl, ahead } : { acquired: false, remainingTtl };
  }

  async release(key: string, token: string): Promise<boolean> {
    const keys = this.keysOf(key);
    const reply = (await this.run('release', key, keys, () =>
      runScript(
        this.client,
        PERMIT_RELEASE,
        permitScriptKeys(keys),
        permitReleaseArgs(token, this.notices(keys), this.owner),
      ),
    )) as number[];
    // permits it granted to waiters of ours: told here, not by a notice
    for (let index = 1; index + 1 < reply.length; index += 2)
      this.grantArrived(Number(reply[index]), Number(reply[index + 1]));
    return isOne(reply[0]);
  }

  async leaveLine(key: string, token: string): Promise<void> {
    if (this.closed) return;
    const keys = this.keysOf(key);
    try {
      await this.run('leave the line of', key, keys, () =>
        runScript(
          this.client,
          PERMIT_LEAVE_LINE,
          permitScriptKeys(keys),
          permitLeaveLineArgs(token, this.notices(keys)),
        ),
      );
    } catch (error) {
      // the script would have ended a permit a release granted the place: such a grant is given back instead
      this.giveBack(this.grants.withdraw(token));
      throw error;
    }
    this.grants.spent(token);
  }

  takeGrant(key: string, token: string): DirectGrant | undefined {
    return this.grants.take(key, token);
  }

  async extend(key: string, token: string, ttl: number): Promise<boolean> {
    const keys = this.keysOf(key);
    const reply = await this.run('extend', key, keys, () =>
      runScript(this.client, PERMIT_EXTEND, permitScriptKeys(keys), [token, ttl]),
    );
    if (!isOne(reply) || !this.replicaAck) return isOne(reply);
    const [outcome] = await this.confirmRenewals(key, [true], this.replicaAck);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  async extendMany(renewals: readonly LeaseRenewal[]): Promise<Array<boolean | Error>> {
    if (renewals.length === 0) return [];
    // a Cluster pipeline may hold only keys that one node serves: there, each renewal goes on its own
    if (this.cluster) {
      return Promise.all(
        renewals.map((renewal) =>
          this.extend(renewal.key, renewal.token, renewal.ttl).catch((error: unknown) => error as Error),
        ),
      );
    }
    const calls = renewals.map((renewal) => ({
      keys: permitScriptKeys(this.keysOf(renewal.key)),
      args: [renewal.token, renewal.ttl],
    }));
    let replies: unknown[];
    try {
      replies = await runScriptBatch(this.client, PERMIT_EXTEND, calls);
    } catch (error) {
      const unreachable = unreachableServer(this.client, error);
      const failure = redisStoreError('renew', undefined, unreachable?.cause ?? error, unreachable?.detail);
      return renewals.map(() => failure);
    }
    const outcomes = await Promise.all(
      replies.map((reply, index) =>
        reply instanceof Error
          ? this.storeError('renew', renewals[index].key, this.keysOf(renewals[index].key), reply)
          : Promise.resolve(isOne(reply)),
      ),
    );
    return this.replicaAck ? this.confirmRenewals(renewals[0].key, outcomes, this.replicaAck) : outcomes;
  }

  /**
   * Waits for the replicas to take a permit just granted on `key`; if they do not in time, takes it back and
   * fails: after a failover that lost it, the limit would let in one holder more than it counts.
   */
  private async confirmGrant(key: string, token: string, ack: ReplicaAck): Promise<void> {
    let acknowledged: number | undefined;
    let failure: unknown;
    try {
      acknowledged = (await awaitReplicas(this.client, ack, [this.keysOf(key).lock])).acknowledged;
    } catch (error) {
      failure = error;
    }
    if (acknowledged !== undefined && acknowledged >= ack.replicas) return;
    await this.release(key, token).catch(() => undefined);
    const detail =
      acknowledged === undefined
        ? `could not confirm the permit with its replicas (${errorMessage(failure)}); it was released`
        : `only ${acknowledged} of ${ack.replicas} replicas acknowledged the permit within ${ack.timeout} ms ` +
          '(option replicaAck); it was released, since a failover now could let in more holders than the limit';
    throw redisStoreError('acquire', key, failure, detail);
  }

  /**
   * Renewals one server served (`outcomes`, `true` where renewed), counted only once the replicas took them:
   * one WAIT after them all (on the server of `key`). Unacknowledged, a renewal is an error: on the replicas
   * the permit keeps its earlier expiry, so its holder must not count it.
   */
  private async confirmRenewals(
    key: string,
    outcomes: Array<boolean | Error>,
    ack: ReplicaAck,
  ): Promise<Array<boolean | Error>> {
    if (!outcomes.includes(true)) return outcomes;
    let acknowledged: number;
    try {
      acknowledged = (await awaitReplicas(this.client, ack, [this.keysOf(key).lock])).acknowledged;
    } catch (error) {
      const failure = redisStoreError('renew', key, error);
      return outcomes.map((outcome) => (outcome === true ? failure : outcome));
    }
    if (acknowledged >= ack.replicas) return outcomes;
    const failure = redisStoreError(
      'renew',
      key,
      undefined,
      `only ${acknowledged} of ${ack.replicas} replicas acknowledged the renewal within ${ack.timeout} ms ` +
        '(option replicaAck); it does not count until they do',
    );
    return outcomes.map((outcome) => (outcome === true ? failure : outcome));
  }

  async inspect(key: string): Promise<PermitState> {
    const keys = this.keysOf(key);
    const reply = (await this.run('inspect', key, keys, () =>
      runScript(this.client, PERMIT_INSPECT, permitScriptKeys(keys), []),
    )) as Array<string | number>;
    const [shape, fence, waiting] = [String(reply[0]), String(reply[1]), Number(reply[2])];
    const permits: PermitHolderState[] = [];
    for (let index = 3; index + 4 <= reply.length; index += 4) {
      const [mode, remainingTtl, permitFence, holder] = reply.slice(index, index + 4).map(String);
      const permitMode = modeOfCode(mode);
      permits.push({
        ...(permitMode !== undefined ? { mode: permitMode } : {}),
        remainingTtl: Number(remainingTtl),
        ...(permitFence !== '0' ? { fence: Number(permitFence) } : {}),
        ...(holder !== '' ? { holder } : {}),
      });
    }
    return permitState({ shape, permits, waiting, fence: fence === '' ? undefined : Number(fence) });
  }

  async watch(key: string, since?: number, token?: string): Promise<ReleaseWatch> {
    if (!this.subscriber || this.closed) return NotifiableWatch.timerOnly();
    const { channel } = this.keysOf(key);
    try {
      // a waiter also hears its process's own channel, where a release tells it of the permit it granted it
      if (token === undefined) return await this.subscriber.watch(channel, since);
      const watch = await this.subscriber.watch([channel, ownChannel(channel, this.owner)], since);
      this.grants.attach(token, watch);
      const grants = this.grants;
      return {
        // read through: a dropped subscription clears it, and its confirmation after the reconnect sets it again
        get listeningSince() {
          return watch.listeningSince;
        },
        next: (timeout) => watch.next(timeout),
        wake: () => watch.wake(),
        close() {
          grants.detach(token, watch);
          watch.close();
        },
      };
    } catch {
      // pub/sub refused (ACL, proxy without pub/sub): the waiter falls back to its timer
      return NotifiableWatch.timerOnly();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.givingBack);
    await this.subscriber?.close();
    if (this.options.ownsClient) await closeClient(this.client);
  }

  /**
   * A notice on our own channel: a release granted a waiter's request its permit. The grants wake that waiter
   * alone (never the channel's every watch); a grant nobody here will take is given back.
   */
  private grantArrived(version: number, fence: number): boolean {
    this.giveBack(this.grants.arrived(version, fence));
    return false;
  }

  /**
   * Releases a permit granted to a request whose reply was lost, so that it passes to the next in line at once;
   * again after a store error while the permit could still be alive (its token never asks again).
   */
  private giveBack(grant: UntakenGrant | undefined): void {
    if (!grant) return;
    const { key, token, ttl } = grant;
    const call = retryUntil(
      () => this.release(key, token),
      performance.now() + ttl,
      () => this.closed,
    );
    this.givingBack.add(call);
    void call.finally(() => this.givingBack.delete(call));
  }

  /**
   * Whether a notice on this process's own channel of `keys` reaches it now (its subscription confirmed): only
   * then does a grant's notice that reaches nobody say that the process is gone. Before, its first subscription
   * may still be on its way: the release reserves the place a permit instead, which its waiter claims by asking.
   */
  private hearsGrants(keys: PermitKeys): boolean {
    return this.subscriber?.hears(ownChannel(keys.channel, this.owner)) === true;
  }

  /** How the scripts that may call the line of `keys` tell the processes they reserved for. */
  private notices(keys: PermitKeys): PermitNotices {
    return { handoffWindow: this.handoffWindow, publish: this.publishCommand, channel: keys.channel };
  }

  private keysOf(key: string): PermitKeys {
    return permitKeys(this.prefix, key);
  }

  private async run<T>(operation: string, key: string, keys: PermitKeys, command: () => Promise<T>): Promise<T> {
    try {
      return await command();
    } catch (error) {
      throw await this.storeError(operation, key, keys, error);
    }
  }

  private async storeError(operation: string, key: string, keys: PermitKeys, error: unknown): Promise<LockStoreError> {
    if (isWrongType(error)) return permitWrongTypeError(this.client, operation, key, keys, error);
    const unreachable = unreachableServer(this.client, error);
    return redisStoreError(operation, key, unreachable?.cause ?? error, unreachable?.detail);
  }
}
