import type { PostgresTables } from '../postgres-tables.js';

/*
 * The statements of the permits (semaphores, readers-writer locks). Each permit operation on a key is one
 * short transaction in two round trips (`BEGIN`, lock, read; then write, `COMMIT`: see inline-sql.ts) that
 * first locks the key's lease row: permit operations on a key, and mutex grants of
 * it (their upsert locks the same row), run one after another. While permits live, the lease row holds the
 * guard token '#' until the last of them ends, so a mutex grant is refused beside them without reading the
 * permits. Times travel as epoch milliseconds by the server's clock.
 */

/** The guard token of a lease row while permits of its key live: no mutex grant beside them. */
export const PERMITS_GUARD = '#';

/**
 * Creates the key's lease row if missing and locks it for the transaction: `$1` key. Returns its token,
 * expiry and fence, and the server's clock (`now`), read once the lock is ours.
 */
export function lockKeySql({ leases }: PostgresTables): string {
  return `INSERT INTO ${leases} AS l (key) VALUES ($1)
ON CONFLICT (key) DO UPDATE SET fence = l.fence
RETURNING l.token, extract(epoch FROM l.expires_at) * 1000 AS expires_at, l.fence,
  extract(epoch FROM clock_timestamp()) * 1000 AS now`;
}

/** The key's lease row and the server's clock, without a lock (for inspect): `$1` key. */
export function leaseRowSql({ leases }: PostgresTables): string {
  return `SELECT token, extract(epoch FROM expires_at) * 1000 AS expires_at, fence,
  extract(epoch FROM clock_timestamp()) * 1000 AS now
FROM ${leases} WHERE key = $1`;
}

/**
 * The key's permits and places in the order of the line (`kind` 'permit'), then the live places of its
 * mutex waiters, first in line first (`kind` 'mutex': a mutex caller waiting beside permits holds new permits
 * back): `$1` key. Run once the key's lease row is locked, so that it reads what the last holder of the lock
 * wrote.
 */
export function readKeySql({ permits, waiters }: PostgresTables): string {
  return `SELECT 'permit' AS kind, token, shape, mode, waiting, extract(epoch FROM expires_at) * 1000 AS expires_at,
  extract(epoch FROM since) * 1000 AS since, extract(epoch FROM reserved_until) * 1000 AS reserved_until,
  holder, fence
FROM ${permits} WHERE key = $1
UNION ALL
SELECT 'mutex', waiter, NULL, NULL, true, extract(epoch FROM expires_at) * 1000, extract(epoch FROM since) * 1000,
  extract(epoch FROM reserved_until) * 1000, NULL, NULL
FROM ${waiters}
WHERE key = $1 AND expires_at > clock_timestamp() AND (reserved_until IS NULL OR reserved_until > clock_timestamp())
ORDER BY kind DESC, since, token`;
}

/**
 * Writes a key back after a permit operation, in one statement: its permits and places (`$2` shape, `$3` the
 * rows as a JSON array of `{ t, m, w, e, s, r, h, f }`) replacing what it had; the lease row (`$4` whether to
 * touch it: not while a mutex lease holds it; `$5` the guard token while permits live, else NULL; `$6` its
 * end in epoch ms; `$7` the fence; a row that keeps nothing is deleted); the mutex waiter `$8` (or NULL)
 * reserved the key for `$9` ms; and, when `$12`, one NOTIFY (`$10` channel, `$11` notice). `$1` key.
 */
export function writeKeySql({ leases, permits, waiters }: PostgresTables): string {
  return `WITH rows AS (
  SELECT * FROM jsonb_to_recordset($3::jsonb) AS x(t text, m text, w boolean, e float8, s float8, r float8, h text, f bigint)
),
dropped AS (
  DELETE FROM ${permits} WHERE key = $1 AND NOT EXISTS (SELECT 1 FROM rows WHERE rows.t = token) RETURNING 1
),
written AS (
  INSERT INTO ${permits} AS p (key, token, shape, mode, waiting, expires_at, since, reserved_until, holder, fence)
  SELECT $1, t, $2, m, w, to_timestamp(e / 1000), to_timestamp(s / 1000), to_timestamp(r / 1000), h, f FROM rows
  ON CONFLICT (key, token) DO UPDATE SET shape = excluded.shape, mode = excluded.mode, waiting = excluded.waiting,
    expires_at = excluded.expires_at, since = excluded.since, reserved_until = excluded.reserved_until,
    holder = excluded.holder, fence = excluded.fence
  RETURNING 1
),
kept AS (
  UPDATE ${leases} SET token = $5, expires_at = to_timestamp($6::float8 / 1000), holder = NULL, fence = $7
  WHERE key = $1 AND $4::boolean AND ($5::text IS NOT NULL OR $7::bigint <> 0)
  RETURNING 1
),
emptied AS (
  DELETE FROM ${leases} WHERE key = $1 AND $4::boolean AND $5::text IS NULL AND $7::bigint = 0 RETURNING 1
),
called AS (
  UPDATE ${waiters} SET reserved_until = clock_timestamp() + $9::double precision * interval '1 millisecond'
  WHERE key = $1 AND waiter = $8 AND reserved_until IS NULL
  RETURNING 1
),
notified AS (SELECT pg_notify($10, $11) WHERE $12::boolean)
SELECT (SELECT count(*) FROM dropped) + (SELECT count(*) FROM written) + (SELECT count(*) FROM kept)
  + (SELECT count(*) FROM emptied) + (SELECT count(*) FROM called) + (SELECT count(*) FROM notified) AS changes`;
}

/**
 * Renews a batch of permits, each only while live (`$1` keys, `$2` tokens, `$3` ttls in ms), and lengthens
 * the guard of their keys to their new end; the caller has locked the keys' lease rows. Returns the position
 * (1-based) of each renewed entry.
 */
export function extendPermitsSql({ leases, permits }: PostgresTables): string {
  return `WITH renewed AS (
  UPDATE ${permits} AS p SET expires_at = clock_timestamp() + r.ttl * interval '1 millisecond'
  FROM unnest($1::text[], $2::text[], $3::double precision[]) WITH ORDINALITY AS r(key, token, ttl, position)
  WHERE p.key = r.key AND p.token = r.token AND NOT p.waiting AND p.expires_at > clock_timestamp()
  RETURNING p.key, p.expires_at, r.position
),
guarded AS (
  UPDATE ${leases} AS l SET expires_at = g.until
  FROM (SELECT key, max(expires_at) AS until FROM renewed GROUP BY key) AS g
  WHERE l.key = g.key AND l.token = '${PERMITS_GUARD}' AND l.expires_at < g.until
  RETURNING 1
)
SELECT position, (SELECT count(*) FROM guarded) AS guarded FROM renewed`;
}

/** Locks the lease rows of the keys `$1` in a stable order, so that two batches never wait on each other. */
export function lockKeysSql({ leases }: PostgresTables): string {
  return `SELECT 1 FROM ${leases} WHERE key = ANY($1::text[]) ORDER BY key FOR UPDATE`;
}
