import type { LockModuleOptions } from '../../../lib/index.js';
import { testRedisUrl, uniquePrefix } from '../stores.js';
import { concurrentHolds } from './concurrent-holds.js';
import { startInventoryApp, type Platform, type RunningApp } from './create-app.js';

const post = (url: string) => fetch(url, { method: 'POST' });

/**
 * The inventory app's two HTTP promises on a store, over Express and Fastify: contention answers 409 with
 * Retry-After and no private detail, and buyers that wait their turn never oversell. `storeOptions` is read
 * when each test starts, so it may name a server started in the file's `beforeAll`.
 */
export function describeInventoryOverHttp(store: string, storeOptions: () => LockModuleOptions): void {
  describe.each<Platform>(['express', 'fastify'])(
    `LockModule.forRoot({ ${store} }) on HTTP handlers (%s)`,
    (platform) => {
      let running: RunningApp;

      beforeEach(async () => {
        running = await startInventoryApp(platform, testRedisUrl(), { ...storeOptions(), keyPrefix: uniquePrefix() });
      });

      afterEach(() => running.close());

      it('returns 409 with Retry-After to 19 of 20 concurrent requests while one holds the lock', async () => {
        expect((await post(`${running.url}/inventory/warm/hold?ms=1`)).status).toBe(201);
        const responses = await concurrentHolds(running.url, 'p1', 20);
        expect(responses.filter((r) => r.status === 201)).toHaveLength(1);
        const conflicts = responses.filter((r) => r.status === 409);
        expect(conflicts).toHaveLength(19);
        for (const conflict of conflicts) {
          const retryAfter = Number(conflict.headers.get('retry-after'));
          expect(retryAfter).toBeGreaterThanOrEqual(1);
          expect(retryAfter).toBeLessThanOrEqual(30);
          const body = (await conflict.json()) as Record<string, unknown>;
          // the key template, not the resolved key, and never the token
          expect(body).toMatchObject({
            statusCode: 409,
            code: 'LOCKED',
            resource: 'inventory:<productId>',
            retryAfter,
          });
          expect(JSON.stringify(body)).not.toMatch(/p1|[0-9a-f]{32}/);
        }
      });

      it('sells exactly the 10 units in stock to 50 concurrent buyers that wait their turn', async () => {
        const product = `sku-${store}-${platform}-${Date.now()}`;
        await running.data.set(`stock:${product}`, '10');
        const responses = await Promise.all(
          Array.from({ length: 50 }, () => post(`${running.url}/inventory/${product}/purchase`)),
        );
        const statuses = responses.map((r) => r.status);
        expect(statuses.filter((s) => s === 201)).toHaveLength(10);
        expect(statuses.filter((s) => s === 422)).toHaveLength(40);
        expect(await running.data.get(`stock:${product}`)).toBe('0');
      });
    },
  );
}
