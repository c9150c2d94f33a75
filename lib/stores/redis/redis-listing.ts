import type {
  LockListing,
  LockListingPage,
  LockListingQuery,
  LockRevocation,
  LockRevoking,
} from '../../interfaces/lock-listing.interface.js';
import { isCluster } from './client/port-settings.js';
import type { RedisClientPort } from './client/redis-client-port.js';
import { resourceKeys } from './resource-keys.js';
import { scanLockKeys, scanPage } from './lock-key-scan.js';
import { permitKeys } from './permits/permit-keys.js';
import { permitWrongTypeError } from './permits/permit-wrong-type.js';
import { runScript } from './script-runner.js';
import { REVOKE } from './scripts/revoke.script.js';
import { isWrongType, redisStoreError } from './store-error.js';
import { unreachableServer } from './connection-failure.js';
import { LockConfigurationError } from '../../errors/lock-configuration.error.js';
import type { LockStoreError } from '../../errors/lock-store.error.js';

/** How long after the longest ended lease a revoked token is remembered for its holder's renewal, in ms. */
export const REVOKED_KEPT_FOR = 60_000;

/** What the listing needs of its `RedisLockStore`. */
export interface RedisListingOptions {
  readonly client: RedisClientPort;
  readonly keyPrefix: string;
  /** 'PUBLISH', 'SPUBLISH' or '' (release notices off). */
  readonly publish: string;
}

/**
 * The operator's view of a Redis store: its lock keys found by SCAN (with a cursor, on every master of a
 * Cluster in turn, lock-key-scan.ts), and forced releases by one script on the resource's slot
 * (scripts/revoke.script.ts).
 */
export class RedisListing implements LockListing, LockRevoking {
  constructor(private readonly options: RedisListingOptions) {}

  async keys(query: LockListingQuery): Promise<LockListingPage> {
    const { client, keyPrefix } = this.options;
    const nodes = isCluster(client) ? client.nodes('master') : [client];
    try {
      return await scanPage(nodes.length, query, (node, cursor, count) =>
        scanLockKeys(nodes[node], keyPrefix, query.prefix ?? '', cursor, count),
      );
    } catch (error) {
      if (error instanceof LockConfigurationError) throw error;
      throw this.failure('list', undefined, error);
    }
  }

  async waiters(key: string): Promise<number> {
    try {
      return await this.options.client.llen(resourceKeys(this.options.keyPrefix, key).line);
    } catch (error) {
      throw this.failure('list', key, error);
    }
  }

  async revoke(key: string): Promise<LockRevocation> {
    const keys = resourceKeys(this.options.keyPrefix, key);
    const permits = permitKeys(this.options.keyPrefix, key);
    try {
      const reply = await runScript(
        this.options.client,
        REVOKE,
        [keys.lock, keys.fence, permits.state, keys.revoked],
        [keys.channel, this.options.publish, REVOKED_KEPT_FOR],
      );
      const [ended, fence] = reply as [number, number];
      return { ended, fence };
    } catch (error) {
      // the likeliest WRONGTYPE here: a resource whose permits are still in an earlier version's layout
      if (isWrongType(error)) throw await permitWrongTypeError(this.options.client, 'revoke', key, permits, error);
      throw this.failure('revoke', key, error);
    }
  }

  async wasRevoked(key: string, token: string): Promise<boolean> {
    try {
      return (await this.options.client.hexists(resourceKeys(this.options.keyPrefix, key).revoked, token)) === 1;
    } catch (error) {
      throw this.failure('inspect', key, error);
    }
  }

  /** The LockStoreError of `operation`: the server and why when it could not be used, as the startup check says. */
  private failure(operation: string, key: string | undefined, error: unknown): LockStoreError {
    const unreachable = unreachableServer(this.options.client, error);
    return redisStoreError(operation, key, unreachable?.cause ?? error, unreachable?.detail);
  }
}
