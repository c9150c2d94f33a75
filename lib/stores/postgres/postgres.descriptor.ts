import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import type { LockModuleOptions } from '../../interfaces/lock-module-options.interface.js';
import type { StoreFamily } from '../../interfaces/store-family.interface.js';
import { checkOptionNames, type OptionsKind } from '../../options/option-names.js';
import { DEFAULT_MAX_KEY_LENGTH } from '../../options/lock-settings.js';
import { moduleOptionAdvice, refuseSharedOptions } from '../../options/shared-store-options.js';
import { PostgresLockStore } from './postgres-lock-store.js';
import {
  isPool,
  MODULE_POSTGRES_OPTION_NAMES,
  resolvePostgresOptions,
  type PostgresLockStoreOptions,
} from './postgres-options.js';

/** A Postgres store the module creates: the store's options with the module's `keyPrefix` and `handoffWindow`, checked. */
export interface PostgresStorePlan {
  readonly kind: 'postgres';
  readonly options: PostgresLockStoreOptions;
}

/**
 * The longest key, prefix included, in bytes, that the lock tables take: a btree index entry holds about a third
 * of an 8 kB page (2,704 bytes), and the waiters' and permits' keys share theirs with a token or an owner id.
 */
export const POSTGRES_MAX_KEY_BYTES = 2_000;

/** The module's `postgres` option in its object form: the store's options without those the module sets. */
const MODULE_POSTGRES_OPTIONS: OptionsKind = {
  title: 'postgres options',
  names: MODULE_POSTGRES_OPTION_NAMES,
  elsewhere: {
    ...moduleOptionAdvice(['keyPrefix', 'handoffWindow'], 'postgres'),
    url: 'the database URL goes in "connectionString"',
  },
};

/**
 * PostgreSQL (`forRoot({ postgres })`): a URL, a `pg.Pool` of your own (never closed by the module), or
 * `{ connectionString | pool, directUrl?, table?, schema?, createTable? }`, with the module's `keyPrefix` and
 * `handoffWindow`. `pg` is loaded only when the store is built.
 */
export const postgresFamily = {
  option: 'postgres',
  expects: 'a postgres:// URL, a pg.Pool or { connectionString, table? }',
  misplaced: {
    connectionString: 'the database URL goes in "postgres": { postgres: "postgres://user:pw@host:5432/db" }',
    databaseUrl: 'the database URL goes in "postgres": { postgres: process.env.DATABASE_URL }',
  },
  kinds: ['postgres'],
  plan: (options) => ({ kind: 'postgres', options: planPostgresStore(options) }),
  leaseBounds: (plan) => ({
    store: 'PostgresLockStore',
    handoffWindow: resolvePostgresOptions(plan.options).handoffWindow,
  }),
  build: async (plan) => ({ store: new PostgresLockStore(plan.options), owned: true }),
} satisfies StoreFamily<PostgresStorePlan>;

/**
 * The options of the Postgres store that `LockModule.forRoot({ postgres })` creates and owns, checked before
 * anything connects. A pool given is the application's: the store never ends it.
 * @throws LockConfigurationError for an unknown or invalid option, or one of Redis stores given with `postgres`
 */
function planPostgresStore(options: LockModuleOptions): PostgresLockStoreOptions {
  const { postgres } = options;
  refuseSharedOptions(
    options,
    ['replicaAck', 'releaseNotices', 'acceptEvictionRisk'],
    'applies to Redis stores only; the Postgres store keeps its leases in a table and wakes waiters by LISTEN/NOTIFY',
  );
  const shared = {
    ...(options.keyPrefix === undefined ? {} : { keyPrefix: options.keyPrefix }),
    ...(options.handoffWindow === undefined ? {} : { handoffWindow: options.handoffWindow }),
  };
  let planned: PostgresLockStoreOptions;
  if (typeof postgres === 'string') planned = { connectionString: postgres, ...shared };
  else if (isPool(postgres)) planned = { pool: postgres, ...shared };
  else if (typeof postgres === 'object' && postgres !== null && !Array.isArray(postgres)) {
    checkOptionNames(postgres, MODULE_POSTGRES_OPTIONS, 'postgres');
    planned = { ...postgres, ...shared };
  } else {
    throw new LockConfigurationError('postgres', postgres, `expected ${postgresFamily.expects}`);
  }
  const resolved = resolvePostgresOptions(planned);
  refuseKeysOverIndexLimit(options.maxKeyLength ?? DEFAULT_MAX_KEY_LENGTH, resolved.keyPrefix);
  return planned;
}

/**
 * Refuses a `maxKeyLength` that would let a key past the tables' index limit, where PostgreSQL would refuse
 * the row only at the first long key (SQLSTATE 54000) instead of at bootstrap.
 * @throws LockConfigurationError naming `maxKeyLength`
 */
function refuseKeysOverIndexLimit(maxKeyLength: number, keyPrefix: string): void {
  const room = POSTGRES_MAX_KEY_BYTES - Buffer.byteLength(keyPrefix);
  if (maxKeyLength <= room) return;
  throw new LockConfigurationError(
    'maxKeyLength',
    maxKeyLength,
    `the Postgres store indexes keys of at most ${POSTGRES_MAX_KEY_BYTES} bytes with the key prefix, so at most ${room} here; hash the long part of a key`,
  );
}
