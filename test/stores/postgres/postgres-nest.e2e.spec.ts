import { Controller, Injectable, Module, Param, Post, type INestApplication } from '@nestjs/common';
import { LockModule, LockService, WithLock } from '../../../lib/index.js';
import { startApp, startInventoryApp, type Platform, type RunningApp } from '../../support/nest-app/create-app.js';
import { startPostgresServer, type PostgresServerHandle } from '../../support/postgres-server.js';
import { testRedisUrl, uniquePrefix } from '../../support/stores.js';
import { concurrentHolds } from '../../support/nest-app/concurrent-holds.js';

const post = (url: string) => fetch(url, { method: 'POST' });

let server: PostgresServerHandle;

beforeAll(async () => {
  server = await startPostgresServer();
}, 60_000);

afterAll(() => server.destroy());

describe.each<Platform>(['express', 'fastify'])(
  'LockModule.forRoot({ postgres }) on HTTP handlers (%s)',
  (platform) => {
    let running: RunningApp;

    beforeEach(async () => {
      running = await startInventoryApp(platform, testRedisUrl(), { postgres: server.url, keyPrefix: uniquePrefix() });
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
        const body = (await conflict.json()) as Record<string, unknown>;
        expect(body).toMatchObject({ statusCode: 409, code: 'LOCKED', resource: 'inventory:<productId>', retryAfter });
        expect(JSON.stringify(body)).not.toMatch(/p1|[0-9a-f]{32}/);
      }
    });

    it('sells exactly the 10 units in stock to 50 concurrent buyers that wait their turn', async () => {
      const product = `sku-pg-${platform}-${Date.now()}`;
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

@Injectable()
class Exports {
  inside = 0;
  most = 0;
}

@Controller('exports')
class ExportController {
  constructor(private readonly exports: Exports) {}

  @Post(':tenantId')
  @WithLock('export:<tenantId>', { limit: 2, wait: '10s' })
  async start(@Param('tenantId') tenantId: string): Promise<{ tenantId: string }> {
    this.exports.most = Math.max(this.exports.most, ++this.exports.inside);
    await new Promise((resolve) => setTimeout(resolve, 50));
    this.exports.inside--;
    return { tenantId };
  }

  @Post(':tenantId/now')
  @WithLock('export:<tenantId>', { limit: 2 })
  async now(@Param('tenantId') tenantId: string): Promise<{ tenantId: string }> {
    await new Promise((resolve) => setTimeout(resolve, 500));
    return { tenantId };
  }
}

describe('a semaphore on PostgreSQL in a Nest app (Express)', () => {
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    @Module({
      imports: [LockModule.forRoot({ postgres: server.url, keyPrefix: uniquePrefix() })],
      controllers: [ExportController],
      providers: [Exports],
    })
    class SemaphoreAppModule {}

    ({ app, url } = await startApp('express', SemaphoreAppModule));
  });

  afterAll(() => app.close());

  it('lets at most two of eight waiting exports of one tenant run at once, and all of them in the end', async () => {
    const responses = await Promise.all(Array.from({ length: 8 }, () => post(`${url}/exports/acme`)));
    expect(responses.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(app.get(Exports).most).toBe(2);
  });

  it("returns 409 to a third export that does not wait while two hold the semaphore's permits", async () => {
    const responses = await Promise.all(Array.from({ length: 3 }, () => post(`${url}/exports/globex/now`)));
    expect(responses.map((r) => r.status).sort()).toEqual([201, 201, 409]);
    const state = await app.get(LockService).inspect('export:globex');
    expect(state.held).toBe(false);
  });
});
