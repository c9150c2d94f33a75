import { LockManager } from '../../../lib/core/lock-manager.js';
import type { LockLostError } from '../../../lib/errors/lock-lost.error.js';
import { EtcdLockStore } from '../../../lib/stores/etcd/etcd-lock-store.js';
import { startEtcdCluster, type EtcdClusterHandle } from '../../support/etcd-cluster.js';
import { uniquePrefix } from '../../support/stores.js';

/**
 * An extension to another length moves the key to an etcd lease of that length, while the lease's renewals go
 * on: a renewal that reads the key on the lease a move has just put it on must not call the lease lost.
 */
describe('EtcdLockStore, renewals while extensions move the key', () => {
  let cluster: EtcdClusterHandle;

  beforeAll(async () => {
    cluster = await startEtcdCluster(1);
  }, 60_000);

  afterAll(() => cluster.stop());

  it('keeps the lease of a holder that extends it to other lengths again and again', async () => {
    const manager = new LockManager({ store: new EtcdLockStore({ hosts: cluster.hosts, keyPrefix: uniquePrefix() }) });
    try {
      const lock = await manager.acquire('report:daily', { ttl: 3000, autoRenew: true });
      let lost: LockLostError | undefined;
      lock.signal.addEventListener('abort', () => (lost = lock.signal.reason as LockLostError));
      // back to back, so a move is on its way at almost every renewal (one a second)
      for (const started = Date.now(); Date.now() - started < 8000 && !lost;) {
        await lock.extend(6000);
        await lock.extend(3000);
      }
      expect(lost).toBeUndefined();
      expect(await lock.release()).toBe(true);
    } finally {
      await manager.close();
    }
  }, 30_000);
});
