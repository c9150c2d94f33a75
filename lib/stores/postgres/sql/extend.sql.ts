import type { PostgresTables } from '../postgres-tables.js';

/**
 * Renews a batch of leases in one statement, each only while its token holds it and has not run out by the
 * server's clock; never re-creates one. `$1` keys, `$2` tokens, `$3` ttls (ms), as arrays of one length.
 * Returns the position (1-based) of each renewed entry.
 */
export function extendSql({ leases }: PostgresTables): string {
  return `UPDATE ${leases} AS l SET expires_at = clock_timestamp() + r.ttl * interval '1 millisecond'
FROM unnest($1::text[], $2::text[], $3::double precision[]) WITH ORDINALITY AS r(key, token, ttl, position)
WHERE l.key = r.key AND l.token = r.token AND l.expires_at > clock_timestamp()
RETURNING r.position`;
}
