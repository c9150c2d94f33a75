import type { PostgresTables } from '../postgres-tables.js';

/** Reads a key's lease and fence, never the token: `$1` key. No row: never fenced and not held. */
export function inspectSql({ leases }: PostgresTables): string {
  return `SELECT token IS NOT NULL AND expires_at > clock_timestamp() AS held,
  ceil(extract(epoch FROM expires_at - clock_timestamp()) * 1000)::integer AS remaining,
  holder, fence
FROM ${leases} WHERE key = $1`;
}
