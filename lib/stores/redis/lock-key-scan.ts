import type { LockListingPage, LockListingQuery } from '../../interfaces/lock-listing.interface.js';
import type { RedisClientPort } from './client/redis-client-port.js';
import { escapeKey, unescapeKey } from './resource-keys.js';

/** How many SCAN calls one page may take at most: the bound on the work of one listing call. */
const MAX_SCANS_PER_PAGE = 16;
/** The least COUNT hint of a SCAN: small pages still read a useful stretch of the key space per call. */
const MIN_SCAN_COUNT = 100;

/** One SCAN of one node from `cursor`: the next cursor ('0' once the node was read through) and the user keys. */
export type NodeScan = (node: number, cursor: string, count: number) => Promise<[string, string[]]>;

/**
 * One page of lock keys over several nodes read one after the other (the masters of a Cluster, the nodes of
 * Redlock), at most 16 SCANs: the page's cursor is the node's index and its SCAN cursor.
 */
export async function scanPage(nodes: number, query: LockListingQuery, scan: NodeScan): Promise<LockListingPage> {
  const count = Math.max(MIN_SCAN_COUNT, query.limit);
  let [node, cursor] = parseCursor(query.cursor);
  const keys = new Set<string>();
  for (let scans = 0; scans < MAX_SCANS_PER_PAGE && node < nodes && keys.size < query.limit; scans++) {
    const [next, found] = await scan(node, cursor, count);
    for (const key of found) keys.add(key);
    if (next === '0') [node, cursor] = [node + 1, '0'];
    else cursor = next;
  }
  return node < nodes ? { keys: [...keys], cursor: `${node}:${cursor}` } : { keys: [...keys] };
}

/**
 * One SCAN of `client` for the lock keys under `keyPrefix` whose user key starts with `prefix`. A lock key is
 * the only name of a resource that ends with its hash tag's `}` (resource-keys.ts), so one MATCH pattern finds
 * each resource once.
 */
export async function scanLockKeys(
  client: RedisClientPort,
  keyPrefix: string,
  prefix: string,
  cursor: string,
  count: number,
): Promise<[string, string[]]> {
  const head = `${keyPrefix}{`;
  const match = `${globEscape(head + escapeKey(prefix))}*}`;
  const [next, names] = await client.scan(cursor, 'MATCH', match, 'COUNT', count);
  return [next, names.map((name) => unescapeKey(name.slice(head.length, -1)))];
}

/** A page's cursor read back: the node's index and its SCAN cursor. */
function parseCursor(cursor: string | undefined): [number, string] {
  const match = /^(\d+):(\d+)$/.exec(cursor ?? '');
  return match ? [Number(match[1]), match[2]] : [0, '0'];
}

/** `text` matched literally by a Redis glob pattern. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (char) => `\\${char}`);
}
