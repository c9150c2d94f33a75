import type { PostgresPoolLike } from '../../interfaces/postgres-store-options.interface.js';
import type { ResponseRecords } from '../../interfaces/response-records.interface.js';
import type { PostgresTables } from './postgres-tables.js';
import { deleteRecordSql, keepRecordSql, readRecordSql } from './sql/records.sql.js';

/** What the Postgres records need of their lock store: its tables, its key prefix and its pool. */
export interface PostgresRecordsContext {
  readonly tables: PostgresTables;
  /** The key as stored (with the store's prefix). */
  stored(key: string): string;
  /** Runs `command` on the pool; failures become the store's errors. */
  run<T>(operation: string, key: string | undefined, command: (pool: PostgresPoolLike) => Promise<T>): Promise<T>;
}

/**
 * Response records in PostgreSQL, one row each in `<table>_records` beside the leases, with its expiry on the
 * server's clock (`clock_timestamp()`): one autocommit statement per operation, so no session state (PgBouncer
 * in transaction mode is fine). Expired rows are invisible at once and deleted a few at a time by later keeps.
 */
export class PostgresRecords implements ResponseRecords {
  private readonly sql: { readonly keep: string; readonly read: string; readonly delete: string };

  constructor(private readonly context: PostgresRecordsContext) {
    const { tables } = context;
    this.sql = { keep: keepRecordSql(tables), read: readRecordSql(tables), delete: deleteRecordSql(tables) };
  }

  async put(key: string, value: string, ttl: number): Promise<boolean> {
    const { rows } = await this.context.run('keep a response under', key, (pool) =>
      pool.query(this.sql.keep, [this.context.stored(key), value, Math.max(1, Math.ceil(ttl))]),
    );
    return rows.length > 0;
  }

  async get(key: string): Promise<string | undefined> {
    const { rows } = await this.context.run('read the response under', key, (pool) =>
      pool.query(this.sql.read, [this.context.stored(key)]),
    );
    return (rows[0] as { value: string } | undefined)?.value;
  }

  async delete(key: string): Promise<void> {
    await this.context.run('delete the response under', key, (pool) =>
      pool.query(this.sql.delete, [this.context.stored(key)]),
    );
  }
}
