import type { ClusterNode, ClusterOptions, Cluster, Redis, RedisOptions } from '../interfaces/ioredis-types.js';
import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import type { LockModuleOptions } from '../interfaces/lock-module-options.interface.js';
import type { LockStore } from '../interfaces/lock-store.interface.js';
import { checkRedisStoreOptions, type RedisStoreSettings } from '../stores/redis/redis-store-options.js';
import {
  checkRedlockStoreOptions,
  type RedlockStoreOptions,
  type RedlockStoreSettings,
} from '../stores/redlock/redlock-options.js';
import type { EtcdLockStoreOptions } from '../stores/etcd/etcd-options.js';
import { planEtcdStore } from '../stores/etcd/plan-etcd-store.js';
import { checkOptionNames, MODULE_REDLOCK_OPTIONS } from './option-names.js';
import { planRedis } from './redis-store-plan.js';
import { validateStore } from './validate-options.js';

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

/** The module options that shape a store the module creates, as {@link sharedStoreOptions} picks them. */
export type SharedStoreOptions = ReturnType<typeof sharedStoreOptions>;

/** The options that each name a store; giving one with no value is a mistake, never a wish for memory. */
const STORE_OPTIONS = ['store', 'redis', 'redlock', 'etcd'] as const;

/**
 * Decides the store from the module options (`store`, `etcd`, `redlock`, `redis`, else memory) and checks
 * its options, connecting nothing.
 * @throws LockConfigurationError naming the first option that cannot work
 */
export function planStore(options: LockModuleOptions): StorePlan {
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
  if (options.redis !== undefined) return planRedis(options.redis, sharedStoreOptions(options));
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
export function sharedStoreOptions(options: LockModuleOptions) {
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

function definedOnly<T extends object>(fields: T): Partial<T> {
  return Object.fromEntries(Object.entries(fields).filter(([, field]) => field !== undefined)) as Partial<T>;
}
