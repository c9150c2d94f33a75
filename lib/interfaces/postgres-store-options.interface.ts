/** The result of a query, as far as the Postgres store reads it. */
export interface PostgresQueryResult {
  readonly rows: readonly unknown[];
}

/**
 * A client that runs one query at a time: a `pg` `Client` or `PoolClient` (node-postgres 8), or the raw client
 * of an ORM (TypeORM's `queryRunner`'s driver connection, Knex's, Kysely's, Drizzle's node-postgres client).
 */
export interface PostgresClientLike {
  /** Runs one statement with `$1`-style parameters; resolves its rows. */
  query(text: string, values?: readonly unknown[]): Promise<PostgresQueryResult>;
}

/** A client taken out of a pool, given back by `release()` (a `pg` `PoolClient`). */
export interface PostgresPoolClientLike extends PostgresClientLike {
  release(error?: Error | boolean): void;
}

/**
 * A `pg.Pool` (node-postgres 8), as far as its type is checked here; the store checks at construction that it
 * has the methods it uses, and reads `options` to open its LISTEN connection to the same server.
 */
export interface PostgresPoolLike extends PostgresClientLike {
  connect(): Promise<PostgresPoolClientLike>;
  end(): Promise<void>;
  readonly options?: object;
}

/** Options of {@link PostgresLockStore} (and the object form of `LockModule.forRoot({ postgres })`). */
export interface PostgresLockStoreOptions {
  /**
   * The database, as a URL (`postgres://user:password@host:5432/db`): the store creates a `pg.Pool` on it and
   * closes it on `close()`. Give `connectionString` or `pool`. Through PgBouncer in transaction mode too: every
   * lease operation is one autocommit statement.
   */
  readonly connectionString?: string;
  /** A `pg.Pool` of your own instead of `connectionString`: never closed by the store. */
  readonly pool?: PostgresPoolLike;
  /**
   * A URL that reaches PostgreSQL itself, not a pooler, for the one connection that LISTENs for release
   * notices (LISTEN needs a session; PgBouncer in transaction mode does not keep one). Without it that
   * connection goes to `connectionString` (or the pool's server); when the startup check finds that it hears
   * no notice there, waiters fall back to bounded polling and a warning says to set `directUrl`.
   */
  readonly directUrl?: string;
  /** Table of the leases; the store also keeps `<table>_waiters` and `<table>_permits`. @default 'nestjs_lock' */
  readonly table?: string;
  /** Schema of the tables. @default 'public' */
  readonly schema?: string;
  /**
   * Create the tables when missing, at the first use or the startup check (under an advisory lock, so that
   * several instances may boot at once). `false` for teams that run migrations: print the DDL with
   * `PostgresLockStore.ddl()`; the startup check then fails when a table is missing or has another shape.
   * @default true
   */
  readonly createTable?: boolean;
  /** Namespace of every key. @default 'lock:' */
  readonly keyPrefix?: string;
  /**
   * For how many ms a contended release reserves the key for the process first in line, which a LISTEN
   * notice tells to come; a process that died while first in line costs the others that long. @default 100
   */
  readonly handoffWindow?: number;
}
