import type { PostgresTables } from '../postgres-tables.js';

/** How many expired records one keep deletes besides its own row: the table stays near what is live. */
const SWEEP_BATCH = 16;

/**
 * Keeps a record unless a live one holds the key, in one autocommit statement: `INSERT ... ON CONFLICT` is
 * atomic against a concurrent keep of the same key, and an expired row (its ttl passed on the server's clock)
 * is taken over as if absent. On the way it deletes a few expired rows of other keys, oldest first, skipping
 * rows another statement has locked. `$1` key, `$2` value, `$3` ttl (ms). A row back: kept; none: a live
 * record holds the key.
 */
export function keepRecordSql({ records }: PostgresTables): string {
  return `WITH swept AS (
  DELETE FROM ${records} WHERE key IN (
    SELECT key FROM ${records} WHERE expires_at <= clock_timestamp() AND key <> $1
    ORDER BY expires_at LIMIT ${SWEEP_BATCH} FOR UPDATE SKIP LOCKED
  )
)
INSERT INTO ${records} AS kept (key, value, expires_at)
VALUES ($1, $2, clock_timestamp() + $3 * interval '1 millisecond')
ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at
  WHERE kept.expires_at <= clock_timestamp()
RETURNING 1 AS kept`;
}

/** Reads a live record: `$1` key. No row: none kept, or its ttl has passed (a sweep deletes it later). */
export function readRecordSql({ records }: PostgresTables): string {
  return `SELECT value FROM ${records} WHERE key = $1 AND expires_at > clock_timestamp()`;
}

/** Deletes a record, live or not: `$1` key. */
export function deleteRecordSql({ records }: PostgresTables): string {
  return `DELETE FROM ${records} WHERE key = $1`;
}
