import { Redis } from 'ioredis';
import { performance } from 'node:perf_hooks';
import { LockLostError } from '../lib/errors/lock-lost.error.js';
import { LockStoreError } from '../lib/errors/lock-store.error.js';
import { LockManager } from '../lib/core/lock-manager.js';
import { RedisLockStore } from '../lib/stores/redis/redis.store.js';
import { testRedisUrl, uniquePrefix } from './support/stores.js';
import { channelListeners } from './support/channel-listeners.js';

/** A manager on its own Redis store and client (which it closes), and a view of the keys under its prefix. */
function managerWith(drainTimeout: number): {
  manager: LockManager;
  prefix: string;
  keysLeft: () => Promise<string[]>;
} {
  const keyPrefix = uniquePrefix();
  const store = new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix, ownsClient: true });
  return {
    manager: new LockManager({ store, drainTimeout }),
    prefix: keyPrefix,
    async keysLeft() {
      const admin = new Redis(testRedisUrl());
      try {
        return await admin.keys(`${keyPrefix}*`);
      } finally {
        await admin.quit();
      }
    },
  };
}

/** Resolves once some client subscribes to `channel`. */
async function subscribed(channel: string): Promise<void> {
  const admin = new Redis(testRedisUrl());
  try {
    for (;;) {
      const count = await channelListeners(admin, channel);
      if (Number(count) > 0) return;
    }
  } finally {
    await admin.quit();
  }
}

describe('LockManager.close() drains', () => {
  it('hands nothing over to a local waiter: the waiter is refused and no key is left once close() resolves', async () => {
    const { manager, keysLeft, prefix } = managerWith(0);
    const holder = await manager.acquire('k', { ttl: '30s' });
    const waiter = manager.acquire('k', { wait: '10s', ttl: '30s' });
    // the waiter stands by for a hand-over once it listens for the key's release notices
    await subscribed(`${prefix}{k}:released`);

    await manager.close();

    await expect(waiter).rejects.toBeInstanceOf(LockStoreError);
    await expect(waiter).rejects.toThrow('the lock service is shutting down');
    expect(holder.signal.reason).toBeInstanceOf(LockLostError);
    expect(await keysLeft()).toEqual([]);
  });

  it('lets a holder that releases within the drain finish with its lease, and refuses new acquisitions meanwhile', async () => {
    const { manager, keysLeft } = managerWith(5000);
    const holder = await manager.acquire('k', { ttl: '30s' });

    const closing = manager.close();
    await expect(manager.acquire('other')).rejects.toThrow('the lock service is shutting down');
    expect(holder.isHeld).toBe(true);
    await holder.release();
    await closing;

    expect(holder.signal.aborted).toBe(false);
    expect(await keysLeft()).toEqual([]);
  });

  it('ends a lease at the end of the drain when its holder is not done by then', async () => {
    const { manager, keysLeft } = managerWith(300);
    const holder = await manager.acquire('k', { ttl: '30s' });
    const started = performance.now();

    await manager.close();

    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(holder.signal.reason).toMatchObject({ code: 'LOCK_LOST', reason: 'shutdown' });
    expect(await keysLeft()).toEqual([]);
  });
});
