import type { Redis, RedisOptions } from './ioredis-types.js';
import type { GlideClientLike, NodeRedisClientLike } from './redis-client-like.interface.js';

/**
 * One Redis node of a Redlock quorum: a client you own and close yourself (ioredis, iovalkey, node-redis
 * `createClient()`, connected or not, or a Valkey GLIDE `GlideClient`), or a `redis://` /
 * `rediss://` URL or ioredis options the store connects with, owns and closes.
 */
export type RedlockNode = Redis | NodeRedisClientLike | GlideClientLike | string | RedisOptions;

/** Options of `RedlockStore`. */
export interface RedlockStoreOptions {
  /**
   * The independent Redis nodes (not replicas of each other, not one Cluster): an odd number, at least 3.
   * A lease is granted when a majority of them (N/2+1) grant it. Clients passed in are never closed by
   * the store; URLs and options become connections the store owns and closes.
   */
  readonly nodes: readonly RedlockNode[];
  /**
   * Namespace of every key and channel: non-empty, printable, without `*?[]\\{}` (see docs/options.md,
   * "Bounds, and why").
   * @default 'lock:'
   */
  readonly keyPrefix?: string;
  /**
   * Share of the TTL allowed for the clocks of the nodes running at different rates; a grant is valid for
   * `ttl - elapsed - (ttl * driftFactor + 2 ms)`. Below 1/3: a lease is renewed at a third of its ttl, and
   * must still be valid then. @default 0.01
   */
  readonly driftFactor?: number;
  /**
   * How long to wait for each node, in ms. A node silent past it counts as unavailable for that request,
   * so one dead node never stalls a lock; keep it well under the TTLs you use. The startup check (`verify()`),
   * which opens the connections, waits at least 2 s. @default 200
   */
  readonly timeout?: number;
  /** Wake waiters by pub/sub release notices from every node; off means waiters rely on backoff alone. @default true */
  readonly releaseNotices?: boolean;
  /**
   * After releasing a key that other processes wait for, reserve it against this store for this many ms
   * so a waiter elsewhere takes it next instead of this process re-taking it. `0` turns it off. A manager
   * using the store keeps every ttl at least twice as long.
   * @default 20
   */
  readonly handoffWindow?: number;
  /**
   * Start even when a node may evict keys (`maxmemory` set with a `maxmemory-policy` other than
   * `noeviction`): `verify()` then warns instead of failing.
   * @default false
   */
  readonly acceptEvictionRisk?: boolean;
}
