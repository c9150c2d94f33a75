import { performance } from 'node:perf_hooks';
import { Cluster, Redis } from 'ioredis';
import { Cluster as ValkeyCluster } from 'iovalkey';
import { LockLostError } from '../../../../lib/errors/lock-lost.error.js';
import { LockStoreError } from '../../../../lib/errors/lock-store.error.js';
import { LockManager } from '../../../../lib/core/lock-manager.js';
import { RedisLockStore, type RedisLockStoreOptions } from '../../../../lib/stores/redis/redis.store.js';
import { resourceKeys } from '../../../../lib/stores/redis/resource-keys.js';
import { startRedisCluster, type RedisClusterHandle } from '../../../support/redis-cluster.js';
import { uniquePrefix } from '../../../support/stores.js';
import { storedToken } from '../../../support/stored-token.js';
import { channelListeners } from '../../../support/channel-listeners.js';

const ACK = { replicas: 1, timeout: 500 };

describe('RedisLockStore on a Redis Cluster through a failover', () => {
  let cluster: RedisClusterHandle;
  let keyPrefix: string;
  const cleanups: Array<() => unknown> = [];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => {
    unhandled.push(reason);
  };

  const direct = (port: number): Redis => {
    const client = new Redis(port, '127.0.0.1', {
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
      disconnectTimeout: 100,
    });
    client.on('error', () => undefined);
    cleanups.push(() => (client.status === 'end' ? undefined : client.quit().catch(() => client.disconnect())));
    return client;
  };
  const store = (options: Partial<RedisLockStoreOptions> = {}): RedisLockStore => {
    // no slotsRefreshInterval: ioredis 6 leaves its timer running after disconnect(); and a short
    // disconnectTimeout, as ioredis 6 arms it (2 s) when it disconnects a node whose socket already closed
    const client = new Cluster(cluster.startupNodes, {
      redisOptions: { commandTimeout: 1000, disconnectTimeout: 100 },
    });
    client.on('error', () => undefined);
    const created = new RedisLockStore({ client, keyPrefix, ownsClient: true, ...options });
    cleanups.push(() => created.close());
    return created;
  };
  /** A store on an iovalkey Cluster: no `shardedSubscribers`, so its notices come through one connection per master. */
  const valkeyStore = (): RedisLockStore => {
    const client = new ValkeyCluster(cluster.startupNodes, {
      redisOptions: { commandTimeout: 1000, disconnectTimeout: 100 },
    });
    client.on('error', () => undefined);
    const created = new RedisLockStore({ client: client as never, keyPrefix, ownsClient: true });
    cleanups.push(() => created.close());
    return created;
  };
  const manager = (lockStore = store()): LockManager => {
    const created = new LockManager({ store: lockStore });
    cleanups.push(() => created.close());
    return created;
  };
  const names = (key: string) => resourceKeys(keyPrefix, key);
  /** A key of this test whose lock lives on the master on `port`. */
  const keyOn = async (port: number, stem: string): Promise<string> => {
    for (let i = 0; ; i++) if ((await cluster.masterForKey(names(`${stem}:${i}`).lock)) === port) return `${stem}:${i}`;
  };
  const aMaster = (): number => cluster.nodes.find((node) => node.role === 'master' && node.running)!.port;

  /** Brings every killed node back, and waits until each master's replica acknowledges writes (WAIT) again. */
  const restore = async (): Promise<void> => {
    for (const node of cluster.nodes.filter((candidate) => !candidate.running)) await cluster.restartNode(node.port);
    await cluster.waitForHealthy();
    // a replica that has just synced gets the write stream only after its first ACK (Redis 7): up to 1 s
    for (const node of cluster.nodes.filter((candidate) => candidate.role === 'master')) {
      const master = direct(node.port);
      let probe = 0;
      while ((await cluster.masterForKey(`probe:${probe}`)) !== node.port) probe++;
      for (let i = 0; ; i++) {
        await master.set(`probe:${probe}`, String(i));
        if (Number(await master.call('WAIT', 1, 100)) === 1) break;
        if (i > 100) throw new Error(`the replica of 127.0.0.1:${node.port} acknowledged nothing within 10 s`);
      }
    }
  };

  beforeAll(async () => {
    cluster = await startRedisCluster();
    process.on('unhandledRejection', onUnhandled);
  }, 60_000);

  afterAll(async () => {
    process.off('unhandledRejection', onUnhandled);
    await cluster?.stop();
  });

  beforeEach(() => {
    keyPrefix = uniquePrefix();
    unhandled.length = 0;
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    await restore();
    expect(unhandled).toEqual([]);
  }, 30_000);

  it("grants again after the replica takes over; the old holder's renewal succeeds or signals LockLostError", async () => {
    const master = aMaster();
    const [victim, fresh] = [await keyOn(master, 'victim'), await keyOn(master, 'fresh')];
    const holder = manager();
    const lock = await holder.acquire(victim, { ttl: 2000, autoRenew: true });

    await cluster.killNode(master);
    const successor = await cluster.waitForFailover(master);
    expect(await cluster.masterForKey(names(fresh).lock)).toBe(successor);

    const next = await manager().acquire(fresh, { ttl: 5000 });
    expect(storedToken(await direct(successor).get(names(fresh).lock))).toBe(next.token);
    // past the old holder's TTL: either its renewals reached the new master, or its signal says it lost the lease
    await new Promise((resolve) => setTimeout(resolve, 2500));
    if (lock.signal.aborted) {
      expect(lock.signal.reason).toBeInstanceOf(LockLostError);
      expect(['taken', 'store-unreachable', 'stalled']).toContain((lock.signal.reason as LockLostError).reason);
    } else {
      expect(lock.isHeld).toBe(true);
      expect(storedToken(await direct(successor).get(names(victim).lock))).toBe(lock.token);
    }
    await holder.releaseAll([lock, next]);
  }, 30_000);

  it('with replicaAck keeps the lease through the failover: the new master has the token and the holder releases it', async () => {
    const master = aMaster();
    const [survivor, later] = [await keyOn(master, 'survivor'), await keyOn(master, 'later')];
    const holder = manager(store({ replicaAck: ACK }));
    const lock = await holder.acquire(survivor, { ttl: 30_000 });

    await cluster.killNode(master);
    const successor = await cluster.waitForFailover(master);

    expect(storedToken(await direct(successor).get(names(survivor).lock))).toBe(lock.token);
    expect(lock.signal.aborted).toBe(false);
    // the new master has no replica yet: a grant on its slots cannot be acknowledged, so it is refused
    const refused = await holder.acquire(later).catch((caught: unknown) => caught);
    expect(refused).toBeInstanceOf(LockStoreError);
    expect((refused as Error).message).toMatch(/only 0 of 1 replicas acknowledged the grant within 500 ms/);
    expect(await direct(successor).exists(names(later).lock)).toBe(0);

    expect(await lock.release()).toBe(true);
    expect(await direct(successor).exists(names(survivor).lock)).toBe(0);
  }, 30_000);

  it.each([
    ['an ioredis', () => store()],
    ['an iovalkey', () => valkeyStore()],
  ])(
    'wakes a waiter on %s Cluster that waits across the failover by a release on the new master',
    async (_client, waiterStore) => {
      const master = aMaster();
      const key = await keyOn(master, 'handoff');
      const holder = manager(store({ replicaAck: ACK }));
      const waiter = manager(waiterStore());
      const lock = await holder.acquire(key, { ttl: 30_000 });
      // an attempt that meets the failover fails with LockStoreError (503 over HTTP); this caller waits on
      const waiting = (async () => {
        for (;;) {
          try {
            return await waiter.acquire(key, { wait: 25_000, retry: { minDelay: 8000, maxDelay: 8000 } });
          } catch (error) {
            if (!(error instanceof LockStoreError)) throw error;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        }
      })();
      const owner = direct(master);
      while ((await channelListeners(owner, names(key).channel, true)) === 0);
      // the waiter's place in the key's line must be on the replica before the master dies: a place lost in the
      // failover is one no notice can reach, and its waiter sleeps its backoff by design (replication is
      // asynchronous: under load the kill can come first). A write after it, acknowledged by the replica, says so.
      const placed = performance.now() + 2000;
      while ((await owner.exists(names(key).line)) === 0 && performance.now() < placed) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await owner.set(`${names(key).lock}:replicated`, '1', 'PX', 60_000);
      expect(await owner.call('WAIT', 1, 5000)).toBe(1);

      await cluster.killNode(master);
      const successor = await cluster.waitForFailover(master);
      // the waiter's subscriber follows the slot to the new master by itself
      const heir = direct(successor);
      const deadline = performance.now() + 10_000;
      while ((await channelListeners(heir, names(key).channel, true)) === 0) {
        if (performance.now() > deadline) throw new Error('the waiter never subscribed on the new master');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      const released = performance.now();
      expect(await lock.release()).toBe(true);
      const next = await waiting;
      // woken by the notice, not by its 8 s backoff
      expect(performance.now() - released).toBeLessThan(2000);
      await next.release();
    },
    40_000,
  );
});
