import { Cluster, Redis } from 'ioredis';
import type { LockStore } from '../../lib/interfaces/lock-store.interface.js';
import { MemoryLockStore } from '../../lib/stores/memory.store.js';
import { RedisLockStore } from '../../lib/stores/redis.store.js';
import { resourceKeys } from '../../lib/utils/resource-keys.js';
import { startRedisCluster, type RedisClusterHandle } from './redis-cluster.js';

/** Two views of one lock space, as two processes would have them, and how to dispose of them. */
export interface StorePair {
  /** The store under test. */
  readonly store: LockStore;
  /** A second store on the same lock space through its own connection (another "process"). */
  readonly other: LockStore;
  /** Deletes a lock key behind the holder's back, as an operator or an expiry would. */
  deleteLease(key: string): Promise<void>;
  close(): Promise<void>;
}

/** A factory of fresh store pairs for one kind of store. */
export interface StoreKind {
  readonly name: string;
  create(): Promise<StorePair>;
}

/** The URL of the shared test redis-server started by the global setup. */
export function testRedisUrl(): string {
  const url = process.env.REDIS_TEST_URL;
  if (!url)
    throw new Error(
      'REDIS_TEST_URL is not set: run the tests through jest (npm test), whose global setup starts redis-server.',
    );
  return url;
}

let prefixCounter = 0;

/** A key prefix unique to this test file and call, so tests sharing a server never see each other's keys. */
export function uniquePrefix(): string {
  return `test:${process.pid}:${++prefixCounter}:${Date.now().toString(36)}:`;
}

export const memoryKind: StoreKind = {
  name: 'MemoryLockStore',
  async create() {
    const store = new MemoryLockStore();
    const memory = store as unknown as { leases: Map<string, { timer: NodeJS.Timeout }> };
    return {
      store,
      other: store,
      async deleteLease(key) {
        clearTimeout(memory.leases.get(key)?.timer);
        memory.leases.delete(key);
      },
      close: () => store.close(),
    };
  },
};

export const redisKind: StoreKind = {
  name: 'RedisLockStore',
  async create() {
    const keyPrefix = uniquePrefix();
    const url = testRedisUrl();
    const options = { maxRetriesPerRequest: 1, commandTimeout: 2000 };
    const store = new RedisLockStore({ client: new Redis(url, options), keyPrefix, ownsClient: true });
    const other = new RedisLockStore({ client: new Redis(url, options), keyPrefix, ownsClient: true });
    const admin = new Redis(url);
    return {
      store,
      other,
      async deleteLease(key) {
        await admin.del(resourceKeys(keyPrefix, key).lock);
      },
      async close() {
        await Promise.all([store.close(), other.close(), admin.quit()]);
      },
    };
  },
};

/** A store kind backed by one Redis Cluster per test file, started on first use; stop it in `afterAll`. */
export interface ClusterStoreKind extends StoreKind {
  /** The file's cluster, started on the first call. */
  cluster(): Promise<RedisClusterHandle>;
  /** A Cluster client on it that the caller closes (no `slotsRefreshInterval`: ioredis 6 leaks its timer). */
  client(): Promise<Cluster>;
  stop(): Promise<void>;
}

let sharedCluster: Promise<RedisClusterHandle> | undefined;

export const clusterKind: ClusterStoreKind = {
  name: 'RedisLockStore on a Redis Cluster',
  cluster() {
    sharedCluster ??= startRedisCluster();
    return sharedCluster;
  },
  async client() {
    const client = new Cluster((await this.cluster()).startupNodes, {
      redisOptions: { maxRetriesPerRequest: 1, commandTimeout: 2000 },
    });
    client.on('error', () => undefined);
    // ready before the first lease: a lease's validity runs from its request, connecting included
    await client.ping();
    return client;
  },
  async create() {
    const keyPrefix = uniquePrefix();
    const store = new RedisLockStore({ client: await this.client(), keyPrefix, ownsClient: true });
    const other = new RedisLockStore({ client: await this.client(), keyPrefix, ownsClient: true });
    const admin = await this.client();
    return {
      store,
      other,
      async deleteLease(key) {
        await admin.del(resourceKeys(keyPrefix, key).lock);
      },
      async close() {
        await Promise.all([store.close(), other.close(), admin.quit()]);
      },
    };
  },
  async stop() {
    const started = sharedCluster;
    sharedCluster = undefined;
    await (await started?.catch(() => undefined))?.stop();
  },
};
