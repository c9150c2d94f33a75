import type { PostgresTables } from '../postgres-tables.js';
import { namedNoticeSql } from '../release-notice.js';

/**
 * Ends a lease only while `$2` holds it, in one autocommit statement. The row stays for its fence; a key never
 * fenced leaves no row behind. When processes wait for the key, the first in line gets the hand-off window and
 * one NOTIFY names it and the one after it (release-notice.ts): only the first asks now, the next once the
 * window is over (should the first never come), the rest sleep on. Without waiters no NOTIFY is sent (it takes
 * a database-wide lock at commit). `$1` key, `$2` token, `$3` hand-off window (ms), `$4` channel, `$5` the
 * key's notice (see `noticeOf`). Returns `released`.
 */
export function releaseSql({ leases, waiters }: PostgresTables): string {
  return `WITH clock AS (SELECT clock_timestamp() AS now),
ended AS (
  UPDATE ${leases} SET token = NULL, expires_at = NULL, holder = NULL
  FROM clock WHERE key = $1 AND token = $2 AND expires_at > clock.now AND fence <> 0
  RETURNING 1
),
deleted AS (
  DELETE FROM ${leases} USING clock
  WHERE key = $1 AND token = $2 AND expires_at > clock.now AND fence = 0
  RETURNING 1
),
-- places of waiters gone (their wait over, or their reservation passed unused)
swept AS (
  DELETE FROM ${waiters} USING clock
  WHERE key = $1 AND (expires_at <= clock.now OR reserved_until <= clock.now)
  RETURNING 1
),
-- the first two live places, in the order they came
line AS (
  SELECT waiter, row_number() OVER (ORDER BY since, waiter) AS place FROM ${waiters}, clock
  WHERE key = $1 AND expires_at > clock.now AND (reserved_until IS NULL OR reserved_until > clock.now)
  ORDER BY since, waiter LIMIT 2
),
released AS (SELECT 1 FROM ended UNION ALL SELECT 1 FROM deleted),
reserved AS (
  UPDATE ${waiters} AS w SET reserved_until = clock.now + $3::double precision * interval '1 millisecond'
  FROM clock, line
  WHERE w.key = $1 AND w.waiter = line.waiter AND line.place = 1 AND EXISTS (SELECT 1 FROM released)
  RETURNING w.waiter
),
notified AS (
  SELECT pg_notify($4, ${namedNoticeSql('$5', 'reserved.waiter', '(SELECT waiter FROM line WHERE place = 2)')})
  FROM reserved
)
SELECT EXISTS (SELECT 1 FROM released) AS released, (SELECT count(*) FROM notified) AS notified,
  (SELECT count(*) FROM swept) AS swept`;
}
