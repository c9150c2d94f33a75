import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LockManager } from '../../lib/core/lock-manager.js';
import { LockLostError } from '../../lib/errors/lock-lost.error.js';
import { LockStoreError } from '../../lib/errors/lock-store.error.js';
import { RedisLockStore } from '../../lib/stores/redis/redis.store.js';
import { resourceKeys } from '../../lib/stores/redis/resource-keys.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';

/**
 * An extension or renewal whose answer is lost (a timeout after the server applied it) or late: the holder's
 * validity must never run past what the store may have set, and a lease reported lost stays lost.
 */
describe('an extension the store may have applied', () => {
  let admin: Redis;
  let manager: LockManager;
  let keyPrefix: string;
  let inner: RedisLockStore;

  beforeEach(() => {
    admin = new Redis(testRedisUrl());
    keyPrefix = uniquePrefix();
    inner = new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix, ownsClient: true });
  });

  afterEach(async () => {
    await manager.close();
    await admin.quit();
  });

  /** `inner` with some of its calls replaced. */
  const storeWith = (calls: Partial<RedisLockStore>): RedisLockStore =>
    Object.assign(Object.create(inner) as RedisLockStore, calls);
  const pttl = (key: string): Promise<number> => admin.pttl(resourceKeys(keyPrefix, key).lock);

  it('holds no longer than a shorter extension that failed after it was applied', async () => {
    manager = new LockManager({
      store: storeWith({
        extend: async (...args: Parameters<RedisLockStore['extend']>) => {
          await inner.extend(...args);
          throw new Error('Command timed out');
        },
      }),
    });
    const lock = await manager.acquire('payout:7', { ttl: 30_000, autoRenew: false });
    let aborted = false;
    lock.signal.addEventListener('abort', () => (aborted = true), { once: true });
    await expect(lock.extend(1000)).rejects.toBeInstanceOf(LockStoreError);
    // the key ends within 1 s; the holder is told no more than that (without: 30 s)
    expect(await pttl('payout:7')).toBeLessThanOrEqual(1000);
    expect(lock.remainingTime).toBeLessThanOrEqual(1000);
    await sleep(1500);
    // and its signal aborts then, without anyone asking
    expect(aborted).toBe(true);
    expect(lock.isHeld).toBe(false);
  });

  it('notices the end of a lease extended to less than it had left', async () => {
    manager = new LockManager({ store: inner });
    const lock = await manager.acquire('payout:6', { ttl: 30_000, autoRenew: false });
    let aborted = false;
    lock.signal.addEventListener('abort', () => (aborted = true), { once: true });
    await lock.extend(500);
    await sleep(1200);
    // the key is gone and the signal says so (without: not until the 30 s lease's end, or a read of the signal)
    expect(await pttl('payout:6')).toBe(-2);
    expect(aborted).toBe(true);
  });

  it('holds no longer than a renewal with the ttl that failed after an extension past it', async () => {
    let failing = false;
    manager = new LockManager({
      store: storeWith({
        extendMany: async (...args: Parameters<RedisLockStore['extendMany']>) => {
          const outcomes = await inner.extendMany(...args);
          return failing ? outcomes.map(() => new Error('Command timed out')) : outcomes;
        },
      }),
    });
    const lock = await manager.acquire('payout:8', { ttl: 900, autoRenew: true });
    await lock.extend(60_000);
    failing = true;
    // the renewal (every ttl/3) sets the key back to 900 ms and is reported failed
    await sleep(700);
    expect(await pttl('payout:8')).toBeLessThanOrEqual(900);
    // without: told 59 s
    expect(lock.remainingTime).toBeLessThanOrEqual(900);
    await lock.release();
  });

  it('rejects an extension answered after the lease was reported lost, and gives the key back', async () => {
    manager = new LockManager({
      store: storeWith({
        extend: async (...args: Parameters<RedisLockStore['extend']>) => {
          const extended = await inner.extend(...args);
          await sleep(600);
          return extended;
        },
      }),
    });
    const lock = await manager.acquire('payout:9', { ttl: 300, autoRenew: false });
    const lost = new Promise((resolve) => lock.signal.addEventListener('abort', resolve, { once: true }));
    const extension = lock.extend(5000);
    await lost;
    // told it lost the lease at its validity's end: the extension's late success does not take that back
    await expect(extension).rejects.toBeInstanceOf(LockLostError);
    expect(lock.isHeld).toBe(false);
    // given back in the background
    for (let tries = 0; tries < 40 && (await pttl('payout:9')) !== -2; tries++) await sleep(50);
    expect(await pttl('payout:9')).toBe(-2);
  });
});
