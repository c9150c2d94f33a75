import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import type { LockModuleOptions, RedisClusterConfig } from '../interfaces/lock-module-options.interface.js';
import type { LockStore } from '../interfaces/lock-store.interface.js';
import { MemoryLockStore } from '../stores/memory.store.js';
import { RedisLockStore } from '../stores/redis.store.js';
import { RedlockStore } from '../stores/redlock.store.js';
import { validateKeyPrefix } from './validate-options.js';

/** Defaults for a client the module creates: fail a command in bounded time instead of queueing forever. */
const OWNED_CLIENT_DEFAULTS: RedisOptions = { maxRetriesPerRequest: 1, commandTimeout: 2000, connectTimeout: 2000 };

/** The store the module options ask for, and whether the module must close it. */
export interface CreatedStore {
  readonly store: LockStore;
  readonly owned: boolean;
  readonly local: boolean;
}

/** Builds the store from module options: a given store, a given or described Redis, or memory. */
export function createStore(options: LockModuleOptions): CreatedStore {
  if (options.keyPrefix !== undefined) validateKeyPrefix(options.keyPrefix);
  const given = (['store', 'redis', 'redlock'] as const).filter((name) => options[name] !== undefined);
  if (given.length > 1) {
    throw new LockConfigurationError(
      given[1],
      options[given[1]],
      `give one of "store", "redis" or "redlock", not both "${given[0]}" and "${given[1]}"`,
    );
  }
  if (options.store !== undefined && options.replicaAck !== undefined) {
    throw new LockConfigurationError(
      'replicaAck',
      options.replicaAck,
      'applies to the Redis store the module creates from "redis"; set it on your own store instead',
    );
  }
  if (options.store !== undefined && options.acceptEvictionRisk !== undefined) {
    throw new LockConfigurationError(
      'acceptEvictionRisk',
      options.acceptEvictionRisk,
      'applies to the store the module creates from "redis" or "redlock"; set it on your own store instead',
    );
  }
  if (options.store !== undefined) {
    if (!isStore(options.store))
      throw new LockConfigurationError('store', options.store, 'expected an object implementing LockStore');
    return { store: options.store, owned: false, local: options.store instanceof MemoryLockStore };
  }
  const shared = {
    keyPrefix: options.keyPrefix,
    releaseNotices: options.releaseNotices,
    handoffWindow: options.handoffWindow,
    replicaAck: options.replicaAck,
    acceptEvictionRisk: options.acceptEvictionRisk,
  };
  if (options.redlock !== undefined) {
    if (typeof options.redlock !== 'object' || options.redlock === null) {
      throw new LockConfigurationError('redlock', options.redlock, 'expected { nodes: [...] }');
    }
    return { store: new RedlockStore({ ...options.redlock, ...shared }), owned: true, local: false };
  }
  const redis = options.redis;
  if (redis === undefined && options.replicaAck !== undefined) {
    throw new LockConfigurationError(
      'replicaAck',
      options.replicaAck,
      'replicas only exist on Redis: give "redis" too (for your own store, set it on the store)',
    );
  }
  if (redis === undefined) return { store: new MemoryLockStore(), owned: true, local: true };
  if (isClient(redis)) return { store: new RedisLockStore({ client: redis, ...shared }), owned: true, local: false };
  if (typeof redis === 'string') {
    if (!/^rediss?:\/\//.test(redis))
      throw new LockConfigurationError('redis', redis, 'expected a redis:// or rediss:// URL');
    return owned(new Redis(redis, OWNED_CLIENT_DEFAULTS), shared);
  }
  if (isClusterConfig(redis)) return owned(createCluster(redis), shared);
  if (typeof redis === 'object' && redis !== null && !Array.isArray(redis)) {
    return owned(new Redis({ ...OWNED_CLIENT_DEFAULTS, ...redis }), shared);
  }
  throw new LockConfigurationError(
    'redis',
    redis,
    'expected an ioredis client, a redis:// URL, ioredis options or { cluster: [nodes] }',
  );
}

function owned(
  client: Redis | Cluster,
  shared: Omit<ConstructorParameters<typeof RedisLockStore>[0], 'client'>,
): CreatedStore {
  // a client we make is ours to close; errors surface through commands, not as unhandled 'error' events
  client.on('error', () => undefined);
  try {
    return { store: new RedisLockStore({ client, ...shared, ownsClient: true }), owned: true, local: false };
  } catch (error) {
    // an option the store refuses must not leave our client reconnecting forever
    client.disconnect();
    throw error;
  }
}

/** A Cluster the module owns, each node connection with the same bounded timeouts as an owned `Redis`. */
function createCluster(config: RedisClusterConfig): Cluster {
  const nodes = config.cluster;
  if (!Array.isArray(nodes) || nodes.length === 0) {
    throw new LockConfigurationError('redis.cluster', nodes, 'expected a non-empty array of startup nodes');
  }
  const options = config.options ?? {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new LockConfigurationError('redis.options', options, 'expected ioredis ClusterOptions');
  }
  return new Cluster(nodes, { ...options, redisOptions: { ...OWNED_CLIENT_DEFAULTS, ...options.redisOptions } });
}

function isClusterConfig(value: unknown): value is RedisClusterConfig {
  return typeof value === 'object' && value !== null && 'cluster' in value;
}

function isClient(value: unknown): value is Redis | Cluster {
  return typeof value === 'object' && value !== null && typeof (value as Redis).evalsha === 'function';
}

function isStore(value: unknown): value is LockStore {
  const store = value as LockStore;
  return (
    typeof value === 'object' &&
    value !== null &&
    ['acquire', 'release', 'extend', 'extendMany', 'inspect', 'watch', 'close'].every(
      (m) => typeof store[m as keyof LockStore] === 'function',
    )
  );
}
