import { randomBytes } from 'node:crypto';
import type {
  AcquireRequest,
  AcquireResult,
  LeaseRenewal,
  LockState,
  ReleaseWatch,
} from '../../interfaces/lease.interface.js';
import type { LockStore, LockStoreHealth, LockStoreVerification } from '../../interfaces/lock-store.interface.js';
import type { LockStoreCapabilities } from '../../interfaces/store-capabilities.interface.js';
import type { HandOverResult } from '../../interfaces/waiting-line.interface.js';
import type { PostgresClientLike, PostgresPoolLike } from '../../interfaces/postgres-store-options.interface.js';
import { loadPg, type PgModule } from './load-pg.js';
import { PostgresListener } from './postgres-listener.js';
import { PostgresListing } from './postgres-listing.js';
import { PostgresPermits } from './postgres-permits.js';
import { PostgresRecords } from './postgres-records.js';
import { isServerAnswer, pgFailure, postgresStoreError } from './postgres-errors.js';
import { withPooledClient } from './pooled-client.js';
import {
  resolvePostgresOptions,
  type PostgresLockStoreOptions,
  type ResolvedPostgresOptions,
} from './postgres-options.js';
import { checkTables, createTables } from './postgres-schema.js';
import { commitDurability } from './postgres-durability.js';
import { describeTarget } from './postgres-target.js';
import { noticeOf, postgresTables, type PostgresTables } from './postgres-tables.js';
import { acquireSql } from './sql/acquire.sql.js';
import { beginSql } from './sql/begin.sql.js';
import { extendSql } from './sql/extend.sql.js';
import { handOverSql } from './sql/hand-over.sql.js';
import { inspectSql } from './sql/inspect.sql.js';
import { leaveLineSql } from './sql/leave-line.sql.js';
import { releaseSql } from './sql/release.sql.js';
import { schemaDdl } from './sql/schema.sql.js';
import { endWithin } from './end-within.js';

/** How long a statement of a pool the store creates may take before it counts as failed, in ms. */
const STATEMENT_TIMEOUT = 5000;
/** How long the startup check waits to hear its own NOTIFY on the LISTEN connection, in ms. */
const PROBE_TIMEOUT = 1500;

/** What the acquire statement answers. */
interface AcquireRow {
  readonly acquired: boolean;
  readonly fence: string | null;
  readonly remaining: number | null;
}

/** The statements of one store, made once from its table names. */
interface Statements {
  readonly acquire: string;
  readonly release: string;
  readonly extend: string;
  readonly inspect: string;
  readonly leaveLine: string;
  readonly handOver: string;
  /** Opens a transaction bounded on the server by the client's deadline (see beginSql). */
  readonly begin: string;
}

/**
 * A lock store on PostgreSQL (through the optional `pg` package, node-postgres 8). A lease is a row per key
 * granted, extended and released each by one autocommit statement, its expiry judged by the server's clock
 * (`clock_timestamp()`), so no session state is kept: it works through PgBouncer in transaction mode. The
 * fence is a column of the row that only grows (at or above the server clock in microseconds) and stays when
 * the lease is released. Waiting processes stand in a line per key (`<table>_waiters`); a release with a line
 * reserves the key for the first in line for the hand-off window and wakes its waiters alone by one NOTIFY
 * that names it (and the next in line, which asks once the window is over), heard on one LISTEN connection per
 * store (to `directUrl` when a pooler stands in front of the server).
 *
 * @example
 * LockModule.forRoot({ postgres: process.env.DATABASE_URL })
 * @example
 * new PostgresLockStore({ pool, table: 'app_locks', createTable: false })
 */
export class PostgresLockStore implements LockStore {
  /**
   * A line of waiting processes per key (with hand-over to this process's next waiter), its hand-off
   * window, permits (semaphores, readers-writer locks) on the same keys and fences, the response records
   * of idempotent requests (`<table>_records`), the listing and forced releases.
   */
  readonly capabilities: LockStoreCapabilities;
  private readonly handoffWindow: number;
  private readonly options: ResolvedPostgresOptions;
  private readonly tables: PostgresTables;
  private readonly sql: Statements;
  private readonly target: string;
  private readonly pg: Promise<PgModule>;
  private readonly pool: Promise<PostgresPoolLike>;
  private readonly listener: PostgresListener;
  /** This store's name in the lines of waiters: one place per store and key. */
  private readonly waiter = randomBytes(8).toString('hex');
  private tablesReady?: Promise<void>;
  private closed = false;

  /** @throws LockConfigurationError when an option cannot work */
  constructor(options: PostgresLockStoreOptions) {
    this.options = resolvePostgresOptions(options);
    this.handoffWindow = this.options.handoffWindow;
    this.tables = postgresTables(this.options.schema, this.options.table);
    this.sql = {
      acquire: acquireSql(this.tables),
      release: releaseSql(this.tables),
      extend: extendSql(this.tables),
      inspect: inspectSql(this.tables),
      leaveLine: leaveLineSql(this.tables),
      handOver: handOverSql(this.tables),
      // the server ends a stuck transaction's wait or idle time no later than the client gives up on it
      begin: beginSql(queryDeadline(this.options.pool)),
    };
    const { pool, connectionString, directUrl } = this.options;
    this.target = describeTarget(connectionString ?? pool?.options);
    this.pg = loadPg();
    // a missing pg package is reported by the first call (verify() at startup); never unhandled
    this.pg.catch(() => undefined);
    this.pool = pool ? Promise.resolve(pool) : this.pg.then((pg) => ownPool(pg, connectionString!));
    this.pool.catch(() => undefined);
    const listenTo = directUrl ?? connectionString;
    this.listener = new PostgresListener(
      async () => {
        const pg = await this.pg;
        const config = listenTo === undefined ? { ...pool?.options } : { connectionString: listenTo };
        return new pg.Client({ ...config, keepAlive: true, connectionTimeoutMillis: STATEMENT_TIMEOUT });
      },
      { channel: this.tables.channel, waiter: this.waiter, handoffWindow: this.handoffWindow },
    );
    const access = {
      tables: this.tables,
      stored: (key: string) => this.stored(key),
      begin: this.sql.begin,
      transaction: this.transaction.bind(this),
      session: this.session.bind(this),
      run: this.run.bind(this),
    };
    // the listing and forced releases: one object, both capabilities
    const listing = new PostgresListing({ ...access, keyPrefix: this.options.keyPrefix });
    this.capabilities = {
      limits: { handoffWindow: this.handoffWindow },
      line: {
        handOver: (key, token, next) => this.handOver(key, token, next),
        leaveLine: (key) => this.leaveLine(key),
      },
      permits: new PostgresPermits({ ...access, handoffWindow: this.handoffWindow, listener: this.listener }),
      listing,
      revoking: listing,
      records: new PostgresRecords(access),
    };
  }

  /**
   * The DDL of the store's tables, for a migration when `createTable` is `false` (idempotent: `IF NOT EXISTS`).
   * @example console.log(PostgresLockStore.ddl({ table: 'app_locks' }))
   */
  static ddl(options: Pick<PostgresLockStoreOptions, 'table' | 'schema'> = {}): string {
    const { table = 'nestjs_lock', schema = 'public' } = options;
    const resolved = resolvePostgresOptions({ connectionString: 'postgres://ddl', table, schema });
    return schemaDdl(postgresTables(resolved.schema, resolved.table));
  }

  async acquire(request: AcquireRequest): Promise<AcquireResult> {
    const stored = this.stored(request.key);
    const row = await this.one<AcquireRow>('acquire', request.key, this.sql.acquire, [
      stored,
      request.token,
      request.ttl,
      request.holder ?? null,
      request.fencing,
      this.waiter,
      request.waiting ? Math.max(Math.ceil(request.waiting.ttl), 2 * this.handoffWindow) : null,
      this.handoffWindow,
      this.tables.channel,
      noticeOf(stored),
    ]);
    if (row.acquired) return request.fencing ? { acquired: true, fence: Number(row.fence) } : { acquired: true };
    return { acquired: false, remainingTtl: row.remaining === null ? undefined : Math.max(0, row.remaining) };
  }

  async release(key: string, token: string): Promise<boolean> {
    const stored = this.stored(key);
    const row = await this.one<{ released: boolean }>('release', key, this.sql.release, [
      stored,
      token,
      this.handoffWindow,
      this.tables.channel,
      noticeOf(stored),
    ]);
    return row.released === true;
  }

  /**
   * Passes the lease to `next` (this process's next waiter) in one statement when no other process waits for
   * the key; else releases it, and the line is served. With several managers waiting on this store for the
   * key, it only releases: they share one place in the line, and one could keep the key from the other.
   */
  async handOver(key: string, token: string, next: AcquireRequest): Promise<HandOverResult> {
    const stored = this.stored(key);
    if (this.listener.watchers(noticeOf(stored)) !== 1) {
      return { released: await this.release(key, token), handedOver: false };
    }
    const row = await this.one<{ handed: boolean; fence: string | null; ours: boolean }>(
      'release',
      key,
      this.sql.handOver,
      [stored, token, next.token, next.ttl, next.holder ?? null, next.fencing, this.waiter],
    );
    if (row.handed) {
      return next.fencing
        ? { released: true, handedOver: true, fence: Number(row.fence) }
        : { released: true, handedOver: true };
    }
    if (!row.ours) return { released: false, handedOver: false };
    return { released: await this.release(key, token), handedOver: false };
  }

  async leaveLine(key: string): Promise<void> {
    if (this.closed) return;
    const stored = this.stored(key);
    await this.one('leave the line of', key, this.sql.leaveLine, [
      stored,
      this.waiter,
      this.tables.channel,
      noticeOf(stored),
      this.handoffWindow,
    ]);
  }

  async extend(key: string, token: string, ttl: number): Promise<boolean> {
    const [outcome] = await this.extendMany([{ key, token, ttl }]);
    if (outcome instanceof Error) throw outcome;
    return outcome;
  }

  /** Renews the whole batch in one statement; when it fails, every entry gets its error. */
  async extendMany(renewals: readonly LeaseRenewal[]): Promise<Array<boolean | Error>> {
    if (renewals.length === 0) return [];
    try {
      const { rows } = await this.query('renew', renewals.length === 1 ? renewals[0].key : undefined, this.sql.extend, [
        renewals.map(({ key }) => this.stored(key)),
        renewals.map(({ token }) => token),
        renewals.map(({ ttl }) => ttl),
      ]);
      const renewed = new Set((rows as Array<{ position: string }>).map((row) => Number(row.position)));
      return renewals.map((_, index) => renewed.has(index + 1));
    } catch (error) {
      return renewals.map(() => error as Error);
    }
  }

  async inspect(key: string): Promise<LockState> {
    const { rows } = await this.query('inspect', key, this.sql.inspect, [this.stored(key)]);
    const row = rows[0] as
      { held: boolean; remaining: number | null; holder: string | null; fence: string } | undefined;
    if (!row) return { held: false };
    const fence = Number(row.fence) > 0 ? { fence: Number(row.fence) } : {};
    if (!row.held) return { held: false, ...fence };
    return {
      held: true,
      remainingTtl: Math.max(0, row.remaining ?? 0),
      ...fence,
      ...(row.holder === null ? {} : { holder: row.holder }),
    };
  }

  async watch(key: string, since?: number): Promise<ReleaseWatch> {
    return this.listener.watch(noticeOf(this.stored(key)), since);
  }

  /**
   * Checks that the server answers, that the tables are there with the expected shape (creating them unless
   * `createTable: false`), that the role may write them, and that the LISTEN connection hears notices.
   * @throws LockStoreError naming the server (`host:port/database`, never the password) and the cause
   */
  async verify(): Promise<LockStoreVerification> {
    const pool = await this.run('connect', undefined, async (pool) => {
      await pool.query('SELECT 1');
      return pool;
    });
    await this.run('verify its tables', undefined, () => checkTables(pool, this.tables, this.target));
    const warnings: string[] = [];
    const durability = await commitDurability(pool);
    if (durability) warnings.push(`The Postgres store at ${this.target}: ${durability}`);
    const listening = this.options.directUrl ?? this.options.connectionString;
    const where = listening === undefined ? this.target : describeTarget(listening);
    if (!(await this.listener.ready())) {
      const failure = this.listener.lastFailure;
      const why = pgFailure(failure) ?? (failure instanceof Error ? failure.message : 'failed');
      warnings.push(
        `The Postgres store could not open its LISTEN connection to ${where} (${why}): waiters poll (each ` +
          "sleep bounded by the holder's lease) until it connects.",
      );
    } else if (!(await this.listener.hears((notice) => this.notify(pool, notice), PROBE_TIMEOUT))) {
      this.listener.polling = true;
      const advice =
        this.options.directUrl === undefined
          ? 'Set "directUrl" to PostgreSQL itself for wake-ups'
          : '"directUrl" leads to such a pooler too: point it at PostgreSQL itself for wake-ups';
      warnings.push(
        `The Postgres store's LISTEN connection to ${where} heard no NOTIFY sent through the pool: a pooler in ` +
          `transaction mode (PgBouncer) keeps no session. ${advice}; until then waiters poll, each sleep ` +
          "bounded by the holder's lease.",
      );
    }
    return { warnings };
  }

  /** One round trip: the server answers a query through the pool. */
  async health(): Promise<LockStoreHealth> {
    await this.run('check its health', undefined, (pool) => pool.query('SELECT 1'));
    return {};
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.listener.close();
    if (!this.options.pool) {
      const pool = await this.pool.catch(() => undefined);
      if (pool) await endWithin(pool.end());
    }
  }

  private stored(key: string): string {
    return this.options.keyPrefix + key;
  }

  private notify(pool: PostgresPoolLike, notice: string): Promise<unknown> {
    return pool.query('SELECT pg_notify($1, $2)', [this.tables.channel, notice]);
  }

  private async one<Row>(operation: string, key: string, sql: string, values: unknown[]): Promise<Row> {
    const { rows } = await this.query(operation, key, sql, values);
    return rows[0] as Row;
  }

  private query(operation: string, key: string | undefined, sql: string, values: unknown[]) {
    return this.run(operation, key, (pool) => pool.query(sql, values));
  }

  /** Runs `work` on a pooled connection of its own once the tables are there; failures as `run`'s. */
  private session<T>(
    operation: string,
    key: string | undefined,
    work: (client: PostgresClientLike) => Promise<T>,
  ): Promise<T> {
    return this.run(operation, key, (pool) => withPooledClient(pool, work));
  }

  /** Runs `work` in one transaction on a pooled connection once the tables are there; failures as `run`'s. */
  private transaction<T>(
    operation: string,
    key: string | undefined,
    work: (client: PostgresClientLike) => Promise<T>,
  ): Promise<T> {
    return this.session(operation, key, async (client) => {
      await client.query(this.sql.begin);
      try {
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  /** Runs `command` on the pool once the tables are there; every failure becomes a `LockStoreError`. */
  private async run<T>(
    operation: string,
    key: string | undefined,
    command: (pool: PostgresPoolLike) => Promise<T>,
  ): Promise<T> {
    if (this.closed) throw postgresStoreError(operation, key, this.target, new Error('the Postgres store is closed'));
    try {
      const pool = await this.pool;
      await this.ensureTables(pool).catch((error: unknown) => {
        // named only when the server answered it: else the operation could not run at all
        throw isServerAnswer(error) ? postgresStoreError('create its tables', key, this.target, error) : error;
      });
      return await command(pool);
    } catch (error) {
      throw postgresStoreError(operation, key, this.target, error);
    }
  }

  /** Creates the tables once (unless `createTable: false`); a failure is tried again by the next call. */
  private ensureTables(pool: PostgresPoolLike): Promise<void> {
    if (!this.options.createTable) return Promise.resolve();
    this.tablesReady ??= createTables(pool, this.tables, this.sql.begin).catch((error: unknown) => {
      this.tablesReady = undefined;
      throw error;
    });
    return this.tablesReady;
  }
}

function ownPool(pg: PgModule, connectionString: string): PostgresPoolLike {
  const pool = new pg.Pool({
    connectionString,
    max: 10,
    connectionTimeoutMillis: STATEMENT_TIMEOUT,
    query_timeout: STATEMENT_TIMEOUT,
    idleTimeoutMillis: 10_000,
    keepAlive: true,
  });
  // a pooled connection the server ended (restart, pg_terminate_backend) is dropped; the next query opens one
  pool.on('error', () => undefined);
  // and one ended as it is handed out (its goodbye read with the reply that made it ready), before the code it
  // goes to can listen: pg would raise that as an uncaught error, ending the process
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

/** How long the client waits for a query, in ms: a pool's own `query_timeout` when it sets one, else the store's. */
function queryDeadline(pool: PostgresPoolLike | undefined): number {
  const timeout = (pool?.options as { query_timeout?: unknown } | undefined)?.query_timeout;
  return typeof timeout === 'number' && Number.isInteger(timeout) && timeout > 0 ? timeout : STATEMENT_TIMEOUT;
}
