import { Cluster } from 'ioredis';
import { LockService } from '../../../../lib/lock.service.js';
import type { RedisLockStore } from '../../../../lib/stores/redis/redis.store.js';
import type { LockModuleOptions } from '../../../../lib/interfaces/lock-module-options.interface.js';
import { resourceKeys } from '../../../../lib/stores/redis/resource-keys.js';
import { startInventoryApp, type RunningApp } from '../../../support/nest-app/create-app.js';
import { startRedisCluster, type RedisClusterHandle } from '../../../support/redis-cluster.js';
import { testRedisUrl, uniquePrefix } from '../../../support/stores.js';
import { concurrentHolds } from '../../../support/nest-app/concurrent-holds.js';

const post = (url: string) => fetch(url, { method: 'POST' });

describe('@WithLock on HTTP handlers with locks on a Redis Cluster (express)', () => {
  let cluster: RedisClusterHandle;
  let client: Cluster;
  let keyPrefix: string;
  let running: RunningApp | undefined;

  beforeAll(async () => {
    cluster = await startRedisCluster();
    // the application's own Cluster client: the module must use it and never close it
    client = new Cluster(cluster.startupNodes, { redisOptions: { commandTimeout: 2000, maxRetriesPerRequest: 1 } });
    client.on('error', () => undefined);
  }, 60_000);

  afterAll(async () => {
    await client?.quit();
    await cluster?.stop();
  });

  beforeEach(() => {
    keyPrefix = uniquePrefix();
  });

  afterEach(async () => {
    await running?.close();
    running = undefined;
  });

  /** Stock data lives in the shared standalone test Redis; the locks live on the cluster. */
  const start = async (redis: LockModuleOptions['redis']) =>
    (running = await startInventoryApp('express', testRedisUrl(), { redis, keyPrefix }));

  it('returns 409 with Retry-After to 19 of 20 concurrent requests while one holds the lock', async () => {
    const app = await start(client);
    const responses = await concurrentHolds(app.url, 'p1', 20);
    expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
    const conflicts = responses.filter((r) => r.status === 409);
    expect(conflicts).toHaveLength(19);
    for (const conflict of conflicts) {
      expect(Number(conflict.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(await conflict.json()).toMatchObject({ statusCode: 409, resource: 'inventory:<productId>' });
    }
  });

  it('sells exactly the 10 units in stock to 50 concurrent buyers that wait their turn, on every master', async () => {
    const app = await start(client);
    // products whose locks land on different masters, bought at the same time
    const products: string[] = [];
    const masters = new Set<number>();
    for (let i = 0; masters.size < 3; i++) {
      const product = `sku-${Date.now()}-${i}`;
      const master = await cluster.masterForKey(resourceKeys(keyPrefix, `inventory:${product}`).lock);
      if (masters.has(master)) continue;
      masters.add(master);
      products.push(product);
    }
    for (const product of products) await app.data.set(`stock:${product}`, '10');
    const responses = await Promise.all(
      products.flatMap((product) => Array.from({ length: 50 }, () => post(`${app.url}/inventory/${product}/purchase`))),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(30);
    expect(statuses.filter((s) => s === 422)).toHaveLength(120);
    for (const product of products) expect(await app.data.get(`stock:${product}`)).toBe('0');
  });

  it('runs requests for different products in parallel and leaves no lock key behind', async () => {
    const app = await start(client);
    const started = Date.now();
    const responses = await Promise.all(
      ['a', 'b', 'c', 'd'].map((id) => post(`${app.url}/inventory/${id}/hold?ms=500`)),
    );
    expect(responses.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    expect(Date.now() - started).toBeLessThan(1800); // one after the other would take 2 s
    for (const id of ['a', 'b', 'c', 'd']) {
      expect(await client.exists(resourceKeys(keyPrefix, `inventory:${id}`).lock)).toBe(0);
    }
  });

  it("leaves the application's Cluster client open after the app closes", async () => {
    const app = await start(client);
    expect((await post(`${app.url}/inventory/p2/hold?ms=1`)).status).toBe(201);
    await app.close();
    running = undefined;
    expect(client.status).toBe('ready');
    expect(await client.ping()).toBe('PONG');
  });

  it('creates, uses and closes its own Cluster client from { cluster: nodes }', async () => {
    const app = await start({ cluster: cluster.startupNodes });
    const product = `owned-${Date.now()}`;
    await app.data.set(`stock:${product}`, '3');
    const statuses = await Promise.all(
      Array.from({ length: 6 }, () => post(`${app.url}/inventory/${product}/purchase`).then((r) => r.status)),
    );
    expect(statuses.sort()).toEqual([201, 201, 201, 422, 422, 422]);
    const owned = (app.app.get(LockService).store as RedisLockStore).client as unknown as Cluster;
    expect(owned).not.toBe(client);
    expect(owned.isCluster).toBe(true);
    await app.close();
    running = undefined;
    // quit() has been answered by every node; the client ends once their sockets close
    if (owned.status !== 'end') await new Promise((resolve) => owned.once('end', resolve));
    expect(owned.status).toBe('end');
  });
});
