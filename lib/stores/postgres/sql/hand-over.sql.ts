import type { PostgresTables } from '../postgres-tables.js';

/**
 * Passes a lease from `$2` to the next waiter of this process (`$3`) in one autocommit statement, only while
 * `$2` holds it and no other process stands in the key's line (it would be overtaken). `$1` key, `$4` ttl
 * (ms), `$5` holder record or NULL, `$6` fencing, `$7` this store's waiter id. Returns `handed`, `fence`, and
 * `ours`: whether `$2` held the lease (when it did but was not handed, the caller releases it).
 */
export function handOverSql({ leases, waiters }: PostgresTables): string {
  return `WITH clock AS (SELECT clock_timestamp() AS now),
others AS (
  SELECT 1 FROM ${waiters}, clock
  WHERE key = $1 AND waiter <> $7 AND expires_at > clock.now
    AND (reserved_until IS NULL OR reserved_until > clock.now)
  LIMIT 1
),
handed AS (
  UPDATE ${leases} SET token = $3, expires_at = clock.now + $4::double precision * interval '1 millisecond',
    holder = $5,
    fence = CASE WHEN $6 THEN greatest(fence + 1, floor(extract(epoch FROM clock.now) * 1000000)::bigint)
      ELSE fence END
  FROM clock
  WHERE key = $1 AND token = $2 AND expires_at > clock.now AND NOT EXISTS (SELECT 1 FROM others)
  RETURNING fence
),
-- the next waiter was this process's: its place in the line is spent
leaving AS (
  DELETE FROM ${waiters} WHERE key = $1 AND waiter = $7 AND EXISTS (SELECT 1 FROM handed) RETURNING 1
),
ours AS (SELECT 1 FROM ${leases}, clock WHERE key = $1 AND token = $2 AND expires_at > clock.now)
SELECT EXISTS (SELECT 1 FROM handed) AS handed, (SELECT fence FROM handed) AS fence,
  EXISTS (SELECT 1 FROM ours) AS ours, (SELECT count(*) FROM leaving) AS left_line`;
}
