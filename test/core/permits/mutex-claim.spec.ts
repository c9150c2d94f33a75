import { Redis } from 'ioredis';
import { LockManager } from '../../../lib/core/lock-manager.js';
import { LockNotAcquiredError } from '../../../lib/errors/lock-not-acquired.error.js';
import type { LockStore } from '../../../lib/interfaces/lock-store.interface.js';
import { MemoryLockStore } from '../../../lib/stores/memory/memory.store.js';
import { RedisLockStore } from '../../../lib/stores/redis/redis.store.js';
import { testRedisUrl, uniquePrefix } from '../../support/stores.js';

/**
 * A mutex caller refused by live permits, and waiting, holds new permits back so that permits that keep
 * overlapping cannot starve it. Once it stopped waiting, that claim must go: the live permits may be renewed
 * for hours, and a claim nobody waits for would keep every new permit out all that time.
 */
describe.each([
  ['MemoryLockStore', (): LockStore => new MemoryLockStore()],
  [
    'RedisLockStore',
    (): LockStore =>
      new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix: uniquePrefix(), ownsClient: true }),
  ],
])('a mutex caller that stopped waiting for permits to end (%s)', (_name, makeStore) => {
  let locks: LockManager;

  afterEach(() => locks.close());

  it('no longer holds new permits back', async () => {
    locks = new LockManager({ store: makeStore() });
    const permit = await locks.acquire('shelf', { limit: 3, ttl: 3000, autoRenew: true });
    // the mutex waits 300 ms for the permits to end, then gives up
    await expect(locks.acquire('shelf', { wait: 300 })).rejects.toBeInstanceOf(LockNotAcquiredError);
    // a second permit of three fits beside the first (without: refused until the first one ends, never here)
    const second = await locks.acquire('shelf', { limit: 3, wait: 1000 });
    await locks.releaseAll([permit, second]);
  });

  it('still holds new permits back while it waits', async () => {
    locks = new LockManager({ store: makeStore() });
    const permit = await locks.acquire('crate', { limit: 3, ttl: 3000, autoRenew: true });
    const refused = new Promise((resolve) => locks.on('contended', resolve));
    const mutex = locks.acquire('crate', { wait: 5000 });
    // the mutex's first ask was refused by the live permit (it claimed the key then)
    await refused;
    // the mutex's claim stands: no permit beside the live one
    await expect(locks.acquire('crate', { limit: 3, wait: 300 })).rejects.toBeInstanceOf(LockNotAcquiredError);
    await permit.release();
    await (await mutex).release();
  });
});
