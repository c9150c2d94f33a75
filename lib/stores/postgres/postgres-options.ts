import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import type { LockModuleOptions } from '../../interfaces/lock-module-options.interface.js';
import type { PostgresLockStoreOptions, PostgresPoolLike } from '../../interfaces/postgres-store-options.interface.js';
import { checkOptionsObject, type OptionNames, type OptionsKind } from '../../options/option-names.js';
import { validateBoolean, validateInteger, validateKeyPrefix } from '../../options/validate-options.js';
import { redactUrl } from '../../utils/redact.js';

export type {
  PostgresClientLike,
  PostgresLockStoreOptions,
  PostgresPoolClientLike,
  PostgresPoolLike,
  PostgresQueryResult,
} from '../../interfaces/postgres-store-options.interface.js';

/** The hand-off window of the Postgres store by default, in ms: a NOTIFY and a round trip, with room to spare. */
export const DEFAULT_POSTGRES_HANDOFF_WINDOW = 100;

/**
 * The store's options that the module's `postgres` option takes in its object form: all but `keyPrefix` and
 * `handoffWindow`, which the module sets.
 */
export const MODULE_POSTGRES_OPTION_NAMES = {
  connectionString: true,
  pool: true,
  directUrl: true,
  table: true,
  schema: true,
  createTable: true,
} as const satisfies OptionNames<Exclude<NonNullable<LockModuleOptions['postgres']>, string | { connect: unknown }>>;

/** `PostgresLockStore` constructor options. */
const POSTGRES_STORE_OPTIONS: OptionsKind = {
  title: 'PostgresLockStore options',
  names: {
    ...MODULE_POSTGRES_OPTION_NAMES,
    keyPrefix: true,
    handoffWindow: true,
  } as const satisfies OptionNames<PostgresLockStoreOptions>,
  elsewhere: {
    url: 'the database URL goes in "connectionString"',
    client: 'give a pg.Pool as "pool": a single client cannot run the LISTEN connection beside the leases',
    tableName: 'the table goes in "table"',
  },
};

/** Options with their defaults, checked. */
export interface ResolvedPostgresOptions {
  readonly connectionString?: string;
  readonly pool?: PostgresPoolLike;
  readonly directUrl?: string;
  readonly table: string;
  readonly schema: string;
  readonly createTable: boolean;
  readonly keyPrefix: string;
  readonly handoffWindow: number;
}

/**
 * A table or schema name the store can quote safely and suffix (`_waiters`, `_permits`, `_records_exp`) within
 * the 63 bytes of an identifier: letters, digits and `_`, not starting with a digit, lower case (as unquoted SQL
 * folds it).
 */
const IDENTIFIER = /^[a-z_][a-z0-9_]{0,49}$/;

/** Checks the options of a Postgres store and fills in the defaults. */
export function resolvePostgresOptions(options: PostgresLockStoreOptions): ResolvedPostgresOptions {
  checkOptionsObject(options, POSTGRES_STORE_OPTIONS, {
    option: 'postgres',
    expected: "expected 'postgres://user:password@host:5432/db', a pg.Pool, or { connectionString, table? }",
  });
  const { connectionString, pool, directUrl } = options as Record<string, unknown>;
  if (connectionString === undefined && pool === undefined) {
    throw new LockConfigurationError('postgres', options, 'expected { connectionString } or { pool }');
  }
  if (connectionString !== undefined && pool !== undefined) {
    throw new LockConfigurationError('postgres.pool', pool, 'give "connectionString" or "pool", not both');
  }
  if (connectionString !== undefined) checkUrl('postgres.connectionString', connectionString);
  if (directUrl !== undefined) checkUrl('postgres.directUrl', directUrl);
  if (pool !== undefined && !isPool(pool)) {
    throw new LockConfigurationError('postgres.pool', pool, 'expected a pg.Pool (new Pool({ connectionString }))');
  }
  return {
    connectionString: connectionString as string | undefined,
    pool: pool,
    directUrl: directUrl as string | undefined,
    table: checkIdentifier('postgres.table', options.table ?? 'nestjs_lock'),
    schema: checkIdentifier('postgres.schema', options.schema ?? 'public'),
    createTable: validateBoolean('postgres.createTable', options.createTable ?? true),
    keyPrefix: validateKeyPrefix(options.keyPrefix ?? 'lock:'),
    handoffWindow: validateInteger(
      'handoffWindow',
      options.handoffWindow ?? DEFAULT_POSTGRES_HANDOFF_WINDOW,
      1,
      60_000,
    ),
  };
}

/** Whether `value` has what the store uses of a `pg.Pool`. */
export function isPool(value: unknown): value is PostgresPoolLike {
  const pool = value as PostgresPoolLike;
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof pool.query === 'function' &&
    typeof pool.connect === 'function' &&
    typeof pool.end === 'function'
  );
}

function checkUrl(option: string, value: unknown): void {
  if (typeof value === 'string' && /^postgres(ql)?:\/\/[^\s]+$/i.test(value)) return;
  throw new LockConfigurationError(
    option,
    typeof value === 'string' ? redactUrl(value) : value,
    "expected a URL such as 'postgres://user:password@host:5432/db' (an empty one is most often an unset variable)",
  );
}

function checkIdentifier(option: string, value: unknown): string {
  if (typeof value === 'string' && IDENTIFIER.test(value)) return value;
  throw new LockConfigurationError(
    option,
    value,
    'expected a lower-case name of letters, digits and "_" (at most 50 characters, not starting with a digit)',
  );
}
