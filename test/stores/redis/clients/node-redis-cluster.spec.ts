import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockConfigurationError } from '../../../../lib/errors/lock-configuration.error.js';
import { LockService } from '../../../../lib/index.js';
import { RedisLockStore } from '../../../../lib/stores/redis/redis.store.js';
import { resourceKeys } from '../../../../lib/stores/redis/resource-keys.js';
import { ALL_SCRIPTS } from '../../../../lib/stores/redis/scripts/index.js';
import { channelListeners } from '../../../support/channel-listeners.js';
import { subscriberIds } from '../../../support/connection-ids.js';
import { nodeRedisCluster, type NodeRedisClient } from '../../../support/client-stores.js';
import { useClusterRoom } from '../../../support/cluster-room.js';
import { startFaultProxy, type FaultProxy } from '../../../support/fault-proxy.js';
import { bootLockApp } from '../../../support/lock-app.js';
import { clusterKind } from '../../../support/stores.js';

describe.each([6, 5] as const)('a node-redis %i createCluster() given to the module', (major) => {
  const room = useClusterRoom();
  const { cleanups } = room;

  const cluster = async (): Promise<NodeRedisClient> => {
    const created = nodeRedisCluster(major, (await clusterKind.cluster()).startupNodes);
    cleanups.push(() => (created.isOpen ? created.close() : undefined));
    return created;
  };
  /** A Nest application whose LockModule runs on `client`. */
  const boot = (client: NodeRedisClient) => bootLockApp({ redis: client as never, keyPrefix: room.keyPrefix });
  const masters = async (): Promise<number[]> =>
    (await clusterKind.cluster()).nodes.filter((node) => node.role === 'master').map((node) => node.port);

  it('verify() loads every script on every master through the cluster', async () => {
    for (const port of await masters()) await room.direct(port).script('FLUSH');
    const store = new RedisLockStore({ client: (await cluster()) as never, keyPrefix: room.keyPrefix });
    cleanups.push(() => store.close());
    await store.verify();
    for (const port of await masters()) {
      expect(await room.direct(port).script('EXISTS', ...ALL_SCRIPTS.map((script) => script.sha))).toEqual(
        ALL_SCRIPTS.map(() => 1),
      );
    }
  });

  it('verify() names the one master that may evict leases', async () => {
    const evicting = (await masters())[2];
    const admin = room.direct(evicting);
    await admin.config('SET', 'maxmemory', String(512 * 1024 * 1024));
    await admin.config('SET', 'maxmemory-policy', 'allkeys-lru');
    cleanups.push(() => admin.config('SET', 'maxmemory', '0'));
    const store = new RedisLockStore({ client: (await cluster()) as never, keyPrefix: room.keyPrefix });
    cleanups.push(() => store.close());
    const error = await store.verify().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(LockConfigurationError);
    expect((error as Error).message).toContain(`allkeys-lru on master 127.0.0.1:${evicting}`);
  });

  it('wakes a waiter on another cluster by a sharded notice, and leaves the cluster open after app.close()', async () => {
    const holderCluster = await cluster();
    const [holder, waiter] = [await boot(holderCluster), await boot(await cluster())];
    try {
      const held = await holder.get(LockService).acquire('order', { ttl: 30_000 });
      const waiting = waiter
        .get(LockService)
        .acquire('order', { wait: 10_000, retry: { minDelay: 5000, maxDelay: 5000 } });
      const { lock, channel } = resourceKeys(room.keyPrefix, 'order');
      const owner = room.direct(await (await clusterKind.cluster()).masterForKey(lock));
      while ((await channelListeners(owner, channel, true)) === 0);
      const released = performance.now();
      await held.release();
      const next = await waiting;
      expect(performance.now() - released).toBeLessThan(1000);
      await next.release();
    } finally {
      await Promise.all([holder.close(), waiter.close()]);
    }
    expect(holderCluster.isOpen).toBe(true);
    // a cluster's sendCommand takes the key it routes by and a read-only flag first
    const send = holderCluster.sendCommand as unknown as (...args: unknown[]) => Promise<unknown>;
    expect(await send.call(holderCluster, undefined, false, ['PING'])).toBe('PONG');
  });

  it('wakes a waiter soon when its shard pub/sub connection drops while the release would tell it', async () => {
    const { nodes, startupNodes, masterForKey } = await clusterKind.cluster();
    // the waiter reaches every node through a proxy of its own, which keeps it from reconnecting for a while
    const proxies = new Map<number, FaultProxy>();
    for (const { port } of nodes) {
      const proxy = await startFaultProxy({ port });
      cleanups.push(() => proxy.close());
      proxies.set(port, proxy);
    }
    const nodeAddressMap = Object.fromEntries(
      [...proxies].map(([port, proxy]) => [`127.0.0.1:${port}`, { host: proxy.host, port: proxy.port }]),
    );
    const waiterCluster = nodeRedisCluster(major, startupNodes, nodeAddressMap);
    cleanups.push(() => (waiterCluster.isOpen ? waiterCluster.close() : undefined));
    const [holder, waiter] = [await boot(await cluster()), await boot(waiterCluster)];
    try {
      const held = await holder.get(LockService).acquire('order', { ttl: 30_000 });
      // it would sleep 5 to 10 s on its own: anything sooner is the reconnected subscriber's doing
      const waiting = waiter
        .get(LockService)
        .acquire('order', { wait: 20_000, retry: { minDelay: 10_000, maxDelay: 10_000 } });
      const { lock, channel } = resourceKeys(room.keyPrefix, 'order');
      const owner = room.direct(await masterForKey(lock));
      while ((await channelListeners(owner, channel, true)) === 0) await sleep(5);
      // (its second ask, beside its place in the line, answered: it sleeps)
      await sleep(200);
      const proxy = proxies.get(await masterForKey(lock))!;
      await proxy.refuse(true);
      const subscribers = await subscriberIds(owner, { sharded: true });
      expect(subscribers).toHaveLength(1);
      await owner.client('KILL', 'ID', subscribers[0]);
      // released while the waiter's shard connection is down: the notice is lost
      const released = performance.now();
      await held.release();
      await sleep(300);
      await proxy.refuse(false);
      const next = await waiting;
      expect(performance.now() - released).toBeLessThan(3500);
      await next.release();
    } finally {
      await Promise.all([holder.close(), waiter.close()]);
    }
  });

  it("keeps the cover of other masters' channels when node-redis closes a shard connection left without channels", async () => {
    const { masterForKey } = await clusterKind.cluster();
    const store = new RedisLockStore({ client: (await cluster()) as never, keyPrefix: room.keyPrefix });
    cleanups.push(() => store.close());
    const masterOf = async (key: string) => masterForKey(resourceKeys(room.keyPrefix, key).lock);
    const kept = 'kept';
    let left = 'left:0';
    for (let i = 1; (await masterOf(left)) === (await masterOf(kept)); i++) left = `left:${i}`;
    const [keptWatch, leftWatch] = [
      await store.watch(kept, performance.now()),
      await store.watch(left, performance.now()),
    ];
    expect(keptWatch.listeningSince).toEqual(expect.any(Number));
    const leftMaster = room.direct(await masterOf(left));
    expect(await subscriberIds(leftMaster, { sharded: true })).toHaveLength(1);
    // the last watch of its key gone, the channel is unsubscribed after its linger, and node-redis closes the
    // connection that has no channel left
    leftWatch.close();
    const deadline = performance.now() + 10_000;
    while ((await subscriberIds(leftMaster, { sharded: true })).length > 0 && performance.now() < deadline)
      await sleep(50);
    expect(await subscriberIds(leftMaster, { sharded: true })).toEqual([]);
    await sleep(100);
    expect(keptWatch.listeningSince).toEqual(expect.any(Number));
    keptWatch.close();
  });

  it('keeps the cover of channels subscribed at once on every master', async () => {
    const { masterForKey } = await clusterKind.cluster();
    const store = new RedisLockStore({ client: (await cluster()) as never, keyPrefix: room.keyPrefix });
    cleanups.push(() => store.close());
    const keys = new Map<number, string>();
    for (let i = 0; keys.size < 3; i++) {
      const master = await masterForKey(resourceKeys(room.keyPrefix, `k:${i}`).lock);
      if (!keys.has(master)) keys.set(master, `k:${i}`);
    }
    // each master's connection opens for its first channel: one that says 'ready' while another's answer is
    // handled was connecting, not reconnecting, and must not cost the channels answered before it their cover
    const watches = await Promise.all([...keys.values()].map((key) => store.watch(key, performance.now())));
    await sleep(100);
    expect(watches.map((watch) => watch.listeningSince)).toEqual(watches.map(() => expect.any(Number)));
    for (const watch of watches) watch.close();
  });
});
