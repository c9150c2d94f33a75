import type { PostgresTables } from '../postgres-tables.js';

/**
 * Gives up this store's place in a key's line (`$1` key, `$2` waiter id). A place that held the key reserved
 * passes its turn on: the others are told by NOTIFY (`$3` channel, `$4` notice).
 */
export function leaveLineSql({ waiters }: PostgresTables): string {
  return `WITH gone AS (
  DELETE FROM ${waiters} WHERE key = $1 AND waiter = $2 RETURNING reserved_until
),
others AS (
  SELECT 1 FROM ${waiters} WHERE key = $1 AND waiter <> $2 AND expires_at > clock_timestamp() LIMIT 1
),
notified AS (
  SELECT pg_notify($3, $4) FROM gone, others
  WHERE gone.reserved_until IS NOT NULL AND gone.reserved_until > clock_timestamp()
)
SELECT (SELECT count(*) FROM notified) AS notified`;
}
