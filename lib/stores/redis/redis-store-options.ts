import { DEFAULT_HANDOFF_WINDOW } from '../shared/handoff-window.js';
import type { Cluster, Redis } from '../../interfaces/ioredis-types.js';
import type { GlideClientLike, NodeRedisClientLike } from '../../interfaces/redis-client-like.interface.js';
import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import type { ReplicaAckOptions } from '../../interfaces/replica-ack-options.interface.js';
import { checkOptionNames, type OptionNames, type OptionsKind } from '../../options/option-names.js';
import { validateBoolean, validateInteger, validateKeyPrefix } from '../../options/validate-options.js';
import { toMilliseconds } from '../../options/duration-option.js';
import { MAX_DURATION } from '../../utils/duration.js';
import type { ReplicaAck } from './replica-ack.js';

/** Options of {@link RedisLockStore}. */
export interface RedisLockStoreOptions {
  /**
   * An ioredis or iovalkey `Redis` or `Cluster` client, a node-redis client or cluster, or a Valkey GLIDE
   * `GlideClient` or `GlideClusterClient` (docs/stores.md).
   */
  readonly client: Redis | Cluster | NodeRedisClientLike | GlideClientLike;
  /**
   * Namespace of every key and channel: non-empty, printable, without `*?[]\\{}` (see docs/options.md,
   * "Bounds, and why").
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

/** What every store on an ioredis client takes: the client and how it shares out keys and notices. */
export const REDIS_CLIENT_OPTIONS = {
  client: true,
  keyPrefix: true,
  ownsClient: true,
  releaseNotices: true,
  handoffWindow: true,
} as const;

/** `RedisLockStore` constructor options. */
const REDIS_STORE_OPTIONS: OptionsKind = {
  title: 'RedisLockStore options',
  names: {
    ...REDIS_CLIENT_OPTIONS,
    replicaAck: true,
    acceptEvictionRisk: true,
  } as const satisfies OptionNames<RedisLockStoreOptions>,
  elsewhere: { redis: 'the ioredis client goes in "client"' },
};

/** `replicaAck`. */
const REPLICA_ACK_OPTIONS: OptionsKind = {
  title: 'replicaAck options',
  names: { replicas: true, timeout: true } as const satisfies OptionNames<ReplicaAckOptions>,
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

/**
 * Checks the `replicaAck` option against the client it will run on.
 * @param commandTimeout the client's `commandTimeout` in ms, when it has one
 * @throws LockConfigurationError naming the field that cannot work
 */
export function resolveReplicaAck(value: unknown, commandTimeout: number | undefined): ReplicaAck | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LockConfigurationError(
      'replicaAck',
      value,
      'expected { replicas, timeout }, e.g. { replicas: 1, timeout: 50 }',
    );
  }
  checkOptionNames(value, REPLICA_ACK_OPTIONS, 'replicaAck');
  const options = value as ReplicaAckOptions;
  const replicas = validateInteger('replicaAck.replicas', options.replicas, 1);
  const timeout = toMilliseconds(options.timeout, 'replicaAck.timeout');
  if (commandTimeout !== undefined && timeout >= commandTimeout) {
    throw new LockConfigurationError(
      'replicaAck.timeout',
      options.timeout,
      `expected less than the client's commandTimeout (${commandTimeout} ms), or the client gives up on WAIT before Redis answers`,
    );
  }
  return { replicas, timeout };
}
