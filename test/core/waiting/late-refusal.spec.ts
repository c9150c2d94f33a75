import { Redis } from 'ioredis';
import { LockNotAcquiredError } from '../../../lib/errors/lock-not-acquired.error.js';
import { LockManager } from '../../../lib/core/lock-manager.js';
import { RedisLockStore } from '../../../lib/stores/redis/redis.store.js';
import { startFaultProxy, type FaultProxy } from '../../support/fault-proxy.js';
import { testRedisUrl, uniquePrefix } from '../../support/stores.js';

describe('a refusal whose reply comes after the wait has ended', () => {
  let proxy: FaultProxy;
  const managers: LockManager[] = [];
  const manager = (url: string, keyPrefix: string): LockManager => {
    const store = new RedisLockStore({ client: new Redis(url), keyPrefix, ownsClient: true });
    const created = new LockManager({ store });
    managers.push(created);
    return created;
  };

  beforeEach(async () => {
    proxy = await startFaultProxy(testRedisUrl());
  });

  afterEach(async () => {
    await Promise.all(managers.splice(0).map((m) => m.close()));
    await proxy.close();
  });

  it("still names the holder's remaining lease, as the store told it, in LockNotAcquiredError", async () => {
    const keyPrefix = uniquePrefix();
    const holder = manager(testRedisUrl(), keyPrefix);
    const waiter = manager(proxy.url, keyPrefix);
    // connected, its scripts loaded, before the proxy slows down: only the acquire's round trips outlast the wait
    await (await waiter.acquire('warm')).release();
    const granted = performance.now();
    const lock = await holder.acquire('held', { ttl: 10_000 });
    proxy.latency(150);
    const error = await waiter.acquire('held', { wait: 100 }).catch((e: unknown) => e);
    const refused = performance.now();
    proxy.heal();
    await lock.release();
    expect(error).toBeInstanceOf(LockNotAcquiredError);
    // what the store said at the refusal: the lease less the time since its grant, not 0 nor a guess after the wait
    const remaining = (error as LockNotAcquiredError).remainingTime!;
    expect(remaining).toBeGreaterThanOrEqual(10_000 - (refused - granted) - 50);
    expect(remaining).toBeLessThanOrEqual(10_000);
  });
});
