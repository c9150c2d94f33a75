import { setTimeout as sleep } from 'node:timers/promises';
import { Etcd3 } from 'etcd3';
import { LockManager } from '../../../lib/core/lock-manager.js';
import { LockNotAcquiredError } from '../../../lib/errors/lock-not-acquired.error.js';
import { etcdResourceKeys } from '../../../lib/stores/etcd/etcd-keys.js';
import { EtcdLockStore } from '../../../lib/stores/etcd/etcd-lock-store.js';
import { startEtcdCluster, type EtcdClusterHandle } from '../../support/etcd-cluster.js';
import { startFaultProxy, type FaultProxy } from '../../support/fault-proxy.js';
import { uniquePrefix } from '../../support/stores.js';

/** A process's place in a resource's line, when giving it up fails: nobody else may be kept waiting behind it. */
describe('EtcdLockStore, a place in a line given up while etcd did not answer', () => {
  let cluster: EtcdClusterHandle;
  let proxy: FaultProxy;
  let admin: Etcd3;
  const managers: LockManager[] = [];

  beforeAll(async () => {
    cluster = await startEtcdCluster(1);
    admin = new Etcd3({ hosts: cluster.hosts });
    const [host, port] = cluster.hosts[0].split(':');
    proxy = await startFaultProxy({ host, port: Number(port) });
  }, 60_000);

  afterAll(async () => {
    await Promise.all(managers.splice(0).map((manager) => manager.close()));
    await proxy.close();
    admin.close();
    await cluster.stop();
  });

  it('is deleted later, so the line stops refusing others while this process waits for other keys', async () => {
    const prefix = uniquePrefix();
    const others = new LockManager({ store: new EtcdLockStore({ hosts: cluster.hosts, keyPrefix: prefix }) });
    const proxied = new LockManager({
      store: new EtcdLockStore({ hosts: [`127.0.0.1:${proxy.port}`], keyPrefix: prefix, timeout: 1000 }),
    });
    managers.push(others, proxied);
    const held = await others.acquire('inventory:sku-1', { ttl: 20_000 });
    const heldLong = await others.acquire('inventory:sku-2', { ttl: 20_000 });
    // the proxied process waits for the second key all along, which keeps its line session alive
    const waitingLong = proxied
      .acquire('inventory:sku-2', { ttl: 5000, wait: 20_000 })
      .catch((error: unknown) => error);
    const waitingShort = proxied.acquire('inventory:sku-1', { ttl: 5000, wait: 3000 });
    const line = etcdResourceKeys(prefix, 'inventory:sku-1').line.toString('utf8');
    let places: string[] = [];
    for (let tries = 0; places.length === 0; tries++) {
      expect(tries).toBeLessThan(200);
      await sleep(25);
      places = await admin.getAll().prefix(line).keys();
    }
    // the request that gives the place up at the end of the wait never reaches etcd
    const dropped = proxy.cutOn(leaveRequest(places[0]), 'request');
    await expect(waitingShort).rejects.toThrow(LockNotAcquiredError);
    await dropped;
    await held.release();

    // the key is free; the left-over place must go within a few of the session's keep-alive rounds (5 s ttl)
    let granted = false;
    for (const started = Date.now(); !granted && Date.now() - started < 10_000; await sleep(100)) {
      granted = await others.acquire('inventory:sku-1', { ttl: 5000 }).then(
        async (lock) => (await lock.release(), true),
        () => false,
      );
    }
    expect(granted).toBe(true);
    await heldLong.release();
    await waitingLong;
  }, 40_000);
});

/**
 * The bytes of the gRPC message that only deletes `entry` (a transaction with no comparison, whose one operation
 * deletes the key): its length prefix and a first field that no grant's transaction (which compares first) has.
 */
function leaveRequest(entry: string): string {
  const field = (tag: number, body: string): string => String.fromCharCode(tag, body.length) + body;
  const message = field(0x12, field(0x1a, field(0x0a, entry)));
  expect(message.length).toBeLessThan(128);
  return String.fromCharCode(0, 0, 0, 0, message.length) + message;
}
