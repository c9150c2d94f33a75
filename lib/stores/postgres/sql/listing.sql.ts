import type { PostgresTables } from '../postgres-tables.js';

/**
 * Reads the lease rows in key order from `$1` (itself included when `from` is 'at', else after it), at most
 * `$3` rows, and answers the held keys among them that start with `$2`, at most `$4`: a keyset page whose work
 * is bounded by `$3` whatever the share of free or foreign rows. Returns `keys` (in order), how many rows it
 * `scanned` and the `last` of them, where the next read goes on.
 */
export function listKeysSql({ leases }: PostgresTables, from: 'at' | 'after'): string {
  return `WITH scanned AS (
  SELECT key, token, expires_at FROM ${leases} WHERE key ${from === 'at' ? '>=' : '>'} $1 ORDER BY key LIMIT $3
),
listed AS (
  SELECT key FROM scanned
  WHERE starts_with(key, $2) AND token IS NOT NULL AND expires_at > clock_timestamp()
  ORDER BY key LIMIT $4
)
SELECT coalesce((SELECT array_agg(key ORDER BY key) FROM listed), '{}') AS keys,
  (SELECT count(*) FROM scanned)::integer AS scanned, (SELECT max(key) FROM scanned) AS last`;
}

/** How many processes stand in the mutex line of `$1` right now (live places, not passed reservations). */
export function countWaitersSql({ waiters }: PostgresTables): string {
  return `SELECT count(*)::integer AS waiters FROM ${waiters}
WHERE key = $1 AND expires_at > clock_timestamp() AND (reserved_until IS NULL OR reserved_until > clock_timestamp())`;
}

/**
 * An operator's forced release, run once the key's lease row is locked (permits.sql.ts `lockKeySql`): ends
 * every permit of `$1` and its mutex lease, raises its fence above every fence granted before (at least the
 * server clock in microseconds, as a grant takes it), remembers each ended token in the records table under
 * `revoked:<sha256 of key, newline, token>` until `$4` ms past the longest ended lease, so that its holder hears
 * `revoked`, and wakes the key's waiters by one NOTIFY. `$2` the live mutex token (NULL: none) and `$3` the end
 * of its lease in epoch ms; `$5` channel, `$6` notice. Returns how many it `ended` and the `fence` after it.
 */
export function revokeSql({ leases, permits, records }: PostgresTables): string {
  return `WITH clock AS (SELECT clock_timestamp() AS now),
ended_permits AS (DELETE FROM ${permits} WHERE key = $1 AND NOT waiting RETURNING token, expires_at),
ended AS (
  SELECT token, expires_at FROM ended_permits, clock WHERE expires_at > clock.now
  UNION ALL SELECT $2::text, to_timestamp($3::float8 / 1000) WHERE $2::text IS NOT NULL
),
raised AS (
  UPDATE ${leases} AS l SET token = NULL, expires_at = NULL, holder = NULL,
    fence = greatest(l.fence + 1, floor(extract(epoch FROM clock.now) * 1000000)::bigint)
  FROM clock WHERE l.key = $1
  RETURNING l.fence
),
remembered AS (
  INSERT INTO ${records} (key, value, expires_at)
  SELECT 'revoked:' || encode(sha256(convert_to($1 || E'\\n' || token, 'UTF8')), 'hex'), '1',
    (SELECT max(expires_at) FROM ended) + $4::double precision * interval '1 millisecond'
  FROM ended
  ON CONFLICT (key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at
  RETURNING 1
),
notified AS (SELECT pg_notify($5, $6))
SELECT (SELECT count(*) FROM ended)::integer AS ended, (SELECT fence FROM raised) AS fence,
  (SELECT count(*) FROM remembered) AS remembered, (SELECT count(*) FROM notified) AS notified`;
}
