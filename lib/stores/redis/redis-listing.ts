import type { Cluster, Redis } from '../../interfaces/ioredis-types.js';
import type {
  LockListing,
  LockListingPage,
  LockListingQuery,
  LockRevocation,
  LockRevoking,
} from '../../interfaces/lock-listing.interface.js';
import { isCluster } from './cluster-client.js';
import { escapeKey, resourceKeys, unescapeKey } from './resource-keys.js';
import { permitKeys } from './permits/permit-keys.js';
import { runScript } from './script-runner.js';
import { REVOKE } from './scripts/revoke.script.js';
import { redisStoreError } from './store-error.js';

/** How many SCAN calls one page may take at most: the bound on the work of one `keys` call. */
const MAX_SCANS_PER_PAGE = 16;
/** The least COUNT hint of a SCAN: small pages still read a useful stretch of the key space per call. */
const MIN_SCAN_COUNT = 100;
/** How long after the longest ended lease a revoked token is remembered for its holder's renewal, in ms. */
const REVOKED_KEPT_FOR = 60_000;

/** What the listing needs of its `RedisLockStore`. */
export interface RedisListingOptions {
  readonly client: Redis | Cluster;
  readonly keyPrefix: string;
  /** 'PUBLISH', 'SPUBLISH' or '' (release notices off). */
  readonly publish: string;
}

/**
 * The operator's view of a Redis store: its lock keys found by SCAN (with a cursor, on every master of a
 * Cluster in turn), and forced releases by one script on the resource's slot (scripts/revoke.script.ts). A
 * lock key is the only name of a resource that ends with its hash tag's `}` (resource-keys.ts), so one MATCH
 * pattern finds each resource once.
 */
export class RedisListing implements LockListing, LockRevoking {
  constructor(private readonly options: RedisListingOptions) {}

  async keys(query: LockListingQuery): Promise<LockListingPage> {
    const { client, keyPrefix } = this.options;
    const nodes = isCluster(client) ? client.nodes('master') : [client];
    const head = `${keyPrefix}{`;
    const match = `${globEscape(head + escapeKey(query.prefix ?? ''))}*}`;
    const count = Math.max(MIN_SCAN_COUNT, query.limit);
    let [node, cursor] = parseCursor(query.cursor);
    const keys = new Set<string>();
    try {
      for (let scans = 0; scans < MAX_SCANS_PER_PAGE && node < nodes.length && keys.size < query.limit; scans++) {
        const [next, names] = await nodes[node].scan(cursor, 'MATCH', match, 'COUNT', count);
        for (const name of names) keys.add(unescapeKey(name.slice(head.length, -1)));
        if (next === '0') [node, cursor] = [node + 1, '0'];
        else cursor = next;
      }
    } catch (error) {
      throw redisStoreError('list', undefined, error);
    }
    return node < nodes.length ? { keys: [...keys], cursor: `${node}:${cursor}` } : { keys: [...keys] };
  }

  async waiters(key: string): Promise<number> {
    try {
      return await this.options.client.llen(resourceKeys(this.options.keyPrefix, key).line);
    } catch (error) {
      throw redisStoreError('list', key, error);
    }
  }

  async revoke(key: string): Promise<LockRevocation> {
    const keys = resourceKeys(this.options.keyPrefix, key);
    const permits = permitKeys(this.options.keyPrefix, key);
    try {
      const reply = await runScript(
        this.options.client,
        REVOKE,
        [keys.lock, keys.fence, permits.permits, permits.info, keys.revoked],
        [keys.channel, this.options.publish, REVOKED_KEPT_FOR],
      );
      const [ended, fence] = reply as [number, number];
      return { ended, fence };
    } catch (error) {
      throw redisStoreError('revoke', key, error);
    }
  }

  async wasRevoked(key: string, token: string): Promise<boolean> {
    try {
      return (await this.options.client.hexists(resourceKeys(this.options.keyPrefix, key).revoked, token)) === 1;
    } catch (error) {
      throw redisStoreError('inspect', key, error);
    }
  }
}

/** A page's cursor read back: the master's index and its SCAN cursor. */
function parseCursor(cursor: string | undefined): [number, string] {
  const match = /^(\d+):(\d+)$/.exec(cursor ?? '');
  return match ? [Number(match[1]), match[2]] : [0, '0'];
}

/** `text` matched literally by a Redis glob pattern. */
function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, (char) => `\\${char}`);
}
