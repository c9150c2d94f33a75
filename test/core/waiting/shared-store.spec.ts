import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { LockManager } from '../../../lib/core/lock-manager.js';
import { RedisLockStore } from '../../../lib/stores/redis/redis.store.js';
import { resourceKeys } from '../../../lib/stores/redis/resource-keys.js';
import { startRedisServer, type RedisServerHandle } from '../../support/redis-server.js';
import { uniquePrefix } from '../../support/stores.js';

let server: RedisServerHandle;
beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(() => server.stop());

// Two managers on one store (a LockService and a LockManager of your own on its store, or two managers with
// `closeStore: false`) share the store's place in each key's line and its release notices: each one's head
// leaves requests there, and a release may grant either's.
describe('two LockManagers sharing one RedisLockStore', () => {
  it('never give a lease to both, nor tell a holder it holds a key it lost', async () => {
    const keyPrefix = uniquePrefix();
    const client = new Redis(server.url);
    const probe = new Redis(server.url);
    const store = new RedisLockStore({ client, keyPrefix, ownsClient: true });
    // short backoffs: each head asks again while the other's grant is on its way
    const retry = { minDelay: 1, maxDelay: 4 };
    const managers = [0, 1].map(
      () => new LockManager({ store, closeStore: false, ttl: 5000, wait: 10_000, autoRenew: false, retry }),
    );
    const { lock: lockKey } = resourceKeys(keyPrefix, 'shared');
    let inside = 0;
    let grants = 0;
    const grantsOf = [0, 0];
    const overlaps: string[] = [];
    const notHeld: string[] = [];
    const end = performance.now() + 4000;
    try {
      await Promise.all(
        managers.map(async (manager, index) => {
          while (performance.now() < end) {
            const lock = await manager.acquire('shared');
            grants++;
            grantsOf[index]++;
            if (++inside > 1) overlaps.push(`manager ${index}, grant ${grants}`);
            // the key holds this lease's token (marked by a waiter or not) while the lease says it is held
            const stored = await probe.get(lockKey);
            if (!stored?.replace(/^!/, '').startsWith(lock.token) && !lock.signal.aborted) {
              notHeld.push(`manager ${index}, grant ${grants}`);
            }
            await sleep(Math.random() * 2);
            inside--;
            await lock.release();
          }
        }),
      );
    } finally {
      await Promise.all(managers.map((manager) => manager.close()));
      await store.close();
      probe.disconnect();
    }
    expect({ overlaps, notHeld }).toEqual({ overlaps: [], notHeld: [] });
    // both managers were served, many times over (a count, not a rate: a loaded machine serves fewer in 4 s)
    expect(Math.min(...grantsOf)).toBeGreaterThan(50);
  }, 30_000);
});
