import { performance } from 'node:perf_hooks';
import type { INestApplication } from '@nestjs/common';
import { LockService } from '../../../../lib/index.js';
import { resourceKeys } from '../../../../lib/stores/redis/resource-keys.js';
import { channelListeners } from '../../../support/channel-listeners.js';
import { iovalkeyCluster } from '../../../support/client-stores.js';
import { useClusterRoom } from '../../../support/cluster-room.js';
import { bootLockApp } from '../../../support/lock-app.js';
import { clusterKind } from '../../../support/stores.js';

/** A waiter's backoff: a wake-up sooner than this came from the release notice. */
const BACKOFF = 5000;

describe('an iovalkey Cluster given to the module (no shardedSubscribers)', () => {
  const room = useClusterRoom();
  const { cleanups } = room;

  const boot = async (client: unknown): Promise<INestApplication> => {
    const app = await bootLockApp({ redis: client as never, keyPrefix: room.keyPrefix });
    cleanups.push(() => app.close());
    return app;
  };
  /** One key whose slot each master serves, so a notice must come from every master. */
  const keyPerMaster = async (): Promise<Array<{ key: string; master: number }>> => {
    const cluster = await clusterKind.cluster();
    const found = new Map<number, string>();
    for (let index = 0; found.size < 3; index++) {
      const key = `order-${index}`;
      const master = await cluster.masterForKey(resourceKeys(room.keyPrefix, key).lock);
      if (!found.has(master)) found.set(master, key);
    }
    return [...found].map(([master, key]) => ({ key, master }));
  };

  /** Holds one key per master on `holder`, waits for each on `waiter`, and measures each wake-up after release. */
  const wakeUps = async (holder: INestApplication, waiter: INestApplication): Promise<number[]> => {
    const keys = await keyPerMaster();
    const held = await Promise.all(keys.map(({ key }) => holder.get(LockService).acquire(key, { ttl: 30_000 })));
    const waiting = keys.map(({ key }) =>
      waiter.get(LockService).acquire(key, { wait: 20_000, retry: { minDelay: BACKOFF, maxDelay: BACKOFF } }),
    );
    for (const { key, master } of keys) {
      const owner = room.direct(master);
      // bounded: a waiter that never listens is measured (and fails) below rather than hanging here
      const until = performance.now() + BACKOFF;
      while ((await channelListeners(owner, resourceKeys(room.keyPrefix, key).channel, true)) === 0) {
        if (performance.now() > until) break;
      }
    }
    const waits: number[] = [];
    for (const [index, lease] of held.entries()) {
      const released = performance.now();
      await lease.release();
      const next = await waiting[index];
      waits.push(performance.now() - released);
      await next.release();
    }
    return waits;
  };

  it('wakes a waiter by the notice of every master, long before its backoff, and leaves the cluster open', async () => {
    const holderCluster = await iovalkeyCluster();
    cleanups.push(() => holderCluster.quit());
    const waiterCluster = await iovalkeyCluster();
    cleanups.push(() => waiterCluster.quit());
    const apps = [await boot(holderCluster), await boot(waiterCluster)];
    for (const wait of await wakeUps(apps[0], apps[1])) expect(wait).toBeLessThan(BACKOFF / 5);
    await Promise.all(apps.map((app) => app.close()));
    expect(await waiterCluster.ping()).toBe('PONG');
  });

  it('wakes waiters across an ioredis Cluster process and an iovalkey Cluster process, both ways', async () => {
    const valkey = await iovalkeyCluster();
    cleanups.push(() => valkey.quit());
    const ioredis = await clusterKind.client();
    cleanups.push(() => ioredis.quit());
    const [ioredisApp, valkeyApp] = [await boot(ioredis), await boot(valkey)];
    for (const wait of await wakeUps(ioredisApp, valkeyApp)) expect(wait).toBeLessThan(BACKOFF / 5);
    for (const wait of await wakeUps(valkeyApp, ioredisApp)) expect(wait).toBeLessThan(BACKOFF / 5);
  });
});
