import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LockService, LockStoreError } from '../../../../lib/index.js';
import { resourceKeys } from '../../../../lib/stores/redis/resource-keys.js';
import { channelListeners } from '../../../support/channel-listeners.js';
import { nodeRedisCluster, type NodeRedisClient } from '../../../support/client-stores.js';
import { startFaultProxy, type FaultProxy } from '../../../support/fault-proxy.js';
import { bootLockApp } from '../../../support/lock-app.js';
import { startRedisCluster, type RedisClusterHandle } from '../../../support/redis-cluster.js';
import { uniquePrefix } from '../../../support/stores.js';

// node-redis 5 re-subscribes a gone master's channels without a promise to follow: its waiters ask at their
// backoff until their keys go idle (docs/stores.md)
describe('a node-redis 6 createCluster() given to the module, through a failover', () => {
  let cluster: RedisClusterHandle;
  const cleanups: Array<() => unknown> = [];

  beforeAll(async () => {
    cluster = await startRedisCluster({ masters: 3, replicasPerMaster: 1 });
  }, 60_000);
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  afterAll(() => cluster?.stop());

  const direct = (port: number): Redis => {
    const client = new Redis(port, '127.0.0.1', { maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => undefined);
    cleanups.push(() => client.disconnect());
    return client;
  };
  const closing = (client: NodeRedisClient): NodeRedisClient => {
    cleanups.push(() => (client.isOpen ? client.close() : undefined));
    return client;
  };

  it("wakes a waiter soon when its channel's master fails over while the release would tell it", async () => {
    const keyPrefix = uniquePrefix();
    const { lock, channel } = resourceKeys(keyPrefix, 'order');
    const oldMaster = await cluster.masterForKey(lock);
    const [newMaster] = await cluster.replicasOf(oldMaster);
    // the waiter reaches every node through a proxy of its own, which keeps it from the new master for a while
    const proxies = new Map<number, FaultProxy>();
    for (const { port } of cluster.nodes) {
      const proxy = await startFaultProxy({ port });
      cleanups.push(() => proxy.close());
      proxies.set(port, proxy);
    }
    const nodeAddressMap = Object.fromEntries(
      [...proxies].map(([port, proxy]) => [`127.0.0.1:${port}`, { host: proxy.host, port: proxy.port }]),
    );
    const holderCluster = closing(nodeRedisCluster(6, cluster.startupNodes));
    const [holder, waiter] = [
      await bootLockApp({ redis: holderCluster as never, keyPrefix }),
      await bootLockApp({
        redis: closing(nodeRedisCluster(6, cluster.startupNodes, nodeAddressMap)) as never,
        keyPrefix,
      }),
    ];
    cleanups.push(() => Promise.all([holder.close(), waiter.close()]));

    const held = await holder.get(LockService).acquire('order', { ttl: 60_000 });
    // on its own it would sleep 30 to 60 s after its second ask (in 0.2 s), so 20 s or more after the release
    // below (6 to 10 s in): anything sooner is the re-subscription's doing
    const waiting = waiter
      .get(LockService)
      .acquire('order', { wait: 90_000, retry: { minDelay: 60_000, maxDelay: 60_000 } });
    while ((await channelListeners(direct(oldMaster), channel, true)) === 0) await sleep(5);
    // its ask answered (it sleeps), the lease and its place in the line on the replica too
    await sleep(200);
    expect(Number(await direct(oldMaster).call('WAIT', 1, 2000))).toBe(1);

    await proxies.get(newMaster)!.refuse(true);
    await cluster.killNode(oldMaster);
    expect(await cluster.waitForFailover(oldMaster)).toBe(newMaster);
    // the holder's cluster learns the new master at its next command on that slot
    const send = holderCluster.sendCommand as unknown as (...args: unknown[]) => Promise<unknown>;
    for (;;) {
      const exists = await send.call(holderCluster, lock, false, ['EXISTS', lock]).catch(() => undefined);
      if (exists === 1) break;
      await sleep(100);
    }
    // released while the waiter's cluster cannot reach the new master: the notice is lost
    const released = performance.now();
    await held.release();
    await sleep(300);
    await proxies.get(newMaster)!.refuse(false);
    // the woken ask may meet node-redis' own rediscovery of the slots, which destroys the connection it went out
    // on ("Disconnects client"): sleeping 60 s otherwise, it was asked only because the waiter woke; ask again
    const next = await waiting.catch((error: unknown) => {
      const cause = error instanceof LockStoreError ? (error.cause as Error | undefined) : undefined;
      if (!/Disconnects client/.test(cause?.message ?? '')) throw error;
      return waiter.get(LockService).acquire('order', { wait: 5000 });
    });
    expect(performance.now() - released).toBeLessThan(6000);
    await next.release();
  }, 120_000);
});
