import type { Cluster, Redis, RedisOptions } from '../interfaces/ioredis-types.js';
import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import { redactUrl } from '../utils/redact.js';
import type { LockModuleOptions } from '../interfaces/lock-module-options.interface.js';
import { checkRedisStoreOptions } from '../stores/redis/redis-store-options.js';
import { CLUSTER_CONFIG_OPTIONS, checkOptionNames } from './option-names.js';
import type { SharedStoreOptions, StorePlan } from './store-plan.js';

/**
 * Defaults for a client the module creates: fail a command in bounded time instead of queueing forever,
 * and connect on the first command (the startup check), not when the client is made: a bootstrap that
 * fails before the module initialises (another provider throwing) leaves no connection behind.
 */
export const OWNED_CLIENT_DEFAULTS: RedisOptions = Object.freeze({
  maxRetriesPerRequest: 1,
  commandTimeout: 2000,
  connectTimeout: 2000,
  lazyConnect: true,
});

/**
 * Further defaults for a Sentinel client the module creates: leave the old master as soon as a Sentinel
 * announces a failover (`+switch-master`). Without it the client stays with a master that was frozen or cut
 * off and came back, and a holder renews its lease there while another process takes the key on the new one.
 */
export const SENTINEL_CLIENT_DEFAULTS: RedisOptions = Object.freeze({ failoverDetector: true });

/**
 * The plan of a Redis store the module creates from the `redis` option: a client given, a URL, ioredis
 * options (a Sentinel set included) or `{ cluster, options }`, with the module's defaults for connections it opens.
 * @param shared the module options that shape the store (`sharedStoreOptions` in store-plan.ts)
 * @throws LockConfigurationError naming the part of `redis` that cannot work
 */
export function planRedis(redis: NonNullable<LockModuleOptions['redis']>, shared: SharedStoreOptions): StorePlan {
  if (isClient(redis)) {
    return { kind: 'client', client: redis, settings: checkRedisStoreOptions(shared, commandTimeoutOf(redis)) };
  }
  if (typeof redis === 'string') {
    if (!/^rediss?:\/\//.test(redis)) {
      throw new LockConfigurationError('redis', redactUrl(redis), 'expected a redis:// or rediss:// URL');
    }
    return {
      kind: 'url',
      url: redis,
      settings: checkRedisStoreOptions(shared, OWNED_CLIENT_DEFAULTS.commandTimeout),
    };
  }
  if (typeof redis !== 'object' || Array.isArray(redis)) {
    throw new LockConfigurationError(
      'redis',
      redis,
      'expected an ioredis client, a redis:// URL, ioredis options or { cluster: [nodes] }',
    );
  }
  if ('cluster' in redis) {
    checkOptionNames(redis, CLUSTER_CONFIG_OPTIONS, 'redis');
    const nodes = redis.cluster;
    if (!Array.isArray(nodes) || nodes.length === 0) {
      throw new LockConfigurationError('redis.cluster', nodes, 'expected a non-empty array of startup nodes');
    }
    const given = redis.options ?? {};
    if (typeof given !== 'object' || given === null || Array.isArray(given)) {
      throw new LockConfigurationError('redis.options', given, 'expected ioredis ClusterOptions');
    }
    const { lazyConnect, ...nodeDefaults } = OWNED_CLIENT_DEFAULTS;
    const clusterOptions = { lazyConnect, ...given, redisOptions: { ...nodeDefaults, ...given.redisOptions } };
    return {
      kind: 'cluster',
      nodes,
      options: clusterOptions,
      settings: checkRedisStoreOptions(shared, clusterOptions.redisOptions.commandTimeout),
    };
  }
  const sentinel = (redis as RedisOptions).sentinels !== undefined ? SENTINEL_CLIENT_DEFAULTS : {};
  const redisOptions = { ...OWNED_CLIENT_DEFAULTS, ...sentinel, ...redis };
  return {
    kind: 'options',
    options: redisOptions,
    settings: checkRedisStoreOptions(shared, redisOptions.commandTimeout),
  };
}

function isClient(value: unknown): value is Redis | Cluster {
  return typeof value === 'object' && value !== null && typeof (value as Redis).evalsha === 'function';
}

function commandTimeoutOf(client: Redis | Cluster): number | undefined {
  const options = (client as Cluster).isCluster ? (client as Cluster).options.redisOptions : (client as Redis).options;
  return typeof options?.commandTimeout === 'number' ? options.commandTimeout : undefined;
}
