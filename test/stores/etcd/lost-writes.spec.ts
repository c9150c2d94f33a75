import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Etcd3 } from 'etcd3';
import { LockManager } from '../../../lib/core/lock-manager.js';
import { LockNotAcquiredError } from '../../../lib/errors/lock-not-acquired.error.js';
import { etcdResourceKeys } from '../../../lib/stores/etcd/etcd-keys.js';
import { EtcdLockStore } from '../../../lib/stores/etcd/etcd-lock-store.js';
import { startEtcdCluster, type EtcdClusterHandle } from '../../support/etcd-cluster.js';
import { startFaultProxy, type FaultProxy } from '../../support/fault-proxy.js';
import { uniquePrefix } from '../../support/stores.js';

/**
 * Writes whose answer was lost (a member that applied a transaction and then went silent), sent again to the
 * next member or not: the second copy must not undo or misread what the first did, and a write that failed must
 * not leave behind what keeps others waiting. The store's first member is the one etcd server through a proxy
 * that loses answers or requests; the second, where given, the same server directly.
 */
describe('EtcdLockStore, writes whose answer or request was lost', () => {
  let cluster: EtcdClusterHandle;
  let proxy: FaultProxy;
  let admin: Etcd3;
  const managers: LockManager[] = [];

  beforeAll(async () => {
    cluster = await startEtcdCluster(1);
    admin = new Etcd3({ hosts: cluster.hosts });
  }, 60_000);

  beforeEach(async () => {
    const [host, port] = cluster.hosts[0].split(':');
    proxy = await startFaultProxy({ host, port: Number(port) });
  });

  afterEach(async () => {
    proxy.heal();
    await Promise.all(managers.splice(0).map((manager) => manager.close()));
    await proxy.close();
  });

  afterAll(async () => {
    admin.close();
    await cluster.stop();
  });

  /** A manager whose store talks to the proxy first, then (once that fails, unless `only`) to the server directly. */
  const managerThroughProxy = (prefix: string, only = false): LockManager => {
    const store = new EtcdLockStore({
      hosts: [`127.0.0.1:${proxy.port}`, ...(only ? [] : cluster.hosts)],
      keyPrefix: prefix,
      timeout: 1000,
    });
    const manager = new LockManager({ store });
    managers.push(manager);
    return manager;
  };

  /** The token and etcd lease that hold `key` now, read directly from the server. */
  const holding = async (prefix: string, key: string): Promise<{ token: string; lease: string } | undefined> => {
    const reply = await admin.kv.range({ key: etcdResourceKeys(prefix, key).lock });
    const [current] = reply.kvs;
    return current && { token: Buffer.from(current.value).toString('utf8'), lease: String(current.lease) };
  };

  it('hands the key over once when the hand-over is resent, and never pools the lease that holds it', async () => {
    const prefix = uniquePrefix();
    const manager = managerThroughProxy(prefix);
    const ttl = 20_000;
    const first = await manager.acquire('inventory:sku-1', { ttl, autoRenew: false });
    const waiting = manager.acquire('inventory:sku-1', { ttl, wait: 8000, autoRenew: false });
    // the waiter's refused ask puts its place in the line
    const line = etcdResourceKeys(prefix, 'inventory:sku-1').line;
    for (let tries = 0; (await admin.getAll().prefix(line.toString('utf8')).keys()).length === 0; tries++) {
      expect(tries).toBeLessThan(200);
      await sleep(25);
    }
    // another key takes the lease the refused ask left in the pool, so the hand-over is made on a new lease
    const other = await manager.acquire('inventory:sku-2', { ttl, autoRenew: false });
    const firstToken = (await holding(prefix, 'inventory:sku-1'))!.token;

    // the hand-over (the only request that carries the holder's token) runs, and its answer is lost
    const lost = proxy.holdRepliesAfter(firstToken);
    const releasedAt = performance.now();
    await expect(first.release()).resolves.toBe(true);
    await lost;
    const second = await waiting;
    // handed over by the first copy, not by the waiter's own ask at the end of its wait
    expect(performance.now() - releasedAt).toBeLessThan(6000);
    const handedTo = await holding(prefix, 'inventory:sku-1');
    expect(handedTo?.token).not.toBe(firstToken);
    proxy.heal();

    // the next grant of the same length must not be made on the lease that holds the waiter's key: a revocation
    // of it would end both
    const third = await manager.acquire('inventory:sku-3', { ttl, autoRenew: false });
    expect((await holding(prefix, 'inventory:sku-3'))?.lease).not.toBe(handedTo?.lease);
    await Promise.all([second.release(), other.release(), third.release()]);
  }, 30_000);

  it('keeps the key of a holder whose extension to another length lost its answer, and says where it is', async () => {
    const prefix = uniquePrefix();
    const holder = managerThroughProxy(prefix, true);
    const rival = new LockManager({ store: new EtcdLockStore({ hosts: cluster.hosts, keyPrefix: prefix }) });
    managers.push(rival);
    const lock = await holder.acquire('inventory:sku-1', { ttl: 20_000, autoRenew: false });
    const token = (await holding(prefix, 'inventory:sku-1'))!.token;

    // the move to a lease of the new length runs on the server, and its answer is lost
    const lost = proxy.holdRepliesAfter(token);
    const extending = lock.extend(6000);
    await lost;
    // nothing answers until the extension has failed: the store cannot read where the key went
    proxy.blackhole();
    await expect(extending).rejects.toThrow(/failed to renew|failed to extend/);
    // the holder may still hold: the key must still be there, its token's, for nobody else to take
    expect((await holding(prefix, 'inventory:sku-1'))?.token).toBe(token);
    await expect(rival.acquire('inventory:sku-1', { ttl: 5000 })).rejects.toThrow(/held/);
    proxy.heal();
    // the key is on the new 6 s lease, which the holder does not know of: renewed for 20 s on its old lease, it
    // must learn that it lost the lease, or hold a key that lasts what it was told, never one left to run out
    const renewed = await lock.extend(20_000).then(
      () => true,
      () => false,
    );
    if (renewed) {
      const now = (await holding(prefix, 'inventory:sku-1'))!;
      const { TTL } = await admin.leaseClient.leaseTimeToLive({ ID: now.lease });
      expect(Number(TTL)).toBeGreaterThan(10);
    }
    await lock.release().catch(() => undefined);
  }, 30_000);

  it('keeps a response record once when its keep is resent, so a repeated request is answered from it', async () => {
    const store = new EtcdLockStore({
      hosts: [`127.0.0.1:${proxy.port}`, ...cluster.hosts],
      keyPrefix: uniquePrefix(),
      timeout: 1000,
    });
    try {
      const records = store.capabilities.records!;
      const lost = proxy.holdRepliesAfter('{"status":201,"order":"o-77"}');
      await expect(records.put('orders:o-77', '{"status":201,"order":"o-77"}', 60_000)).resolves.toBe(true);
      await lost;
      proxy.heal();
      await expect(records.get('orders:o-77')).resolves.toBe('{"status":201,"order":"o-77"}');
    } finally {
      await store.close();
    }
  }, 30_000);

  it('deletes a place in a line whose giving up was dropped, so the line stops refusing others', async () => {
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
