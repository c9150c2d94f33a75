import { createHash } from 'node:crypto';

/** The store's tables as SQL names them (quoted, schema-qualified), and the channel of its release notices. */
export interface PostgresTables {
  /** `"schema"."table"`: one row per key that has a lease or a fence. */
  readonly leases: string;
  /** `"schema"."table_waiters"`: one place per waiting process and key, in the order they came. */
  readonly waiters: string;
  /** `"schema"."table_permits"`: one row per live permit of a semaphore or a readers-writer lock. */
  readonly permits: string;
  /** `"schema"."table_records"`: one row per response kept for an idempotent request, until its expiry. */
  readonly records: string;
  /** The leases table as `regclass` text for catalog look-ups: `schema.table`, each part quoted. */
  readonly schema: string;
  readonly table: string;
  /**
   * The LISTEN/NOTIFY channel: a short hash of the schema-qualified table, so that it stays within the 63
   * bytes of an identifier whatever the names, and two lock spaces of one database never wake each other.
   */
  readonly channel: string;
}

/** The names of the store's tables, from names already checked to be plain identifiers. */
export function postgresTables(schema: string, table: string): PostgresTables {
  const quote = (name: string): string => `"${name}"`;
  return {
    leases: `${quote(schema)}.${quote(table)}`,
    waiters: `${quote(schema)}.${quote(`${table}_waiters`)}`,
    permits: `${quote(schema)}.${quote(`${table}_permits`)}`,
    records: `${quote(schema)}.${quote(`${table}_records`)}`,
    schema,
    table,
    channel: `nestjs_lock_${createHash('sha256').update(`${schema}.${table}`).digest('hex').slice(0, 16)}`,
  };
}

/**
 * What a release notice carries for a key: a short hash of the prefixed key, which bounds the payload (NOTIFY
 * takes at most 8000 bytes) and keeps the key itself out of `pg_stat_activity` and the server's logs.
 */
export function noticeOf(storedKey: string): string {
  return createHash('sha256').update(storedKey).digest('base64url').slice(0, 22);
}
