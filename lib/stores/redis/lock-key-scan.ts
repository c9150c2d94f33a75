import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import type { LockListingPage, LockListingQuery } from '../../interfaces/lock-listing.interface.js';
import type { RedisClientPort } from './client/redis-client-port.js';
import { escapeKey, unescapeKey } from './resource-keys.js';

/** How many SCAN calls one page may take at most: the bound on the work of one listing call. */
const MAX_SCANS_PER_PAGE = 16;
/**
 * The least COUNT hint of a SCAN. A SCAN may return more keys than the page has room for; the rest ride in the
 * page's cursor, so the hint follows the room left (a small batch keeps that cursor short), with this floor so
 * that a small page still reads a useful stretch of the key space per call.
 */
const MIN_SCAN_COUNT = 10;

/** One SCAN of one node from `cursor`: the next cursor ('0' once the node was read through) and the user keys. */
export type NodeScan = (node: number, cursor: string, count: number) => Promise<[string, string[]]>;

/** Where a page stopped: the node, its SCAN cursor, and the keys a SCAN found that the page had no room for. */
interface ScanPosition {
  readonly node: number;
  readonly cursor: string;
  readonly pending: readonly string[];
}

/**
 * One page of at most `query.limit` lock keys over several nodes read one after the other (the masters of a
 * Cluster, the nodes of Redlock), at most 16 SCANs. SCAN cannot resume in the middle of the batch it answered,
 * so the keys of a batch past the limit go into the page's cursor and open the next page: each key a SCAN
 * finds is returned once.
 * @throws LockConfigurationError for a cursor no page of this listing returned
 */
export async function scanPage(nodes: number, query: LockListingQuery, scan: NodeScan): Promise<LockListingPage> {
  const start = readScanCursor(query.cursor);
  let { node, cursor } = start;
  const keys = new Set<string>();
  const pending: string[] = [];
  const take = (found: readonly string[]): void => {
    for (const key of found) {
      if (keys.has(key)) continue;
      if (keys.size < query.limit) keys.add(key);
      else pending.push(key);
    }
  };
  take(start.pending);
  for (let scans = 0; scans < MAX_SCANS_PER_PAGE && node < nodes && keys.size < query.limit; scans++) {
    const [next, found] = await scan(node, cursor, Math.max(MIN_SCAN_COUNT, query.limit - keys.size));
    take(found);
    if (next === '0') [node, cursor] = [node + 1, '0'];
    else cursor = next;
  }
  if (node >= nodes && pending.length === 0) return { keys: [...keys] };
  return { keys: [...keys], cursor: writeScanCursor({ node, cursor, pending }) };
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

/** A page's cursor: its position as JSON in base64url, text an operator can pass back in a URL. */
function writeScanCursor(position: ScanPosition): string {
  return Buffer.from(JSON.stringify([position.node, position.cursor, ...position.pending])).toString('base64url');
}

/**
 * A page's cursor read back; the first page's position without one.
 * @throws LockConfigurationError when `text` is not a cursor `writeScanCursor` wrote
 */
function readScanCursor(text: string | undefined): ScanPosition {
  if (text === undefined) return { node: 0, cursor: '0', pending: [] };
  let parts: unknown;
  try {
    parts = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    parts = undefined;
  }
  if (!Array.isArray(parts)) throw badCursor(text);
  const [node, cursor, ...pending] = parts as unknown[];
  const valid =
    typeof node === 'number' &&
    Number.isInteger(node) &&
    node >= 0 &&
    typeof cursor === 'string' &&
    /^\d+$/.test(cursor) &&
    pending.every((key) => typeof key === 'string');
  if (!valid) throw badCursor(text);
  return { node, cursor, pending };
}

/** The refusal of a cursor that is not one. */
function badCursor(text: string): LockConfigurationError {
  return new LockConfigurationError('cursor', text, 'expected the cursor an earlier page of this listing returned');
}

/** `text` matched literally by a Redis glob pattern. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (char) => `\\${char}`);
}
