import { LockManager } from '../../../lib/core/lock-manager.js';
import { LockStoreError } from '../../../lib/errors/lock-store.error.js';
import { EtcdLockStore } from '../../../lib/stores/etcd/etcd-lock-store.js';
import { startEtcdCluster, type EtcdClusterHandle } from '../../support/etcd-cluster.js';
import { freePort } from '../../support/redis-server.js';
import { uniquePrefix } from '../../support/stores.js';

/** What an etcd store that cannot be used says: which members it tried, and why, in every message. */
describe('EtcdLockStore failures, in words', () => {
  let cluster: EtcdClusterHandle;
  const managers: LockManager[] = [];

  beforeAll(async () => {
    cluster = await startEtcdCluster(1);
  }, 60_000);

  afterEach(async () => {
    cluster.members[0].resume();
    await Promise.all(managers.splice(0).map((manager) => manager.close()));
  });

  afterAll(() => cluster.stop());

  it('names the member and the cause of a failed startup, in the words of the other stores', async () => {
    const host = `127.0.0.1:${await freePort()}`;
    const store = new EtcdLockStore({ hosts: [host], keyPrefix: uniquePrefix() });
    try {
      const error = await store.verify().catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(LockStoreError);
      expect((error as Error).message).toBe(
        `Lock store failed to connect: no etcd member answered (${host}): connection refused (ECONNREFUSED)`,
      );
    } finally {
      await store.close();
    }
  });

  it('says why a call failed while the store is frozen, not only that it failed, and never the key', async () => {
    const manager = new LockManager({
      store: new EtcdLockStore({ hosts: cluster.hosts, keyPrefix: uniquePrefix(), timeout: 500 }),
    });
    managers.push(manager);
    await (await manager.acquire('inventory:sku-7', { ttl: 5000 })).release();
    await cluster.members[0].pause();
    const error = await manager.acquire('inventory:sku-7', { ttl: 5000 }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(LockStoreError);
    expect((error as Error).message).toBe(
      `Lock store failed to acquire: no etcd member answered (${cluster.hosts[0]}): no answer in time (DEADLINE_EXCEEDED)`,
    );
  }, 30_000);
});
