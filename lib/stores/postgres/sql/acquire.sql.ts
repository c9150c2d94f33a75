import type { PostgresTables } from '../postgres-tables.js';
import { namedNoticeSql } from '../release-notice.js';

/**
 * Grants a lease in one autocommit statement, judged by the server's clock (`clock_timestamp()`: a snapshot's
 * `now()` is the time its transaction began, which a pooler or a slow statement can leave far behind).
 * `$1` key, `$2` token, `$3` ttl (ms), `$4` holder record or NULL, `$5` fencing, `$6` this store's waiter id,
 * `$7` how long a refused caller's place in the line lives (ms), NULL for one that does not wait, `$8` the
 * hand-off window (ms), `$9` channel, `$10` the key's notice (see `noticeOf`). Returns `acquired`, `fence`
 * (when granted) and `remaining`: in ms, the holder's lease, else the reservation of the key for the process
 * first in line, else NULL. A free key found held back for nobody yet (its lease ran out, or the first in line
 * left or never came) is reserved for the first in line, and one NOTIFY tells it and the one after it, as a
 * release does: a waiter that died in line costs the others one hand-off window, whoever asks next.
 */
export function acquireSql({ leases, waiters }: PostgresTables): string {
  return `WITH clock AS (SELECT clock_timestamp() AS now),
-- the live lease as this statement's snapshot sees it: only for the refusal's remaining time and a retry
current AS (
  SELECT token, expires_at FROM ${leases}, clock
  WHERE key = $1 AND token IS NOT NULL AND expires_at > clock.now
),
-- the first live place of the key's line (a place lives until its wait ends, or its reservation passes)
head AS (
  SELECT waiter, reserved_until FROM ${waiters}, clock
  WHERE key = $1 AND expires_at > clock.now AND (reserved_until IS NULL OR reserved_until > clock.now)
  ORDER BY since, waiter LIMIT 1
),
granted AS (
  INSERT INTO ${leases} AS l (key, token, expires_at, holder, fence)
  SELECT $1, $2, clock.now + $3::double precision * interval '1 millisecond', $4,
    -- a fence at or above the clock in microseconds: above every earlier one even after a restore
    CASE WHEN $5 THEN floor(extract(epoch FROM clock.now) * 1000000)::bigint ELSE 0 END
  FROM clock
  -- a retry of our own grant, or nobody else first in line
  WHERE EXISTS (SELECT 1 FROM current WHERE token = $2) OR NOT EXISTS (SELECT 1 FROM head WHERE waiter <> $6)
  ON CONFLICT (key) DO UPDATE SET
    token = excluded.token,
    expires_at = excluded.expires_at,
    holder = excluded.holder,
    fence = CASE
      -- a retry after a lost reply keeps the fence it was granted
      WHEN l.token = excluded.token AND l.expires_at > clock_timestamp() THEN l.fence
      WHEN $5 THEN greatest(l.fence + 1, excluded.fence)
      ELSE l.fence
    END
  -- judged on the row as it stands once any concurrent grant has committed: only one of them wins
  WHERE l.token IS NULL OR l.expires_at <= clock_timestamp() OR l.token = excluded.token
  RETURNING l.fence
),
-- a refused waiter takes a place at the end of the line, or keeps (and lengthens) the one it has
place AS (
  INSERT INTO ${waiters} AS w (key, waiter, since, expires_at)
  SELECT $1, $6, clock.now, clock.now + $7::double precision * interval '1 millisecond' FROM clock
  WHERE $7::double precision IS NOT NULL AND NOT EXISTS (SELECT 1 FROM granted)
  ON CONFLICT (key, waiter) DO UPDATE SET
    -- a place that ran out goes to the end of the line
    since = CASE WHEN w.expires_at <= clock_timestamp() OR w.reserved_until <= clock_timestamp()
      THEN excluded.since ELSE w.since END,
    reserved_until = CASE WHEN w.expires_at <= clock_timestamp() OR w.reserved_until <= clock_timestamp()
      THEN NULL ELSE w.reserved_until END,
    expires_at = greatest(excluded.expires_at, w.expires_at)
  RETURNING 1
),
-- a grant ends the place of its process
leaving AS (
  DELETE FROM ${waiters} WHERE key = $1 AND waiter = $6 AND EXISTS (SELECT 1 FROM granted) RETURNING 1
),
-- a free lease held back for the first in line: its hand-off window starts now, if it has not yet
reserved AS (
  UPDATE ${waiters} AS w SET reserved_until = clock.now + $8::double precision * interval '1 millisecond'
  FROM clock, head
  WHERE w.key = $1 AND w.waiter = head.waiter AND head.waiter <> $6 AND head.reserved_until IS NULL
    AND NOT EXISTS (SELECT 1 FROM current) AND NOT EXISTS (SELECT 1 FROM granted)
  RETURNING w.waiter, w.reserved_until
),
notified AS (
  SELECT pg_notify($9, ${namedNoticeSql(
    '$10',
    'reserved.waiter',
    `(SELECT waiter FROM ${waiters}, clock WHERE key = $1 AND waiter <> reserved.waiter AND expires_at > clock.now
      AND (reserved_until IS NULL OR reserved_until > clock.now) ORDER BY since, waiter LIMIT 1)`,
  )})
  FROM reserved, clock
)
SELECT
  EXISTS (SELECT 1 FROM granted) AS acquired,
  (SELECT fence FROM granted) AS fence,
  ceil(extract(epoch FROM coalesce(
    (SELECT expires_at FROM current),
    (SELECT reserved_until FROM reserved),
    (SELECT reserved_until FROM head WHERE waiter <> $6)
  ) - clock.now) * 1000)::integer AS remaining,
  (SELECT count(*) FROM place) + (SELECT count(*) FROM leaving) AS line_changes,
  (SELECT count(*) FROM notified) AS notified
FROM clock`;
}
