import { Cluster, Redis } from 'ioredis';
import pg from 'pg';
import type { LockStore } from '../../lib/interfaces/lock-store.interface.js';
import type { PermitStore } from '../../lib/interfaces/permit-store.interface.js';
import { MemoryLockStore } from '../../lib/stores/memory/memory.store.js';
import { MemoryPermitStore } from '../../lib/stores/memory/memory-permit-store.js';
import { RedisPermitStore } from '../../lib/stores/redis/permits/redis-permit-store.js';
import { RedisLockStore, type RedisLockStoreOptions } from '../../lib/stores/redis/redis.store.js';
import { resourceKeys } from '../../lib/stores/redis/resource-keys.js';
import { PostgresLockStore } from '../../lib/stores/postgres/postgres-lock-store.js';
import { postgresTables } from '../../lib/stores/postgres/postgres-tables.js';
import { clusterKind, postgresKind, testRedisUrl, uniquePrefix } from './stores.js';
import { adminPool } from './postgres-server.js';

/** Where a child process finds the lock space of a pair: a Redis URL or a Cluster's nodes, and the prefix. */
export interface PermitSpace {
  readonly REDIS_URL?: string;
  /** JSON of `{ host, port }[]`. */
  readonly CLUSTER_NODES?: string;
  readonly KEY_PREFIX: string;
}

/** Two views of one permit space, as two processes would have them, and what a test needs beside them. */
export interface PermitStorePair {
  /** The store under test. */
  readonly store: PermitStore;
  /** A second store on the same space through its own connection (another "process"; memory: the same). */
  readonly other: PermitStore;
  /** A mutex store on the same keys (same fence counters, same leases). */
  readonly mutex: LockStore;
  /** Sets the fence counter of a resource on the server, as a failover or a faster server's clock would. */
  setFence(key: string, value: number): Promise<void>;
  /** Counts in a place every process of the test sees (Redis: INCRBY on a key of the space). */
  count(name: string, by: number): Promise<number>;
  /** For a space other processes can reach: how a child finds it. */
  readonly space?: PermitSpace;
  close(): Promise<void>;
}

/** How to build a pair. */
export interface PermitPairOptions {
  /** The stores' hand-off window, in ms. @default the store's */
  readonly handoffWindow?: number;
}

/** A factory of fresh permit store pairs for one kind of store. */
export interface PermitStoreKind {
  readonly name: string;
  create(options?: PermitPairOptions): Promise<PermitStorePair>;
}

export const memoryPermitKind: PermitStoreKind = {
  name: 'MemoryPermitStore',
  async create(options = {}) {
    const mutex = new MemoryLockStore();
    // the store's own permits; another hand-off window needs a permit store of its own on the same leases
    const inside = mutex as unknown as {
      fences: Map<string, number>;
      watches: { wake(key: string): void };
      remainingOf(key: string): number | undefined;
    };
    const fences = inside.fences;
    const store =
      options.handoffWindow === undefined
        ? mutex.capabilities.permits
        : new MemoryPermitStore({
            mutex: { remainingOf: (key) => inside.remainingOf(key) },
            fences,
            onMutexTurn: (key) => inside.watches.wake(key),
            ...options,
          });
    const counters = new Map<string, number>();
    return {
      store,
      other: store,
      mutex,
      async setFence(key, value) {
        fences.set(key, value);
      },
      async count(name, by) {
        const value = (counters.get(name) ?? 0) + by;
        counters.set(name, value);
        return value;
      },
      async close() {
        await Promise.all([store.close(), mutex.close()]);
      },
    };
  },
};

/** A client a Redis store takes (ioredis, iovalkey, node-redis). */
type RedisClientOf = RedisLockStoreOptions['client'];

/** Two permit stores and a mutex store on one prefix, each owning one of `clients`; `admin` counts. */
export function redisPermitPair(
  keyPrefix: string,
  clients: [RedisClientOf, RedisClientOf, RedisClientOf, Redis | Cluster],
  space: PermitSpace,
  options: PermitPairOptions,
): PermitStorePair {
  const [storeClient, otherClient, mutexClient, admin] = clients;
  const store = new RedisPermitStore({ client: storeClient, keyPrefix, ownsClient: true, ...options });
  const other = new RedisPermitStore({ client: otherClient, keyPrefix, ownsClient: true, ...options });
  const mutex = new RedisLockStore({ client: mutexClient, keyPrefix, ownsClient: true });
  return {
    store,
    other,
    mutex,
    space,
    async setFence(key, value) {
      await admin.set(resourceKeys(keyPrefix, key).fence, value);
    },
    count: (name, by) => admin.incrby(`${keyPrefix}count:${name}`, by),
    async close() {
      await Promise.all([store.close(), other.close(), mutex.close(), admin.quit()]);
    },
  };
}

export const redisPermitKind: PermitStoreKind = {
  name: 'RedisPermitStore',
  async create(options = {}) {
    const keyPrefix = uniquePrefix();
    const url = testRedisUrl();
    const clientOptions = { maxRetriesPerRequest: 1, commandTimeout: 2000 };
    const clients = [0, 1, 2].map(() => new Redis(url, clientOptions));
    return redisPermitPair(
      keyPrefix,
      [clients[0], clients[1], clients[2], new Redis(url)],
      { REDIS_URL: url, KEY_PREFIX: keyPrefix },
      options,
    );
  },
};

/** Permit stores on the Redis Cluster of {@link clusterKind}: start it in `beforeAll`, stop it in `afterAll`. */
export const clusterPermitKind: PermitStoreKind = {
  name: 'RedisPermitStore on a Redis Cluster',
  async create(options = {}) {
    const keyPrefix = uniquePrefix();
    const nodes = (await clusterKind.cluster()).startupNodes;
    const clients = await Promise.all([0, 1, 2, 3].map(() => clusterKind.client()));
    return redisPermitPair(
      keyPrefix,
      [clients[0], clients[1], clients[2], clients[3]],
      { CLUSTER_NODES: JSON.stringify(nodes), KEY_PREFIX: keyPrefix },
      options,
    );
  },
};

/** A client on a space a pair told a child of, for the child's own store and counter. */
export function clientOfSpace(space: PermitSpace): Redis | Cluster {
  if (space.CLUSTER_NODES) {
    const cluster = new Cluster(JSON.parse(space.CLUSTER_NODES) as Array<{ host: string; port: number }>, {
      redisOptions: { maxRetriesPerRequest: 1, commandTimeout: 2000 },
    });
    cluster.on('error', () => undefined);
    return cluster;
  }
  return new Redis(space.REDIS_URL as string, { maxRetriesPerRequest: 1, commandTimeout: 2000 });
}

/**
 * Permits of PostgresLockStores on the server of {@link postgresKind}: start it in `beforeAll`, stop it in
 * `afterAll`. Two lock stores' permits and a third lock store for the mutex, as three processes would have them.
 */
export const postgresPermitKind: PermitStoreKind = {
  name: 'PostgresLockStore permits',
  async create(options = {}) {
    const keyPrefix = uniquePrefix();
    const { url } = await postgresKind.server();
    const [first, second, mutex] = [0, 1, 2].map(
      () => new PostgresLockStore({ connectionString: url, keyPrefix, ...options }),
    );
    // counts of concurrent sections go out at once, as ioredis pipelines them on its one connection
    const admin = adminPool(pg, url, 10);
    await first.verify();
    await admin.query('CREATE TABLE IF NOT EXISTS test_counters (name text PRIMARY KEY, value bigint NOT NULL)');
    const leases = postgresTables('public', 'nestjs_lock').leases;
    return {
      store: first.capabilities.permits!,
      other: second.capabilities.permits!,
      mutex,
      async setFence(key, value) {
        await admin.query(
          `INSERT INTO ${leases} (key, fence) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET fence = excluded.fence`,
          [keyPrefix + key, value],
        );
      },
      async count(name, by) {
        const { rows } = await admin.query(
          `INSERT INTO test_counters AS c VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = c.value + $2
           RETURNING value`,
          [keyPrefix + name, by],
        );
        return Number((rows[0] as { value: string }).value);
      },
      async close() {
        await Promise.all([first.close(), second.close(), mutex.close(), admin.end()]);
      },
    };
  },
};
