import { GlideClient, GlideClusterClient, ProtocolVersion } from '@valkey/valkey-glide';
import { Redis } from 'ioredis';
import { Cluster as ValkeyCluster, Redis as Valkey } from 'iovalkey';
import { createClient as createClient6, createCluster as createCluster6 } from 'redis';
import { createClient as createClient5, createCluster as createCluster5 } from 'redis5';
import { redisPermitPair, type PermitStoreKind } from './permit-stores.js';
import { RedlockStore } from '../../lib/stores/redlock/redlock.store.js';
import { resourceKeys } from '../../lib/stores/redis/resource-keys.js';
import { clusterKind, redisStorePair, redlockServers, testRedisUrl, uniquePrefix, type StoreKind } from './stores.js';

/** A node-redis client of either major version, as the tests use it. */
export interface NodeRedisClient {
  readonly isOpen: boolean;
  connect(): Promise<unknown>;
  close(): Promise<void>;
  sendCommand(args: string[]): Promise<unknown>;
  on(event: string, listener: (...args: unknown[]) => void): unknown;
  duplicate(): NodeRedisClient;
}

/** The node-redis majors under test: 6 (RESP3 by default) and 5 (RESP2 by default). */
export type NodeRedisMajor = 5 | 6;

/**
 * A node-redis client of `major` on `url`, not connected: the store connects it at its first command. `name`
 * names its connections (CLIENT SETNAME), its duplicates' too.
 */
export function nodeRedisClient(
  major: NodeRedisMajor,
  url: string,
  resp?: 2 | 3,
  name?: string,
  socket?: { reconnectStrategy?: false },
): NodeRedisClient {
  const options = {
    url,
    ...(resp === undefined ? {} : { RESP: resp }),
    ...(name === undefined ? {} : { name }),
    ...(socket === undefined ? {} : { socket }),
  };
  const client = (major === 6 ? createClient6(options) : createClient5(options)) as unknown as NodeRedisClient;
  // failures reach the tests through commands; an unhandled 'error' event would end the test process
  client.on('error', () => undefined);
  return client;
}

/** Closes the node-redis clients the tests made (the store never closes a client it did not make). */
async function closeClients(clients: readonly NodeRedisClient[]): Promise<void> {
  await Promise.all(clients.map((client) => (client.isOpen ? client.close() : undefined)));
}

/**
 * Two RedisLockStores on node-redis clients of `major`: the store's given unconnected (it connects it),
 * the other's connected; an ioredis client deletes leases behind them, so replies cross client libraries.
 */
export function nodeRedisKind(major: NodeRedisMajor, resp?: 2 | 3): StoreKind {
  return {
    name: `RedisLockStore on node-redis ${major}${resp === undefined ? '' : ` (RESP${resp})`}`,
    async create() {
      const keyPrefix = uniquePrefix();
      const url = testRedisUrl();
      const clients = [nodeRedisClient(major, url, resp), nodeRedisClient(major, url, resp)];
      await clients[1].connect();
      const pair = redisStorePair(keyPrefix, [clients[0], clients[1]], new Redis(url));
      return {
        ...pair,
        async close() {
          await pair.close();
          await closeClients(clients);
        },
      };
    },
  };
}

/**
 * Permit stores and their mutex store on node-redis clients of `major`; the contract's child processes run
 * on ioredis, so every crossing of processes is also one of client libraries.
 */
export function nodeRedisPermitKind(major: NodeRedisMajor): PermitStoreKind {
  return {
    name: `RedisPermitStore on node-redis ${major}`,
    async create(options = {}) {
      const keyPrefix = uniquePrefix();
      const url = testRedisUrl();
      const clients = [0, 1, 2].map(() => nodeRedisClient(major, url));
      const pair = redisPermitPair(
        keyPrefix,
        [clients[0], clients[1], clients[2], new Redis(url)],
        { REDIS_URL: url, KEY_PREFIX: keyPrefix },
        options,
      );
      return {
        ...pair,
        async close() {
          await pair.close();
          await closeClients(clients);
        },
      };
    },
  };
}

/** Two RedisLockStores on iovalkey clients (the Valkey fork of ioredis, a port as it is), an ioredis admin. */
export const iovalkeyKind: StoreKind = {
  name: 'RedisLockStore on iovalkey',
  async create() {
    const keyPrefix = uniquePrefix();
    const url = testRedisUrl();
    const options = { maxRetriesPerRequest: 1, commandTimeout: 2000 };
    return redisStorePair(
      keyPrefix,
      [new Valkey(url, options) as never, new Valkey(url, options) as never],
      new Redis(url),
    );
  },
};

/**
 * Redlock over the first `nodes` servers of {@link redlockServers} (stop them in `afterAll`), each store on
 * iovalkey clients of its own; ioredis clients delete leases behind them.
 */
export function iovalkeyRedlockKind(nodes: number): StoreKind {
  return {
    name: `RedlockStore over ${nodes} iovalkey nodes`,
    async create() {
      const keyPrefix = uniquePrefix();
      const urls = (await redlockServers.servers(nodes)).map((server) => server.url);
      const valkeyNodes = () => urls.map((url) => new Valkey(url, { maxRetriesPerRequest: 1 }));
      const storeNodes = valkeyNodes();
      const otherNodes = valkeyNodes();
      // a generous per-node timeout, as for the ioredis Redlock kind: the contract is about behaviour, not latency
      const store = new RedlockStore({ nodes: storeNodes as never[], keyPrefix, timeout: 1000 });
      const other = new RedlockStore({ nodes: otherNodes as never[], keyPrefix, timeout: 1000 });
      // connected, scripts loaded, before the first test's clock starts (as redlockKind)
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
          await Promise.all([store.close(), other.close()]);
          // the store never closes a client it did not make
          await Promise.all([...storeNodes, ...otherNodes, ...admins].map((client) => client.quit()));
        },
      };
    },
  };
}

/** A GLIDE client as the tests use it: its own connection, closed by the test once the store is done. */
export type GlideTestClient = GlideClient | GlideClusterClient;

/**
 * How long the tests' GLIDE clients may take to connect (GLIDE's default: 2 s). A Cluster client connects to
 * every node; with both cores busy, a Node 22 CI rerun saw one fail with "Connection error: Timeout".
 */
const GLIDE_CONNECTION_TIMEOUT = 10_000;

/**
 * A connected GLIDE `GlideClient` on the server of `url`, on RESP3 (GLIDE's default) unless `resp` says 2;
 * `name` is its CLIENT SETNAME, which the store's subscriber (made from its settings) shares.
 */
export function glideClient(url: string, name?: string, resp?: 2 | 3): Promise<GlideClient> {
  const { hostname, port } = new URL(url);
  return GlideClient.createClient({
    addresses: [{ host: hostname, port: Number(port) }],
    requestTimeout: 2000,
    advancedConfiguration: { connectionTimeout: GLIDE_CONNECTION_TIMEOUT },
    ...(name === undefined ? {} : { clientName: name }),
    ...(resp === 2 ? { protocol: ProtocolVersion.RESP2 } : {}),
  });
}

/** A connected `GlideClusterClient` on a cluster whose nodes include `seeds` (`host:port`). */
export function glideClusterClient(seeds: ReadonlyArray<{ host: string; port: number }>): Promise<GlideClusterClient> {
  return GlideClusterClient.createClient({
    addresses: [...seeds],
    requestTimeout: 2000,
    advancedConfiguration: { connectionTimeout: GLIDE_CONNECTION_TIMEOUT },
  });
}

/** Closes GLIDE clients the tests made (the store never closes a client it did not make). */
export function closeGlideClients(clients: readonly GlideTestClient[]): void {
  for (const client of clients) client.close();
}

/**
 * Two RedisLockStores on GLIDE clients of their own, on RESP3 or `resp`; an ioredis client deletes leases
 * behind them, so replies cross client libraries.
 */
export function glideKind(resp?: 2 | 3): StoreKind {
  return {
    name: `RedisLockStore on Valkey GLIDE${resp === undefined ? '' : ` (RESP${resp})`}`,
    async create() {
      const keyPrefix = uniquePrefix();
      const url = testRedisUrl();
      const clients = await Promise.all([glideClient(url, undefined, resp), glideClient(url, undefined, resp)]);
      const pair = redisStorePair(keyPrefix, [clients[0], clients[1]], new Redis(url));
      return {
        ...pair,
        async close() {
          await pair.close();
          closeGlideClients(clients);
        },
      };
    },
  };
}

/**
 * Permit stores and their mutex store on GLIDE clients; the contract's child processes run on ioredis, so
 * every crossing of processes is also one of client libraries.
 */
export const glidePermitKind: PermitStoreKind = {
  name: 'RedisPermitStore on Valkey GLIDE',
  async create(options = {}) {
    const keyPrefix = uniquePrefix();
    const url = testRedisUrl();
    const clients = await Promise.all([0, 1, 2].map(() => glideClient(url)));
    const pair = redisPermitPair(
      keyPrefix,
      [clients[0], clients[1], clients[2], new Redis(url)],
      { REDIS_URL: url, KEY_PREFIX: keyPrefix },
      options,
    );
    return {
      ...pair,
      async close() {
        await pair.close();
        closeGlideClients(clients);
      },
    };
  },
};

/**
 * A node-redis cluster of `major` (`createCluster()`) on the nodes given, not connected: the store connects it
 * at its first command. `nodeAddressMap` sends the connections to a node (`host:port`) elsewhere (a proxy).
 */
export function nodeRedisCluster(
  major: NodeRedisMajor,
  startupNodes: ReadonlyArray<{ host: string; port: number }>,
  nodeAddressMap?: Record<string, { host: string; port: number }>,
): NodeRedisClient {
  const rootNodes = startupNodes.map(({ host, port }) => ({ url: `redis://${host}:${port}` }));
  const options = { rootNodes, ...(nodeAddressMap && { nodeAddressMap }) };
  const cluster = (major === 6 ? createCluster6(options) : createCluster5(options)) as unknown as NodeRedisClient;
  cluster.on('error', () => undefined);
  return cluster;
}

/**
 * Two RedisLockStores on node-redis clusters of `major` over the file's Redis Cluster (clusterKind's, stopped
 * by `clusterKind.stop()`), the store's given unconnected, the other's connected; an ioredis Cluster deletes
 * leases behind them.
 */
export function nodeRedisClusterKind(major: NodeRedisMajor): StoreKind {
  return {
    name: `RedisLockStore on a node-redis ${major} cluster`,
    // the module bounds every node-redis command at 2 s (NODE_REDIS_COMMAND_TIMEOUT): a renewal sent a third into
    // a 3 s lease that times out leaves no time to ask again, which a CI machine with both cores busy showed
    // twice on node-redis 6 (all 200 leases lost in one batch); 6 s leave one retry after a timed-out renewal
    renewalTtl: 6000,
    async create() {
      const keyPrefix = uniquePrefix();
      const { startupNodes } = await clusterKind.cluster();
      const clusters = [nodeRedisCluster(major, startupNodes), nodeRedisCluster(major, startupNodes)];
      // ready before the first lease: a lease's validity runs from its request, connecting included
      await clusters[1].connect();
      const pair = redisStorePair(keyPrefix, [clusters[0], clusters[1]], await clusterKind.client());
      return {
        ...pair,
        async close() {
          await pair.close();
          await closeClients(clusters);
        },
      };
    },
  };
}

/** How the tests make and close the Cluster clients of one client library. */
interface ClusterClientLibrary<Client> {
  /** The library, as the kinds' names say it. */
  readonly name: string;
  /** A connected client on the Cluster whose nodes include `seeds`. */
  connect(seeds: ReadonlyArray<{ host: string; port: number }>): Promise<Client>;
  /** Closes a client the test made (the store never closes a client it did not make). */
  close(client: Client): unknown;
}

/**
 * The store kind and the permit kind on the Cluster clients of one library, over the Cluster of
 * {@link clusterKind}: ioredis `Cluster`s delete leases behind the stores and run the permit contract's
 * children, so replies and notices cross client libraries.
 */
function clusterClientKinds<Client>(library: ClusterClientLibrary<Client>): {
  readonly store: StoreKind;
  readonly permits: PermitStoreKind;
} {
  const connect = async (count: number) => {
    const seeds = (await clusterKind.cluster()).startupNodes;
    const clients = await Promise.all(Array.from({ length: count }, () => library.connect(seeds)));
    const disconnect = () => Promise.all(clients.map((client) => library.close(client)));
    // the store takes any client of a known shape; the port, not the type, tells them apart
    return { seeds, clients: clients as never[], disconnect };
  };
  return {
    store: {
      name: `RedisLockStore on a Redis Cluster through ${library.name}`,
      async create() {
        const keyPrefix = uniquePrefix();
        const { clients, disconnect } = await connect(2);
        const pair = redisStorePair(keyPrefix, [clients[0], clients[1]], await clusterKind.client());
        return {
          ...pair,
          async close() {
            await pair.close();
            await disconnect();
          },
        };
      },
    },
    permits: {
      name: `RedisPermitStore on a Redis Cluster through ${library.name}`,
      async create(options = {}) {
        const keyPrefix = uniquePrefix();
        const { seeds, clients, disconnect } = await connect(3);
        const pair = redisPermitPair(
          keyPrefix,
          [clients[0], clients[1], clients[2], await clusterKind.client()],
          { CLUSTER_NODES: JSON.stringify(seeds), KEY_PREFIX: keyPrefix },
          options,
        );
        return {
          ...pair,
          async close() {
            await pair.close();
            await disconnect();
          },
        };
      },
    },
  };
}

/** Valkey GLIDE's `GlideClusterClient`s. */
const glideClusterClients = clusterClientKinds<GlideClusterClient>({
  name: 'Valkey GLIDE',
  connect: glideClusterClient,
  close: (client) => client.close(),
});

/**
 * Two RedisLockStores on `GlideClusterClient`s of the Cluster of {@link clusterKind} (start it in `beforeAll`,
 * stop it in `afterAll`); an ioredis `Cluster` deletes leases behind them.
 */
export const glideClusterKind: StoreKind = glideClusterClients.store;

/**
 * Permit stores and their mutex store on `GlideClusterClient`s of the Cluster of {@link clusterKind} (start it
 * in `beforeAll`, stop it in `afterAll`); the children run on ioredis `Cluster`s.
 */
export const glideClusterPermitKind: PermitStoreKind = glideClusterClients.permits;

/**
 * A connected iovalkey `Cluster` on the Cluster of {@link clusterKind}: iovalkey has no `shardedSubscribers`,
 * so the store's notices go through its slot-routed subscriber.
 */
export async function iovalkeyCluster(): Promise<ValkeyCluster> {
  const cluster = new ValkeyCluster((await clusterKind.cluster()).startupNodes, {
    redisOptions: { maxRetriesPerRequest: 1, commandTimeout: 2000 },
  });
  cluster.on('error', () => undefined);
  // ready before the first lease: a lease's validity runs from its request, connecting included
  await cluster.ping();
  return cluster;
}

/** iovalkey's `Cluster`s. */
const iovalkeyClusters = clusterClientKinds<ValkeyCluster>({
  name: 'iovalkey',
  connect: () => iovalkeyCluster(),
  close: (cluster) => cluster.quit(),
});

/**
 * Two RedisLockStores on iovalkey `Cluster`s of the Cluster of {@link clusterKind} (start it in `beforeAll`,
 * stop it in `afterAll`); an ioredis `Cluster` deletes leases behind them.
 */
export const iovalkeyClusterKind: StoreKind = iovalkeyClusters.store;

/**
 * Permit stores and their mutex store on iovalkey `Cluster`s of the Cluster of {@link clusterKind} (start it in
 * `beforeAll`, stop it in `afterAll`); the children run on ioredis `Cluster`s, so their notices cross clients.
 */
export const iovalkeyClusterPermitKind: PermitStoreKind = iovalkeyClusters.permits;
