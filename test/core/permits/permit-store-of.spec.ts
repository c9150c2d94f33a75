import { Redis } from 'ioredis';
import { permitStoreOf } from '../../../lib/core/permits/permit-store-of.js';
import { LockConfigurationError } from '../../../lib/errors/lock-configuration.error.js';
import type { LockStore } from '../../../lib/interfaces/lock-store.interface.js';
import { EtcdLockStore } from '../../../lib/stores/etcd/etcd-lock-store.js';
import { MemoryPermitStore } from '../../../lib/stores/memory/memory-permit-store.js';
import { MemoryLockStore } from '../../../lib/stores/memory/memory.store.js';
import { RedisLockStore } from '../../../lib/stores/redis/redis.store.js';
import { RedlockStore } from '../../../lib/stores/redlock/redlock.store.js';
import { freePort } from '../../support/redis-server.js';

describe('stores without permits', () => {
  it('refuses permits on a RedlockStore with a LockConfigurationError that says why', async () => {
    const clients = await Promise.all(
      [0, 1, 2].map(async () => new Redis({ port: await freePort(), lazyConnect: true })),
    );
    const store = new RedlockStore({ nodes: clients });
    try {
      expect(store.capabilities.permits).toBeUndefined();
      const error = (() => {
        try {
          permitStoreOf(store, { limit: 3 }, '@WithLock(Export.run).limit');
        } catch (caught) {
          return caught;
        }
      })();
      expect(error).toBeInstanceOf(LockConfigurationError);
      expect((error as LockConfigurationError).option).toBe('@WithLock(Export.run).limit');
      expect((error as Error).message).toContain('RedlockStore cannot keep N-holder or readers-writer locks');
      expect((error as Error).message).toContain('quorum');
    } finally {
      await store.close();
      clients.forEach((client) => client.disconnect());
    }
  });

  it('refuses permits on an EtcdLockStore, and on a store of its own that offers none', async () => {
    const etcd = new EtcdLockStore({ hosts: [`127.0.0.1:${await freePort()}`] });
    try {
      expect(() => permitStoreOf(etcd, { mode: 'read' })).toThrow(/EtcdLockStore cannot keep N-holder/);
    } finally {
      await etcd.close();
    }
    // a store of one's own (a LockStore) without permits
    class OwnStore {}
    expect(() => permitStoreOf(new OwnStore() as unknown as LockStore, { mode: 'write' })).toThrow(
      /OwnStore cannot keep N-holder .*no `capabilities.permits`/,
    );
  });

  it('finds the permits of a store that offers them: the memory and Redis stores, and one of your own', async () => {
    const memory = new MemoryLockStore();
    expect(permitStoreOf(memory, { limit: 2 })).toBe(memory.capabilities.permits);
    const redis = new RedisLockStore({
      client: new Redis({ port: await freePort(), lazyConnect: true }),
      ownsClient: true,
    });
    expect(permitStoreOf(redis, { mode: 'read' })).toBe(redis.capabilities.permits);
    await Promise.all([memory.close(), redis.close()]);
    const permits = new MemoryPermitStore();
    const store: LockStore = Object.assign(new MemoryLockStore(), { capabilities: { permits } });
    expect(permitStoreOf(store, { limit: 2 })).toBe(permits);
  });
});
