import type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from '../../interfaces/ioredis-types.js';
import { toClientPort } from './client/client-port.js';
import { clientShape } from './client/client-shape.js';
import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import type { LockModuleOptions, RedisClusterConfig } from '../../interfaces/lock-module-options.interface.js';
import type { CreatedStore, StoreFamily } from '../../interfaces/store-family.interface.js';
import { checkOptionNames, type OptionNames, type OptionsKind } from '../../options/option-names.js';
import { sharedStoreOptions, type SharedStoreOptions } from '../../options/shared-store-options.js';
import { redactUrl } from '../../utils/redact.js';
import { handleSentinelResubscriptions } from './client/handled-resubscriptions.js';
import { commandTimeoutOf } from './client/port-settings.js';
import { coalesceWrites } from './coalesced-writes.js';
import { takeOverCommandTimeout } from './command-deadlines.js';
import { loadIoredis } from './load-ioredis.js';
import { RedisLockStore } from './redis.store.js';
import { checkRedisStoreOptions, type RedisLockStoreOptions, type RedisStoreSettings } from './redis-store-options.js';

/** A Redis store the module creates from its `redis` option: where its client comes from, and its settings. */
export type RedisStorePlan =
  | { readonly kind: 'client'; readonly client: RedisLockStoreOptions['client']; readonly settings: RedisStoreSettings }
  | { readonly kind: 'url'; readonly url: string; readonly settings: RedisStoreSettings }
  | { readonly kind: 'options'; readonly options: RedisOptions; readonly settings: RedisStoreSettings }
  | {
      readonly kind: 'cluster';
      readonly nodes: ClusterNode[];
      readonly options: ClusterOptions;
      readonly settings: RedisStoreSettings;
    };

/**
 * Defaults for a client the module creates: fail a command in bounded time instead of queueing forever,
 * and connect on the first command (the startup check), not when the client is made: a bootstrap that
 * fails before the module initialises (another provider throwing) leaves no connection behind.
 */
const OWNED_CLIENT_DEFAULTS: RedisOptions = Object.freeze({
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
const SENTINEL_CLIENT_DEFAULTS: RedisOptions = Object.freeze({ failoverDetector: true });

/** The module's `redis: { cluster, options }`. */
const CLUSTER_CONFIG_OPTIONS: OptionsKind = {
  title: 'Redis Cluster config',
  names: { cluster: true, options: true } as const satisfies OptionNames<RedisClusterConfig>,
};

/**
 * Redis or Valkey, one server, a Sentinel set or a Cluster (`forRoot({ redis })`): a client of your own, or
 * one the module creates from a URL, ioredis options or `{ cluster, options }` and owns. `ioredis` is loaded
 * only when the module creates the client.
 */
export const redisFamily = {
  option: 'redis',
  expects: 'a redis:// URL, an ioredis, iovalkey, node-redis or GLIDE client, ioredis options or { cluster, options }',
  misplaced: {
    url: 'a connection URL goes in "redis": { redis: "redis://host:6379" }',
    host: 'a server goes in "redis": { redis: { host, port } }',
    port: 'a server goes in "redis": { redis: { host, port } }',
    client: 'an ioredis client goes in "redis": { redis: client }',
    cluster: 'a Redis Cluster goes in "redis": { redis: { cluster: [nodes], options } }',
  },
  kinds: ['client', 'url', 'options', 'cluster'],
  plan: (options) => planRedis(options.redis, sharedStoreOptions(options)),
  leaseBounds: (plan) => ({ store: 'RedisLockStore', handoffWindow: plan.settings.handoffWindow }),
  build: buildRedis,
} satisfies StoreFamily<RedisStorePlan>;

/**
 * The plan of a Redis store the module creates from the `redis` option: a client given, a URL, ioredis
 * options (a Sentinel set included) or `{ cluster, options }`, with the module's defaults for connections it opens.
 * @param shared the module options that shape the store
 * @throws LockConfigurationError naming the part of `redis` that cannot work
 */
function planRedis(given: LockModuleOptions['redis'], shared: SharedStoreOptions): RedisStorePlan {
  if (clientShape(given) !== 'not a client') {
    const redis = given;
    // the port says the client's command timeout (GLIDE's requestTimeout; node-redis has none of its own)
    const timeout = commandTimeoutOf(toClientPort(redis, 'redis'));
    return {
      kind: 'client',
      client: redis as RedisLockStoreOptions['client'],
      settings: checkRedisStoreOptions(shared, timeout),
    };
  }
  const redis = given as string | RedisOptions | RedisClusterConfig | undefined;
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
  if (typeof redis !== 'object' || redis === null || Array.isArray(redis)) {
    throw new LockConfigurationError(
      'redis',
      redis,
      'expected an ioredis, iovalkey, node-redis or GLIDE client, a redis:// URL, ioredis options or { cluster: [nodes] }',
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
  const sentinel = redis.sentinels !== undefined ? SENTINEL_CLIENT_DEFAULTS : {};
  const redisOptions = { ...OWNED_CLIENT_DEFAULTS, ...sentinel, ...redis };
  return {
    kind: 'options',
    options: redisOptions,
    settings: checkRedisStoreOptions(shared, redisOptions.commandTimeout),
  };
}

/**
 * Builds the planned store on the user's client, or on one made here (loading `ioredis` only then).
 * @throws LockConfigurationError when ioredis is needed and not installed
 */
async function buildRedis(plan: RedisStorePlan): Promise<CreatedStore> {
  switch (plan.kind) {
    case 'client':
      // the client stays the user's: the store is ours to close, and leaves the client open
      return { store: new RedisLockStore({ client: plan.client, ...plan.settings }), owned: true };
    case 'url': {
      const { Redis: Client } = await loadIoredis('redis', plan.url);
      return owned(new Client(plan.url, OWNED_CLIENT_DEFAULTS), plan.settings);
    }
    case 'options': {
      const { Redis: Client } = await loadIoredis('redis', plan.options);
      const client = new Client(plan.options);
      handleSentinelResubscriptions(client);
      return owned(client, plan.settings);
    }
    case 'cluster': {
      const { Cluster: ClusterClient } = await loadIoredis('redis', plan.nodes);
      return owned(new ClusterClient(plan.nodes, plan.options), plan.settings);
    }
  }
}

function owned(client: Redis | Cluster, settings: RedisStoreSettings): CreatedStore {
  // a client we make is ours to close; errors surface through commands (the store also listens, to explain
  // them), never as unhandled 'error' events, even one emitted after the store closed
  client.on('error', () => undefined);
  takeOverCommandTimeout(client);
  coalesceWrites(client);
  return { store: new RedisLockStore({ client, ...settings, ownsClient: true }), owned: true };
}
