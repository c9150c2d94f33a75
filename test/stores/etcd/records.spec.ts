import { Etcd3 } from 'etcd3';
import { etcdRecordKey } from '../../../lib/stores/etcd/etcd-keys.js';
import { EtcdLockStore } from '../../../lib/stores/etcd/etcd-lock-store.js';
import { startEtcdCluster, type EtcdClusterHandle } from '../../support/etcd-cluster.js';
import { until } from '../../sample/start-sample.js';
import { uniquePrefix } from '../../support/stores.js';

describe('EtcdLockStore response records', () => {
  let cluster: EtcdClusterHandle;
  let admin: Etcd3;
  let store: EtcdLockStore;
  const leases = async (): Promise<number> => (await admin.leaseClient.leaseLeases()).leases.length;

  beforeAll(async () => {
    cluster = await startEtcdCluster(3);
    admin = new Etcd3({ hosts: cluster.hosts });
  }, 90_000);

  afterEach(async () => {
    await store?.close();
  });

  afterAll(async () => {
    admin?.close();
    await cluster?.stop();
  });

  it('gives each record a lease of its ttl in whole seconds, and leaves no lease behind a refused keep or a delete', async () => {
    const keyPrefix = uniquePrefix();
    store = new EtcdLockStore({ hosts: cluster.hosts, keyPrefix });
    const records = store.capabilities.records!;
    const before = await leases();

    expect(await records.put('r', 'first', 3_600_500)).toBe(true);
    const lease = (await admin.get(etcdRecordKey(keyPrefix, 'r').toString()).exec()).kvs[0].lease;
    const { grantedTTL } = await admin.leaseClient.leaseTimeToLive({ ID: lease });
    expect(Number(grantedTTL)).toBe(3601);
    expect(await leases()).toBe(before + 1);

    // a refused keep granted a lease for nothing: it is revoked
    expect(await records.put('r', 'second', 3_600_000)).toBe(false);
    await until(async () => (await leases()) === before + 1, 10_000);

    await records.delete('r');
    expect(await records.get('r')).toBeUndefined();
    await until(async () => (await leases()) === before, 10_000);
  });
});
