import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LockManager } from '../../../lib/core/lock-manager.js';
import { LockNotAcquiredError } from '../../../lib/errors/lock-not-acquired.error.js';
import type { AcquireRequest } from '../../../lib/interfaces/lease.interface.js';
import { RedisLockStore } from '../../../lib/stores/redis/redis.store.js';
import { resourceKeys } from '../../../lib/stores/redis/resource-keys.js';
import { testRedisUrl, uniquePrefix } from '../../support/stores.js';

/**
 * An ask that goes unanswered until after its acquisition's wait is left behind: a grant it brings is released by
 * its token. No later ask of the acquisition may use that token, or the release would end the lease that ask
 * was granted while its caller holds it.
 */
describe('an ask answered after the wait', () => {
  let admin: Redis;
  const managers: LockManager[] = [];

  beforeEach(() => {
    admin = new Redis(testRedisUrl());
  });

  afterEach(async () => {
    await Promise.all(managers.splice(0).map((manager) => manager.close()));
    await admin.quit();
  });

  // the release watch opens slowly (a subscription on a busy server): after the holder's lease ends, while the
  // ask sent then is unanswered (1.5 s), or after the wait (3 s)
  it.each([1500, 3000])(
    'ends the wait with a refusal, asks nothing more, and gives the late grant back (watch after %i ms)',
    async (watchDelay) => {
      const keyPrefix = uniquePrefix();
      const store = (): RedisLockStore =>
        new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix, ownsClient: true });
      const inner = store();
      const asks: string[] = [];
      const waiter = new LockManager({
        store: Object.assign(Object.create(inner) as RedisLockStore, {
          watch: async (...args: Parameters<RedisLockStore['watch']>) => {
            await sleep(watchDelay);
            return inner.watch(...args);
          },
          // the ask sent at the holder's lease end is applied at once; its answer comes 3.5 s later
          acquire: async (request: AcquireRequest) => {
            if (request.key === 'stock:42') asks.push(request.token);
            const answer = await inner.acquire(request);
            if (request.key === 'stock:42' && asks.length === 2) await sleep(3500);
            return answer;
          },
        }),
      });
      managers.push(waiter);
      // the store's check and scripts done before the holder's lease starts to run
      await (await waiter.acquire('warm-up', { ttl: 1000, autoRenew: false })).release();
      const holder = new LockManager({ store: store() });
      managers.push(holder);
      // a holder whose lease ends by itself 1 s from now
      await holder.acquire('stock:42', { ttl: 1000, autoRenew: false });

      const started = performance.now();
      const outcome: unknown = await waiter
        .acquire('stock:42', { ttl: 10_000, wait: 1800, autoRenew: false })
        .catch((error: unknown) => error);
      // refused once the unanswered ask was given up (1 s after it was sent), not granted once the watch opened
      expect(outcome).toBeInstanceOf(LockNotAcquiredError);
      expect(performance.now() - started).toBeLessThan(2900);
      await sleep(3500);
      // the late grant was released by its token, and no ask used that token after the wait
      expect(asks).toHaveLength(2);
      expect(await admin.pttl(resourceKeys(keyPrefix, 'stock:42').lock)).toBe(-2);
    },
  );

  it("asks once at the end of its wait when the holder's end was unknown and the watch never opened", async () => {
    const keyPrefix = uniquePrefix();
    const store = (): RedisLockStore =>
      new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix, ownsClient: true });
    const inner = store();
    const waiter = new LockManager({
      store: Object.assign(Object.create(inner) as RedisLockStore, {
        watch: async (...args: Parameters<RedisLockStore['watch']>) => {
          await sleep(3000);
          return inner.watch(...args);
        },
        // refusals that do not say how long the holder keeps the key (as PostgreSQL's and etcd's can)
        acquire: async (request: AcquireRequest) => {
          const answer = await inner.acquire(request);
          return answer.acquired ? answer : { acquired: false };
        },
      }),
    });
    managers.push(waiter);
    await (await waiter.acquire('warm-up', { ttl: 1000, autoRenew: false })).release();
    const holder = new LockManager({ store: store() });
    managers.push(holder);
    await holder.acquire('stock:43', { ttl: 500, autoRenew: false });
    // the holder's lease ends after 500 ms; the waiter, deaf to it, asks again at the end of its wait
    const lock = await waiter.acquire('stock:43', { ttl: 5000, wait: 1200, autoRenew: false });
    expect(lock.isHeld).toBe(true);
    await lock.release();
  });
});
