import { performance } from 'node:perf_hooks';
import { Redis } from 'ioredis';
import { LockManager } from '../../lib/core/lock-manager.js';
import { LockStoreError } from '../../lib/errors/lock-store.error.js';
import { RedisLockStore } from '../../lib/stores/redis/redis.store.js';
import { resourceKeys } from '../../lib/stores/redis/resource-keys.js';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy.js';
import { storedToken } from '../support/stored-token.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';

/**
 * A release that fails because the store cannot be reached right then (a restart, a dropped connection) is
 * tried again until the lease would have ended: the key is free soon after the store is back, not at the
 * end of the ttl.
 */
describe('a release that failed during an outage', () => {
  let proxy: FaultProxy;
  let cut: Redis;
  const managers: LockManager[] = [];

  beforeEach(async () => {
    proxy = await startFaultProxy(testRedisUrl());
    cut = new Redis(proxy.url);
  });

  afterEach(async () => {
    await Promise.all(managers.splice(0).map((manager) => manager.close()));
    cut.disconnect();
    await proxy.close();
  });

  function manager(client: Redis, keyPrefix: string): LockManager {
    const created = new LockManager({ store: new RedisLockStore({ client, keyPrefix, ownsClient: client !== cut }) });
    managers.push(created);
    return created;
  }

  /**
   * A holder behind the proxy takes `key` for `ttl` ms, and its process loses the server as it releases (its
   * commands fail at once meanwhile): the release rejects. `other` is a process that reaches the server.
   */
  async function releasedCutOff(key: string, ttl: number) {
    const keyPrefix = uniquePrefix();
    const holder = manager(cut, keyPrefix);
    const other = manager(new Redis(testRedisUrl()), keyPrefix);
    const lock = await holder.acquire(key, { ttl });
    cut.options.enableOfflineQueue = false;
    await proxy.refuse(true);
    proxy.cutAll();
    await expect(lock.release()).rejects.toBeInstanceOf(LockStoreError);
    return { keyPrefix, other };
  }

  it('is tried again once the store is back, so the key is free long before its ttl', async () => {
    const { other } = await releasedCutOff('stock:1', 30_000);
    expect(await other.tryAcquire('stock:1')).toBeNull();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await proxy.refuse(false);

    // the client reconnects by its own backoff, then the release goes through; left to its ttl: 30 s
    const healed = performance.now();
    const next = await other.acquire('stock:1', { wait: 10_000, retry: { minDelay: 50, maxDelay: 100 } });
    expect(performance.now() - healed).toBeLessThan(10_000);
    await next.release();
  });

  it('never ends the lease of the next holder, when the outage outlasts its own lease', async () => {
    const { keyPrefix, other } = await releasedCutOff('stock:2', 1000);
    // the lease runs out during the outage and another process takes the key
    const next = await other.acquire('stock:2', { ttl: 30_000, wait: 5000, retry: { minDelay: 50, maxDelay: 100 } });
    await proxy.refuse(false);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const admin = new Redis(testRedisUrl());
    try {
      expect(storedToken(await admin.get(resourceKeys(keyPrefix, 'stock:2').lock))).toBe(next.token);
    } finally {
      await admin.quit();
    }
    expect(next.isHeld).toBe(true);
    await next.release();
  });
});
