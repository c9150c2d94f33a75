import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LockManager } from '../../lib/core/lock-manager.js';
import { RedisLockStore } from '../../lib/stores/redis/redis.store.js';
import { resourceKeys } from '../../lib/stores/redis/resource-keys.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';

/**
 * A release that keeps the key a while (`release(keepFor)`, a cron claim's `holdAtLeast`) while a renewal of
 * its lease is on its way: a store that spreads its calls over a pool of connections may apply the renewal
 * after the keep, giving the key a whole ttl again, so that the next runs are refused. The keep is sent once
 * the renewal is answered; so is an extension (`lock.extend(ttl)`), which the old ttl would shorten.
 */
describe('a keep or an extension while a renewal is on its way', () => {
  let admin: Redis;
  let manager: LockManager;

  beforeEach(() => {
    admin = new Redis(testRedisUrl());
  });

  afterEach(async () => {
    await manager.close();
    await admin.quit();
  });

  it('ends the key after the kept time, not a ttl after the renewal', async () => {
    const keyPrefix = uniquePrefix();
    // the renewal waits 300 ms on its way; the keep goes on another connection at once
    const { store, renewing } = delayedRenewals(keyPrefix);
    manager = new LockManager({ store });
    const lock = await manager.acquire('nightly-report', { ttl: 3000, autoRenew: true });
    await renewing;
    await lock.release(500);
    // kept 500 ms from the release call, of which the wait for the renewal took 300 ms
    expect(await admin.pttl(resourceKeys(keyPrefix, 'nightly-report').lock)).toBeLessThan(400);
    await sleep(900);
    // without waiting for the renewal: kept for 500 ms, then given 3 s again by the renewal that landed after
    expect(await admin.pttl(resourceKeys(keyPrefix, 'nightly-report').lock)).toBe(-2);
  });

  it('extends the lease after the renewal, so the old ttl does not land last', async () => {
    const keyPrefix = uniquePrefix();
    const { store, renewing } = delayedRenewals(keyPrefix);
    manager = new LockManager({ store });
    const lock = await manager.acquire('invoice-batch', { ttl: 3000, autoRenew: true });
    await renewing;
    await lock.extend(20_000);
    await sleep(400);
    // without waiting for the renewal: extended to 20 s, then set back to 3 s by the renewal that landed after,
    // while the holder is told it holds for 20 s
    expect(await admin.pttl(resourceKeys(keyPrefix, 'invoice-batch').lock)).toBeGreaterThan(15_000);
    expect(lock.isHeld).toBe(true);
    await lock.release();
  });

  it('sends no extension for a lease released while it waited for the renewal', async () => {
    const keyPrefix = uniquePrefix();
    const { store, renewing } = delayedRenewals(keyPrefix);
    manager = new LockManager({ store });
    const lost: unknown[] = [];
    manager.on('lost', (event) => void lost.push(event));
    const lock = await manager.acquire('invoice-batch', { ttl: 3000, autoRenew: true });
    await renewing;
    const extension = lock.extend(20_000).catch((error: unknown) => error);
    await lock.release();
    // without: the extension went out after the release, found the key gone and reported the lease taken
    expect(await extension).toMatchObject({ reason: 'released' });
    expect(lost).toEqual([]);
    expect(await admin.pttl(resourceKeys(keyPrefix, 'invoice-batch').lock)).toBe(-2);
  });
});

/** A store whose renewals wait 300 ms on their way, as on a busy pooled connection, while other calls go at once. */
function delayedRenewals(keyPrefix: string): { store: RedisLockStore; renewing: Promise<void> } {
  const inner = new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix, ownsClient: true });
  let renewalSent = (): void => undefined;
  const renewing = new Promise<void>((resolve) => (renewalSent = resolve));
  const store = Object.assign(Object.create(inner) as RedisLockStore, {
    extendMany: async (...args: Parameters<RedisLockStore['extendMany']>) => {
      renewalSent();
      await sleep(300);
      return inner.extendMany(...args);
    },
  });
  return { store, renewing };
}
