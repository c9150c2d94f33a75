import { Redis } from 'ioredis';
import { startRedisServer, type RedisServerHandle } from '../support/redis-server.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';
import { startInventoryApp, type Platform, type RunningApp } from '../support/nest-app/create-app.js';

const post = (url: string) => fetch(url, { method: 'POST' });

describe.each<Platform>(['express', 'fastify'])('@WithLock on HTTP handlers (%s)', (platform) => {
  let running: RunningApp;
  let keyPrefix: string;

  beforeEach(async () => {
    keyPrefix = uniquePrefix();
    running = await startInventoryApp(platform, testRedisUrl(), { redis: testRedisUrl(), keyPrefix });
  });

  afterEach(async () => {
    await running.close();
  });

  it('returns 409 with Retry-After to 19 of 20 concurrent requests while one holds the lock', async () => {
    // warm the route, and hold long enough that 20 requests overlap the holder even on a busy machine
    expect((await post(`${running.url}/inventory/warm/hold?ms=1`)).status).toBe(201);
    const responses = await Promise.all(
      Array.from({ length: 20 }, () => post(`${running.url}/inventory/p1/hold?ms=1500`)),
    );
    const ok = responses.filter((r) => r.status === 201);
    const conflicts = responses.filter((r) => r.status === 409);
    expect(ok).toHaveLength(1);
    expect(conflicts).toHaveLength(19);
    for (const conflict of conflicts) {
      const retryAfter = Number(conflict.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(30);
      const body = (await conflict.json()) as Record<string, unknown>;
      // the key template, not the resolved key (which may carry user data), and never the token
      expect(body).toMatchObject({ statusCode: 409, code: 'LOCKED', resource: 'inventory:<productId>', retryAfter });
      expect(JSON.stringify(body)).not.toMatch(/p1|[0-9a-f]{32}/);
    }
  });

  it('runs requests for different products in parallel', async () => {
    const started = Date.now();
    const responses = await Promise.all(
      ['a', 'b', 'c', 'd'].map((id) => post(`${running.url}/inventory/${id}/hold?ms=800`)),
    );
    expect(responses.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    // one after another would take at least 4 x 800 ms
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it('sells exactly the 10 units in stock to 50 concurrent buyers that wait their turn', async () => {
    const product = `sku-${platform}-${Date.now()}`;
    await running.data.set(`stock:${product}`, '10');
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => post(`${running.url}/inventory/${product}/purchase`)),
    );
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(10);
    // the handler's own exception passes through untouched: 422, not a lock error
    expect(statuses.filter((s) => s === 422)).toHaveLength(40);
    expect(await running.data.get(`stock:${product}`)).toBe('0');
  });

  it('oversells the same stock without the lock (so the test above can fail)', async () => {
    const product = `sku-unlocked-${platform}-${Date.now()}`;
    await running.data.set(`stock:${product}`, '10');
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => post(`${running.url}/inventory/${product}/purchase-unlocked`)),
    );
    const sold = responses.filter((r) => r.status === 201).length;
    expect(sold).toBeGreaterThan(10);
  });

  it('answers 400 naming the placeholder when a body field the key needs is missing or not a scalar', async () => {
    for (const body of [{}, { sku: null }, { sku: { id: 1 } }, { sku: [1, 2] }, { sku: '' }]) {
      const response = await fetch(`${running.url}/inventory/by-sku`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { message: string }).message).toContain('<sku>');
    }
    const ok = await fetch(`${running.url}/inventory/by-sku`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ sku: 'x-1' }),
    });
    expect(ok.status).toBe(201);
  });

  it('answers 503 with Retry-After when the lock store is unreachable, and recovers when it is back', async () => {
    const server: RedisServerHandle = await startRedisServer();
    const app = await startInventoryApp(platform, testRedisUrl(), { redis: server.url, keyPrefix });
    try {
      await server.stop();
      const down = await post(`${app.url}/inventory/p1/hold?ms=1`);
      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBe('1');
      await server.start();
      let status = 0;
      for (let i = 0; i < 50 && status !== 201; i++) {
        status = (await post(`${app.url}/inventory/p1/hold?ms=1`)).status;
        if (status !== 201) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(status).toBe(201);
    } finally {
      await app.close();
      await server.stop();
    }
  });

  it('releases the lease after each request: nothing is left in Redis', async () => {
    await post(`${running.url}/inventory/p9/hold?ms=1`);
    const admin = new Redis(testRedisUrl());
    expect(await admin.exists(`${keyPrefix}{inventory:p9}`)).toBe(0);
    await admin.quit();
  });
});
