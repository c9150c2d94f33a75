import { Cluster, Redis } from 'ioredis';
import pg from 'pg';
import type { LockStore } from '../../lib/interfaces/lock-store.interface.js';
import { MemoryLockStore } from '../../lib/stores/memory/memory.store.js';
import { RedisLockStore } from '../../lib/stores/redis/redis.store.js';
import type { RedisLockStoreOptions } from '../../lib/stores/redis/redis-store-options.js';
import { RedlockStore } from '../../lib/stores/redlock/redlock.store.js';
import { EtcdLockStore } from '../../lib/stores/etcd/etcd-lock-store.js';
import { etcdResourceKeys } from '../../lib/stores/etcd/etcd-keys.js';
import { resourceKeys } from '../../lib/stores/redis/resource-keys.js';
import { PostgresLockStore } from '../../lib/stores/postgres/postgres-lock-store.js';
import { postgresTables } from '../../lib/stores/postgres/postgres-tables.js';
import { startRedisServer, type RedisServerHandle } from './redis-server.js';
import { startRedisCluster, type RedisClusterHandle } from './redis-cluster.js';
import { startEtcdCluster, type EtcdClusterHandle } from './etcd-cluster.js';
import { adminPool, startPostgresServer, type PostgresServerHandle } from './postgres-server.js';

/** Two views of one lock space, as two processes would have them, and how to dispose of them. */
export interface StorePair {
  /** The store under test. */
  readonly store: LockStore;
  /** A second store on the same lock space through its own connection (another "process"). */
  readonly other: LockStore;
  /** Deletes a lock key behind the holder's back, as an operator or an expiry would. */
  deleteLease(key: string): Promise<void>;
  /**
   * Sets the fence counter of a resource back to `value` on every server, as a failover to a replica that
   * missed the last grants would (or a restore from an old snapshot). Absent for a store whose fences come
   * from consensus (etcd's revisions), which has no counter that a failover could leave behind.
   */
  rewindFence?(key: string, value: number): Promise<void>;
  close(): Promise<void>;
}

/** A factory of fresh store pairs for one kind of store. */
export interface StoreKind {
  readonly name: string;
  create(): Promise<StorePair>;
  /** The least ttl in ms the store grants (etcd: whole seconds, so 1000); the suite raises shorter ones to it. */
  readonly minTtl?: number;
  /**
   * The longest, in ms, a lease of `ttl` ms can take to be gone from the store after its last write (etcd: whole
   * seconds, at least its least lease, then an expiry sweep); without it, `ttl`.
   */
  freedAfter?(ttl: number): number;
  /**
   * Where fences come from: a counter floored by the server clock in microseconds (Redis, memory), or a
   * revision ordered by consensus (etcd). @default 'clock'
   */
  readonly fences?: 'clock' | 'revision';
  /**
   * The clock, in microseconds, a store's clock fences are floored by: the memory store reads the wall clock
   * through the monotonic one (a step of the machine's clock does not move it). @default the wall clock
   */
  fenceClock?(): number;
  /**
   * The lease of the suite's mass-renewal test, in ms: a store whose every renewal is a consensus write of
   * several servers (etcd) can miss renewals for over 2 s on a machine with both cores busy, and a client
   * whose commands the module bounds (node-redis, 2 s) needs a lease that leaves a retry after a timed-out
   * renewal. @default 3000
   */
  readonly renewalTtl?: number;
}

/**
 * The URL of this Jest worker's own test redis-server, started by the global setup (REDIS_TEST_URL_<worker>):
 * the files of one worker run one after another, so nothing else loads it meanwhile.
 */
export function testRedisUrl(): string {
  const worker = process.env.JEST_WORKER_ID ?? '1';
  const url = process.env[`REDIS_TEST_URL_${worker}`];
  if (!url)
    throw new Error(
      `REDIS_TEST_URL_${worker} is not set: run the tests through jest (npm test), whose global setup starts ` +
        'a redis-server per worker.',
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
  fenceClock: () => (performance.timeOrigin + performance.now()) * 1000,
  async create() {
    const store = new MemoryLockStore();
    const memory = store as unknown as {
      leases: Map<string, { timer: NodeJS.Timeout }>;
      fences: Map<string, number>;
    };
    return {
      store,
      other: store,
      async deleteLease(key) {
        clearTimeout(memory.leases.get(key)?.timer);
        memory.leases.delete(key);
      },
      async rewindFence(key, value) {
        memory.fences.set(key, value);
      },
      close: () => store.close(),
    };
  },
};

/** Two RedisLockStores on the same keys, each owning one of `clients`, and `admin` to delete leases behind them. */
export function redisStorePair(
  keyPrefix: string,
  [storeClient, otherClient]: [RedisLockStoreOptions['client'], RedisLockStoreOptions['client']],
  admin: Redis | Cluster,
): StorePair {
  const store = new RedisLockStore({ client: storeClient, keyPrefix, ownsClient: true });
  const other = new RedisLockStore({ client: otherClient, keyPrefix, ownsClient: true });
  return {
    store,
    other,
    async deleteLease(key) {
      await admin.del(resourceKeys(keyPrefix, key).lock);
    },
    async rewindFence(key, value) {
      await admin.set(resourceKeys(keyPrefix, key).fence, value);
    },
    async close() {
      await Promise.all([store.close(), other.close(), admin.quit()]);
    },
  };
}

export const redisKind: StoreKind = {
  name: 'RedisLockStore',
  async create() {
    const keyPrefix = uniquePrefix();
    const url = testRedisUrl();
    const options = { maxRetriesPerRequest: 1, commandTimeout: 2000 };
    return redisStorePair(keyPrefix, [new Redis(url, options), new Redis(url, options)], new Redis(url));
  },
};

/**
 * redis-server processes started on first use and shared by the tests of one file: call `stop()` in
 * `afterAll` (and `servers(n)` in `beforeAll`, so the start-up is not charged to the first test).
 */
export class RedisServerPool {
  private readonly started: Array<Promise<RedisServerHandle>> = [];

  /** The first `count` servers of the pool, starting the ones not yet running. */
  async servers(count: number): Promise<RedisServerHandle[]> {
    while (this.started.length < count) this.started.push(startRedisServer());
    return Promise.all(this.started.slice(0, count));
  }

  /** Stops every server the pool started. */
  async stop(): Promise<void> {
    const started = this.started.splice(0);
    await Promise.all(
      started.map((server) =>
        server.then(
          (handle) => handle.stop(),
          () => undefined,
        ),
      ),
    );
  }
}

/** The servers the Redlock store kinds run on, started lazily; the test file stops them in `afterAll`. */
export const redlockServers = new RedisServerPool();

/** Redlock over `nodes` independent servers, two stores (two "processes") with connections of their own. */
export function redlockKind(nodes: number, pool: RedisServerPool = redlockServers): StoreKind {
  return {
    name: `RedlockStore over ${nodes} nodes`,
    async create() {
      const keyPrefix = uniquePrefix();
      const urls = (await pool.servers(nodes)).map((server) => server.url);
      // the contract is about behaviour, not latency: a generous per-node timeout keeps a loaded machine
      // (or --detectOpenHandles) from turning a burst of 200 acquires into an outage
      const store = new RedlockStore({ nodes: urls, keyPrefix, timeout: 1000 });
      const other = new RedlockStore({ nodes: urls, keyPrefix, timeout: 1000 });
      // connected, scripts loaded, before the first test's clock starts: a fresh client's first round also
      // waits for its connections, which a loaded machine made take over the second a round has
      await Promise.all([store.verify(), other.verify()]);
      const admins = urls.map((url) => new Redis(url));
      return {
        store,
        other,
        async deleteLease(key) {
          await Promise.all(admins.map((admin) => admin.del(resourceKeys(keyPrefix, key).lock)));
        },
        async rewindFence(key, value) {
          await Promise.all(admins.map((admin) => admin.set(resourceKeys(keyPrefix, key).fence, value)));
        },
        async close() {
          await Promise.all([store.close(), other.close(), ...admins.map((admin) => admin.quit())]);
        },
      };
    },
  };
}

export const redlock3Kind = redlockKind(3);
export const redlock5Kind = redlockKind(5);
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
    // no failover tests here: a node starved for a second on a busy machine must not be failed over mid-test
    sharedCluster ??= startRedisCluster({ nodeTimeout: 5000 });
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
    return redisStorePair(keyPrefix, [await this.client(), await this.client()], await this.client());
  },
  async stop() {
    const started = sharedCluster;
    sharedCluster = undefined;
    await (await started?.catch(() => undefined))?.stop();
  },
};

/** A store kind backed by one 3-member etcd cluster per test file, started on first use; stop it in `afterAll`. */
export interface EtcdStoreKind extends StoreKind {
  /** The file's cluster, started on the first call. */
  cluster(): Promise<EtcdClusterHandle>;
  stop(): Promise<void>;
}

let sharedEtcd: Promise<EtcdClusterHandle> | undefined;

/**
 * etcd's least lease on the test cluster (1.5 election timeouts of 1.2 s, rounded up) and the most its expiry
 * sweep (every 500 ms, then a commit) may take on a loaded machine.
 */
const ETCD_LEAST_LEASE = 2000;
export const ETCD_EXPIRY_LAG = 1000;

export const etcdKind: EtcdStoreKind = {
  name: 'EtcdLockStore on a 3-member etcd cluster',
  minTtl: 1000,
  fences: 'revision',
  renewalTtl: 6000,
  freedAfter: (ttl) => Math.max(Math.ceil(ttl / 1000) * 1000, ETCD_LEAST_LEASE) + ETCD_EXPIRY_LAG,
  cluster() {
    sharedEtcd ??= startEtcdCluster(3);
    return sharedEtcd;
  },
  async create() {
    const keyPrefix = uniquePrefix();
    const cluster = await this.cluster();
    const store = new EtcdLockStore({ hosts: cluster.hosts, keyPrefix });
    const other = new EtcdLockStore({ hosts: cluster.hosts, keyPrefix });
    return {
      store,
      other,
      async deleteLease(key) {
        await cluster.deleteKey(etcdResourceKeys(keyPrefix, key).lock);
      },
      async close() {
        await Promise.all([store.close(), other.close()]);
      },
    };
  },
  async stop() {
    const started = sharedEtcd;
    sharedEtcd = undefined;
    await (await started?.catch(() => undefined))?.stop();
  },
};

/** A store kind backed by one PostgreSQL server per test file, started on first use; stop it in `afterAll`. */
export interface PostgresStoreKind extends StoreKind {
  /** The file's server, started on the first call. */
  server(): Promise<PostgresServerHandle>;
  stop(): Promise<void>;
}

let sharedPostgres: Promise<PostgresServerHandle> | undefined;

export const postgresKind: PostgresStoreKind = {
  name: 'PostgresLockStore',
  server() {
    sharedPostgres ??= startPostgresServer();
    return sharedPostgres;
  },
  async create() {
    const keyPrefix = uniquePrefix();
    const { url } = await this.server();
    const store = new PostgresLockStore({ connectionString: url, keyPrefix });
    const other = new PostgresLockStore({ connectionString: url, keyPrefix });
    const admin = adminPool(pg, url, 1);
    const leases = postgresTables('public', 'nestjs_lock').leases;
    // the tables exist before the first test's clock starts
    await store.verify();
    return {
      store,
      other,
      async deleteLease(key) {
        await admin.query(`UPDATE ${leases} SET token = NULL, expires_at = NULL, holder = NULL WHERE key = $1`, [
          keyPrefix + key,
        ]);
      },
      async rewindFence(key, value) {
        await admin.query(`UPDATE ${leases} SET fence = $2 WHERE key = $1`, [keyPrefix + key, value]);
      },
      async close() {
        await Promise.all([store.close(), other.close(), admin.end()]);
      },
    };
  },
  async stop() {
    const started = sharedPostgres;
    sharedPostgres = undefined;
    await (await started?.catch(() => undefined))?.destroy();
  },
};
