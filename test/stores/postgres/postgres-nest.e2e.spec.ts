import { Controller, Injectable, Module, Param, Post, type INestApplication } from '@nestjs/common';
import { LockModule, LockService, WithLock } from '../../../lib/index.js';
import { startApp } from '../../support/nest-app/create-app.js';
import { describeInventoryOverHttp } from '../../support/nest-app/inventory-over-http.js';
import { startPostgresServer, type PostgresServerHandle } from '../../support/postgres-server.js';
import { uniquePrefix } from '../../support/stores.js';

const post = (url: string) => fetch(url, { method: 'POST' });

let server: PostgresServerHandle;

beforeAll(async () => {
  server = await startPostgresServer();
}, 60_000);

afterAll(() => server.destroy());

describeInventoryOverHttp('postgres', () => ({ postgres: server.url }));

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
