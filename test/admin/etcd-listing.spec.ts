import { Etcd3 } from 'etcd3';
import { LockManager } from '../../lib/core/lock-manager.js';
import { listLocks } from '../../lib/listing/lock-listing.js';
import { etcdResourceKeys } from '../../lib/stores/etcd/etcd-keys.js';
import { EtcdLockStore } from '../../lib/stores/etcd/etcd-lock-store.js';
import { etcdKind, uniquePrefix } from '../support/stores.js';
import { describeListingContract, expectOnSecondPage } from './lock-listing.contract.js';

describe('on a local etcd cluster (3 members)', () => {
  beforeAll(() => etcdKind.cluster(), 60_000);
  afterAll(() => etcdKind.stop());

  describeListingContract(etcdKind, { permits: false });

  it('reads a bounded stretch of keys per page: 9000 fence keys before a held lock take several pages', async () => {
    const { hosts } = await etcdKind.cluster();
    const keyPrefix = uniquePrefix();
    const client = new Etcd3({ hosts });
    const store = new EtcdLockStore({ hosts, keyPrefix });
    const manager = new LockManager({ store });
    try {
      // released fenced keys leave their fence keys: rooms with no lease in them
      for (let start = 0; start < 9000; start += 100) {
        const puts = Array.from({ length: 100 }, (_unused, index) =>
          client.put(etcdResourceKeys(keyPrefix, `a:${String(start + index).padStart(9, '0')}`).fence).value(''),
        );
        await client
          .if(`${keyPrefix}never`, 'Create', '==', 0)
          .then(...puts)
          .commit();
      }
      const lock = await manager.acquire('b:12345678901', { ttl: 30_000 });
      await expectOnSecondPage(store, 'b:12345678901');
      await lock.release();
    } finally {
      await manager.close();
      client.close();
    }
  });

  it('lists keys that look like parts of a room as they were written', async () => {
    const pair = await etcdKind.create();
    const manager = new LockManager({ store: pair.store, closeStore: false });
    try {
      const keys = ['x/lock', '3:x/lock/lock', '1', 'x/fence', 'ключ/lock'];
      const held = await Promise.all(keys.map((key) => manager.acquire(key, { ttl: 30_000 })));
      expect((await listLocks(pair.other)).locks.map((listed) => listed.key).sort()).toEqual([...keys].sort());
      await Promise.all(held.map((lock) => lock.release()));
    } finally {
      await manager.close();
      await pair.close();
    }
  });
});
