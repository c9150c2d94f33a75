import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import type { LockModuleOptions } from '../../interfaces/lock-module-options.interface.js';
import type { StoreFamily } from '../../interfaces/store-family.interface.js';
import { checkOptionNames, type OptionNames, type OptionsKind } from '../../options/option-names.js';
import { refuseSharedOptions } from '../../options/shared-store-options.js';
import { PostgresLockStore } from './postgres-lock-store.js';
import { isPool, resolvePostgresOptions, type PostgresLockStoreOptions } from './postgres-options.js';

/** A Postgres store the module creates: the store's options with the module's `keyPrefix` and `handoffWindow`, checked. */
export interface PostgresStorePlan {
  readonly kind: 'postgres';
  readonly options: PostgresLockStoreOptions;
}

/** The module's `postgres` option in its object form: the store's options without those the module sets. */
const MODULE_POSTGRES_OPTIONS: OptionsKind = {
  title: 'postgres options',
  names: {
    connectionString: true,
    pool: true,
    directUrl: true,
    table: true,
    schema: true,
    createTable: true,
  } as const satisfies OptionNames<Exclude<NonNullable<LockModuleOptions['postgres']>, string | { connect: unknown }>>,
  elsewhere: {
    keyPrefix: 'it is a module option: LockModule.forRoot({ keyPrefix, postgres })',
    handoffWindow: 'it is a module option: LockModule.forRoot({ handoffWindow, postgres })',
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
  resolvePostgresOptions(planned);
  return planned;
}
