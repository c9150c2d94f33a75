import type { PostgresTables } from '../postgres-tables.js';

/**
 * The DDL of the store's tables, idempotent (`IF NOT EXISTS`): what the store runs at startup unless
 * `createTable: false`, and what `PostgresLockStore.ddl()` prints for a migration. Plain (logged) tables: a
 * fence must survive a crash of the server.
 */
export function schemaDdl(tables: PostgresTables): string {
  return `-- nestjs-lock: the leases, one row per key that has a lease or a fence
CREATE TABLE IF NOT EXISTS ${tables.leases} (
  key text PRIMARY KEY,
  -- the holder's random token and the end of its lease, by the server's clock; NULL once released
  token text,
  expires_at timestamptz,
  -- who holds it (host, pid, label, time: never the token), for inspect()
  holder text,
  -- the last fence granted for the key: it only grows, and stays when the lease is released
  fence bigint NOT NULL DEFAULT 0
);
-- the line of waiting processes per key, served in the order they came
CREATE TABLE IF NOT EXISTS ${tables.waiters} (
  key text NOT NULL,
  waiter text NOT NULL,
  since timestamptz NOT NULL,
  -- the place lives until the waiter's wait ends, or until a reservation for it passes unused
  expires_at timestamptz NOT NULL,
  reserved_until timestamptz,
  PRIMARY KEY (key, waiter)
);
-- semaphores and readers-writer locks: one row per permit, and per place in the key's line of permit waiters
CREATE TABLE IF NOT EXISTS ${tables.permits} (
  key text NOT NULL,
  token text NOT NULL,
  -- the key's shape ('limit:<N>' or 'rw') and the permit's mode ('p' semaphore, 'r' reader, 'w' writer)
  shape text NOT NULL,
  mode text NOT NULL,
  -- a place waits (true) or a permit is held (false); either ends at expires_at
  waiting boolean NOT NULL,
  expires_at timestamptz NOT NULL,
  -- a place's turn in the line, and until when a freed permit stays reserved for it
  since timestamptz NOT NULL,
  reserved_until timestamptz,
  holder text,
  fence bigint,
  PRIMARY KEY (key, token)
);
-- the responses @Idempotent() replays: one row per hashed key, kept until expires_at
CREATE TABLE IF NOT EXISTS ${tables.records} (
  key text PRIMARY KEY,
  value text NOT NULL,
  expires_at timestamptz NOT NULL
);
-- each keep sweeps a few expired rows, oldest first
CREATE INDEX IF NOT EXISTS "${tables.table}_records_exp" ON ${tables.records} (expires_at);
`;
}

/** The columns each table must have, with their types as `information_schema.columns` names them. */
export function expectedColumns(tables: PostgresTables): ReadonlyArray<{
  readonly table: string;
  readonly columns: Readonly<Record<string, string>>;
}> {
  return [
    {
      table: tables.table,
      columns: {
        key: 'text',
        token: 'text',
        expires_at: 'timestamp with time zone',
        holder: 'text',
        fence: 'bigint',
      },
    },
    {
      table: `${tables.table}_waiters`,
      columns: {
        key: 'text',
        waiter: 'text',
        since: 'timestamp with time zone',
        expires_at: 'timestamp with time zone',
        reserved_until: 'timestamp with time zone',
      },
    },
    {
      table: `${tables.table}_permits`,
      columns: {
        key: 'text',
        token: 'text',
        shape: 'text',
        mode: 'text',
        waiting: 'boolean',
        expires_at: 'timestamp with time zone',
        since: 'timestamp with time zone',
        reserved_until: 'timestamp with time zone',
        holder: 'text',
        fence: 'bigint',
      },
    },
    {
      table: `${tables.table}_records`,
      columns: { key: 'text', value: 'text', expires_at: 'timestamp with time zone' },
    },
  ];
}

/** The columns of the store's tables that exist, by table: `$1` schema, `$2` table names. */
export const COLUMNS_SQL = `SELECT table_name, column_name, data_type FROM information_schema.columns
WHERE table_schema = $1 AND table_name = ANY($2::text[])`;

/**
 * Whether the connected role may read and write each table: `$1` the tables as `regclass` text. Each privilege
 * is asked on its own: given a list, has_table_privilege answers whether the role has any of them.
 */
export const PRIVILEGES_SQL = `SELECT t AS name, has_table_privilege(t, 'SELECT') AND has_table_privilege(t, 'INSERT')
  AND has_table_privilege(t, 'UPDATE') AND has_table_privilege(t, 'DELETE') AS writable
FROM unnest($1::text[]) AS t`;
