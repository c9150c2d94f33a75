import type { PostgresTables } from '../postgres-tables.js';
import { namedNoticeSql } from '../release-notice.js';

/**
 * Gives up this store's place in a key's line (`$1` key, `$2` waiter id). A place that held the key reserved
 * passes its turn on: the key is reserved for the next live place for the hand-off window (`$5` ms), and one
 * NOTIFY (`$3` channel, `$4` the key's notice) names it and the one after it, as a release does.
 */
export function leaveLineSql({ waiters }: PostgresTables): string {
  return `WITH clock AS (SELECT clock_timestamp() AS now),
gone AS (
  DELETE FROM ${waiters} WHERE key = $1 AND waiter = $2 RETURNING reserved_until
),
-- the first two live places after ours, in the order they came
line AS (
  SELECT waiter, row_number() OVER (ORDER BY since, waiter) AS place FROM ${waiters}, clock
  WHERE key = $1 AND waiter <> $2 AND expires_at > clock.now
    AND (reserved_until IS NULL OR reserved_until > clock.now)
  ORDER BY since, waiter LIMIT 2
),
passed AS (
  UPDATE ${waiters} AS w SET reserved_until = clock.now + $5::double precision * interval '1 millisecond'
  FROM clock, gone, line
  WHERE w.key = $1 AND w.waiter = line.waiter AND line.place = 1
    AND gone.reserved_until IS NOT NULL AND gone.reserved_until > clock.now
  RETURNING w.waiter
),
notified AS (
  SELECT pg_notify($3, ${namedNoticeSql('$4', 'passed.waiter', '(SELECT waiter FROM line WHERE place = 2)')})
  FROM passed
)
SELECT (SELECT count(*) FROM notified) AS notified`;
}
