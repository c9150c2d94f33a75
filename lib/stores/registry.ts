import { LockConfigurationError } from '../errors/lock-configuration.error.js';
import type { LockModuleOptions } from '../interfaces/lock-module-options.interface.js';
import type { CreatedStore, StoreFamily, StorePlan } from '../interfaces/store-family.interface.js';
import { etcdFamily } from './etcd/etcd.descriptor.js';
import { givenStore } from './given-store.descriptor.js';
import { memoryFamily } from './memory/memory.descriptor.js';
import { postgresFamily } from './postgres/postgres.descriptor.js';
import { redisFamily } from './redis/redis.descriptor.js';
import { redlockFamily } from './redlock/redlock.descriptor.js';

/**
 * Every store family `LockModule` can build from its options, one entry each. The module options may select
 * one family by its option; the family without an option is the one the module falls back to.
 */
export const STORE_FAMILIES = [redisFamily, redlockFamily, etcdFamily, postgresFamily, memoryFamily] as const;

/** The module options that each select a store family: `'redis'`, ... */
export type StoreOption = OptionOf<(typeof STORE_FAMILIES)[number]>;

type OptionOf<Family> = Family extends { readonly option: infer Option } ? Option : never;

/**
 * Where the module's store comes from: a store given whole (`store`) before every family. Messages name the
 * options in this order, and blame the second of two given together.
 */
const FAMILIES: readonly StoreFamily[] = [givenStore, ...STORE_FAMILIES];

/** The families that an option selects, each with its option. */
const SELECTABLE = FAMILIES.filter(
  (family): family is StoreFamily & { readonly option: keyof LockModuleOptions } => family.option !== undefined,
);

/**
 * Decides the store from the module options (the family whose option they give, else the fallback) and has
 * that family check every option it reads, connecting nothing.
 * @throws LockConfigurationError naming the first option that cannot work
 */
export function planStore(options: LockModuleOptions): StorePlan {
  for (const { option, expects } of SELECTABLE) {
    const value = options[option] as unknown;
    if (option in options && (value === undefined || value === null || value === '')) {
      throw emptyStoreOption(option, expects, value);
    }
  }
  const given = SELECTABLE.filter(({ option }) => options[option] !== undefined);
  if (given.length > 1) {
    const [first, second] = given.map(({ option }) => option);
    const names = SELECTABLE.map(({ option }) => `"${option}"`);
    throw new LockConfigurationError(
      second,
      options[second],
      `give one of ${names.slice(0, -1).join(', ')} or ${names.at(-1)}, not both "${first}" and "${second}"`,
    );
  }
  return (given[0] ?? familyWhere((family) => family.option === undefined, 'without an option')).plan(options);
}

/** The family that made `plan`. */
export function familyOf(plan: StorePlan): StoreFamily {
  return familyWhere((family) => family.kinds.includes(plan.kind), `that plans "${plan.kind}"`);
}

/**
 * Builds the store of a checked plan (see `checkModuleOptions`) by the family that made it, which loads the
 * package it needs (ioredis, etcd3, pg) only now: an application without it can use another store.
 * @throws LockConfigurationError when that package cannot be loaded
 */
export async function createStore(plan: StorePlan): Promise<CreatedStore> {
  return familyOf(plan).build(plan);
}

function familyWhere(matches: (family: StoreFamily) => boolean, what: string): StoreFamily {
  const family = FAMILIES.find(matches);
  if (family === undefined) throw new Error(`nestjs-lock has no store family ${what}`);
  return family;
}

/** The environment variable an example reads a store option from, as teams commonly name it. */
const EXAMPLE_VARIABLE: Record<string, string> = {
  redis: 'REDIS_URL',
  postgres: 'DATABASE_URL',
  etcd: 'ETCD_HOSTS',
  redlock: 'REDIS_URLS',
};

function emptyStoreOption(option: string, expects: string | undefined, value: unknown): LockConfigurationError {
  const variable = EXAMPLE_VARIABLE[option] ?? `${option.toUpperCase()}_URL`;
  return new LockConfigurationError(
    option,
    value,
    `expected ${expects}. An empty "${option}" is most often an unset environment variable ` +
      `(e.g. ${option}: config.get('${variable}')): fail fast when it is missing, or leave "${option}" out to keep ` +
      'locks in this process on purpose (MemoryLockStore)',
  );
}
