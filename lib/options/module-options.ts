import type { Cluster, ClusterNode, ClusterOptions, Redis, RedisOptions } from 'ioredis';
import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import type { LockModuleOptions } from '../interfaces/lock-module-options.interface.js';
import type { LockDefaults, LockLogger } from '../interfaces/lock-options.interface.js';
import type { LockStore } from '../interfaces/lock-store.interface.js';
import type { LockTelemetryOptions } from '../interfaces/lock-telemetry-options.interface.js';
import { clockDrift } from '../core/lock.js';
import { DEFAULT_DRAIN_TIMEOUT } from '../core/lock-manager.js';
import { checkRedisStoreOptions, type RedisStoreSettings } from '../stores/redis/redis.store.js';
import {
  checkRedlockStoreOptions,
  type RedlockStoreOptions,
  type RedlockStoreSettings,
} from '../stores/redlock/redlock-options.js';
import { redlockClockDrift } from '../stores/redlock/redlock-validity.js';
import { toMilliseconds } from '../utils/duration.js';
import { checkDriftAllowance, checkHandoffWindow, checkStoreMinimum } from './lease-bounds.js';
import { MIN_ETCD_TTL, type EtcdLockStoreOptions } from '../stores/etcd/etcd-options.js';
import { planEtcdStore } from '../stores/etcd/plan-etcd-store.js';
import { DEFAULT_SETTINGS, resolveSettings } from './lock-settings.js';
import { CLUSTER_CONFIG_OPTIONS, checkOptionNames, MODULE_OPTIONS, MODULE_REDLOCK_OPTIONS } from './option-names.js';
import {
  validateBoolean,
  validateLogger,
  validateMaxKeyLength,
  validateStore,
  validateTelemetry,
} from './validate-options.js';

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

/** Where the module keeps locks, decided and checked, nothing connected yet. */
export type StorePlan =
  | { readonly kind: 'given'; readonly store: LockStore }
  | { readonly kind: 'memory'; readonly settings: RedisStoreSettings }
  | { readonly kind: 'client'; readonly client: Redis | Cluster; readonly settings: RedisStoreSettings }
  | { readonly kind: 'url'; readonly url: string; readonly settings: RedisStoreSettings }
  | { readonly kind: 'options'; readonly options: RedisOptions; readonly settings: RedisStoreSettings }
  | {
      readonly kind: 'cluster';
      readonly nodes: ClusterNode[];
      readonly options: ClusterOptions;
      readonly settings: RedisStoreSettings;
    }
  | { readonly kind: 'redlock'; readonly options: RedlockStoreOptions; readonly settings: RedlockStoreSettings }
  | { readonly kind: 'etcd'; readonly options: EtcdLockStoreOptions };

/** The module options, every one checked, in the shape each part of the module uses. */
export interface CheckedModuleOptions {
  /** The defaults of every acquisition, for the manager. */
  readonly defaults: LockDefaults;
  readonly logger?: LockLogger;
  readonly verifyOnStartup: boolean;
  readonly exposeResolvedKeys: boolean;
  /** How long a shutdown lets holders finish, in ms. */
  readonly drainTimeout: number;
  readonly telemetry: LockTelemetryOptions | false;
  readonly store: StorePlan;
}

/** The options that each name a store; giving one with no value is a mistake, never a wish for memory. */
const STORE_OPTIONS = ['store', 'redis', 'redlock', 'etcd'] as const;

/**
 * Checks every module option, names included, and decides the store, before anything is connected: a
 * bootstrap that refuses its options leaves nothing open.
 * @throws LockConfigurationError naming the first option that cannot work
 */
export function checkModuleOptions(value: unknown): CheckedModuleOptions {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new LockConfigurationError(
      'options',
      value,
      'expected an object (does the forRootAsync() factory return its options?)',
    );
  }
  const options = value as LockModuleOptions;
  checkOptionNames(options, MODULE_OPTIONS);
  const logger = validateLogger(options.logger);
  const defaults = moduleDefaults(options);
  const store = planStore(options);
  checkLeaseBounds(store, resolveSettings(DEFAULT_SETTINGS, defaults).ttl);
  if (options.interceptor !== undefined) validateBoolean('interceptor', options.interceptor);
  return {
    defaults,
    ...(logger === undefined ? {} : { logger }),
    verifyOnStartup: validateBoolean('verifyOnStartup', options.verifyOnStartup ?? true),
    exposeResolvedKeys: validateBoolean('exposeResolvedKeys', options.exposeResolvedKeys ?? false),
    drainTimeout: toMilliseconds(options.drainTimeout ?? DEFAULT_DRAIN_TIMEOUT, 'drainTimeout', true),
    telemetry: validateTelemetry(options.telemetry),
    store,
  };
}

/** The acquisition defaults among the module options, checked. */
function moduleDefaults(options: LockModuleOptions): LockDefaults {
  const { ttl, wait, retry, autoRenew, fencing, maxKeyLength, retryAfter } = options;
  const defaults = Object.fromEntries(
    Object.entries({ ttl, wait, retry, autoRenew, fencing, maxKeyLength, retryAfter }).filter(
      ([, field]) => field !== undefined,
    ),
  ) as LockDefaults;
  resolveSettings(DEFAULT_SETTINGS, defaults);
  if (maxKeyLength !== undefined) validateMaxKeyLength(maxKeyLength);
  return defaults;
}

function planStore(options: LockModuleOptions): StorePlan {
  for (const name of STORE_OPTIONS) {
    const given = options[name] as unknown;
    if (name in options && (given === undefined || given === null || given === '')) throw emptyStoreOption(name, given);
  }
  const given = STORE_OPTIONS.filter((name) => options[name] !== undefined);
  if (given.length > 1) {
    throw new LockConfigurationError(
      given[1],
      options[given[1]],
      `give one of "store", "redis", "redlock" or "etcd", not both "${given[0]}" and "${given[1]}"`,
    );
  }
  if (options.store !== undefined) return planGivenStore(options);
  if (options.etcd !== undefined) return { kind: 'etcd', options: planEtcdStore(options) };
  if (options.redlock !== undefined) return planRedlock(options);
  if (options.redis !== undefined) return planRedis(options, options.redis);
  if (options.replicaAck !== undefined) {
    throw new LockConfigurationError(
      'replicaAck',
      options.replicaAck,
      'replicas only exist on Redis: give "redis" too (for your own store, set it on the store)',
    );
  }
  // the memory store has no prefix nor window; checked all the same, for the day "redis" is given
  return { kind: 'memory', settings: checkRedisStoreOptions(sharedStoreOptions(options), undefined) };
}

/** The module options that shape a Redis or Redlock store the module creates. */
function sharedStoreOptions(options: LockModuleOptions) {
  return definedOnly({
    keyPrefix: options.keyPrefix,
    releaseNotices: options.releaseNotices,
    handoffWindow: options.handoffWindow,
    replicaAck: options.replicaAck,
    acceptEvictionRisk: options.acceptEvictionRisk,
  });
}

function emptyStoreOption(name: (typeof STORE_OPTIONS)[number], value: unknown): LockConfigurationError {
  const expected = {
    store: 'a LockStore',
    redis: 'a redis:// URL, an ioredis client, ioredis options or { cluster, options }',
    redlock: '{ nodes: [...] }',
    etcd: '{ hosts: [...] }',
  }[name];
  return new LockConfigurationError(
    name,
    value,
    `expected ${expected}. An empty "${name}" is most often an unset environment variable ` +
      `(e.g. ${name}: config.get('REDIS_URL')): fail fast when it is missing, or leave "${name}" out to keep ` +
      'locks in this process on purpose (MemoryLockStore)',
  );
}

/** The options that shape a store the module creates; a store given whole has its own. */
const CREATED_STORE_OPTIONS = [
  'keyPrefix',
  'releaseNotices',
  'handoffWindow',
  'replicaAck',
  'acceptEvictionRisk',
] as const;

function planGivenStore(options: LockModuleOptions): StorePlan {
  const misplaced = CREATED_STORE_OPTIONS.find((name) => options[name] !== undefined);
  if (misplaced !== undefined) {
    throw new LockConfigurationError(
      misplaced,
      options[misplaced],
      `applies to the store the module creates from "redis" or "redlock"; set it on your own store instead`,
    );
  }
  return { kind: 'given', store: validateStore(options.store) };
}

function planRedlock(options: LockModuleOptions): StorePlan {
  const redlock = options.redlock;
  if (typeof redlock !== 'object' || redlock === null || Array.isArray(redlock)) {
    throw new LockConfigurationError('redlock', redlock, 'expected { nodes: [...] }');
  }
  if (options.replicaAck !== undefined) {
    throw new LockConfigurationError(
      'replicaAck',
      options.replicaAck,
      'replicas belong to one Redis: a Redlock quorum takes the place of replica acknowledgement',
    );
  }
  checkOptionNames(redlock, MODULE_REDLOCK_OPTIONS, 'redlock');
  // replicaAck was refused above: what is left of the shared options applies to the Redlock store
  const shared = sharedStoreOptions(options);
  const merged: RedlockStoreOptions = { ...redlock, ...shared };
  try {
    return { kind: 'redlock', options: merged, settings: checkRedlockStoreOptions(merged) };
  } catch (error) {
    throw inRedlock(error, Object.keys(shared));
  }
}

/** Names an option of the Redlock store by where the module options have it (`redlock.nodes`). */
function inRedlock(error: unknown, moduleLevel: readonly string[]): unknown {
  if (!(error instanceof LockConfigurationError) || moduleLevel.includes(error.option)) return error;
  return new LockConfigurationError(`redlock.${error.option}`, error.value, error.expectation);
}

function planRedis(options: LockModuleOptions, redis: NonNullable<LockModuleOptions['redis']>): StorePlan {
  const shared = sharedStoreOptions(options);
  if (isClient(redis)) {
    return { kind: 'client', client: redis, settings: checkRedisStoreOptions(shared, commandTimeoutOf(redis)) };
  }
  if (typeof redis === 'string') {
    if (!/^rediss?:\/\//.test(redis)) {
      throw new LockConfigurationError('redis', redis, 'expected a redis:// or rediss:// URL');
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

/**
 * The module's default ttl against the store it will use: the drift allowance (Redlock's `driftFactor`) and
 * the hand-off window, checked before the store exists.
 */
function checkLeaseBounds(store: StorePlan, ttl: number): void {
  let drift = clockDrift(ttl);
  let window: number | undefined;
  if (store.kind === 'given') {
    drift = store.store.clockDrift?.(ttl) ?? drift;
    window = store.store.handoffWindow;
    checkStoreMinimum(store.store.minTtl, store.store.constructor.name, ttl, 'ttl');
  } else if (store.kind === 'etcd') {
    checkStoreMinimum(MIN_ETCD_TTL, 'EtcdLockStore', ttl, 'ttl');
  } else if (store.kind === 'redlock') {
    drift = redlockClockDrift(ttl, store.settings.driftFactor);
    window = store.settings.handoffWindow;
  } else {
    window = store.settings.handoffWindow;
  }
  checkDriftAllowance(ttl, drift, 'ttl');
  checkHandoffWindow(window, ttl, 'handoffWindow');
}

function definedOnly<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, field]) => field !== undefined)) as Partial<T>;
}

function isClient(value: unknown): value is Redis | Cluster {
  return typeof value === 'object' && value !== null && typeof (value as Redis).evalsha === 'function';
}

function commandTimeoutOf(client: Redis | Cluster): number | undefined {
  const options = (client as Cluster).isCluster ? (client as Cluster).options.redisOptions : (client as Redis).options;
  return typeof options?.commandTimeout === 'number' ? options.commandTimeout : undefined;
}
