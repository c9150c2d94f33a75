import { Controller, Injectable, Module, Param, Post, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import { Redis } from 'ioredis';
import { LockConfigurationError, LockModule, LockService, WithLock, type Lock } from '../../../lib/index.js';
import { RedlockStore } from '../../../lib/stores/redlock/redlock.store.js';
import { freePort } from '../../support/redis-server.js';
import { memoryCapableKind, type CapableStore } from '../../support/capable-stores.js';
import { startApp } from '../../support/nest-app/create-app.js';

/** A promise and what settles it, for a handler that holds its permit until the test lets it go. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Resolves once `check` holds, asking every few ms. */
async function until(check: () => boolean, timeout = 3500): Promise<void> {
  const deadline = Date.now() + timeout;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

@Injectable()
class Exports {
  inside = 0;
  release = gate();
}

@Controller('exports')
class ExportController {
  constructor(private readonly exports: Exports) {}

  @Post(':tenantId')
  @WithLock('export:<tenantId>', { limit: 2 })
  async start(@Param('tenantId') tenantId: string): Promise<{ tenantId: string }> {
    this.exports.inside++;
    await this.exports.release.opened;
    this.exports.inside--;
    return { tenantId };
  }
}

@Injectable()
class Reports {
  runs: Array<string | undefined> = [];

  constructor(private readonly locks: LockService) {}

  @Cron('* * * * * *', { name: 'catalog-report' })
  @WithLock('catalog', { mode: 'read', onContention: 'skip' })
  report(): string {
    this.runs.push(this.locks.current('catalog')?.key);
    return 'reported';
  }

  @WithLock('slots', { limit: 1, onContention: 'skip' })
  slot(): string {
    return 'ran';
  }
}

describe('permits in a Nest app (Express)', () => {
  let capable: CapableStore;
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    capable = await memoryCapableKind.create();

    @Module({
      imports: [LockModule.forRoot({ store: capable.store }), ScheduleModule.forRoot()],
      controllers: [ExportController],
      providers: [Exports, Reports],
    })
    class PermitAppModule {}

    ({ app, url } = await startApp('express', PermitAppModule));
  });

  afterAll(async () => {
    app.get(Exports).release.open();
    await app.close();
    await capable.close();
  });

  it("returns 409 to a third export of one tenant while two hold the semaphore's permits", async () => {
    const exports = app.get(Exports);
    const post = (tenant: string): Promise<Response> => fetch(`${url}/exports/${tenant}`, { method: 'POST' });
    const running = [post('acme'), post('acme')];
    await until(() => exports.inside === 2);
    const third = await post('acme');
    expect(third.status).toBe(409);
    expect(await third.json()).toMatchObject({ statusCode: 409, code: 'LOCKED', resource: 'export:<tenantId>' });
    expect(third.headers.get('retry-after')).not.toBeNull();
    const other = post('globex');
    await until(() => exports.inside === 3);
    exports.release.open();
    expect((await Promise.all([...running, other])).map((response) => response.status)).toEqual([201, 201, 201]);
    expect((await app.get(LockService).inspect('export:acme')).held).toBe(false);
  });

  it('runs a @Cron job with a read permit beside other readers, and skips it while a writer holds the key', async () => {
    const reports = app.get(Reports);
    const locks = app.get(LockService);
    await until(() => reports.runs.length > 0);
    expect(reports.runs[0]).toBe('catalog');
    // the scheduler's next tick runs beside a reader (a call of our own would find this tick claimed)
    const reader: Lock = await locks.acquire('catalog', { mode: 'read' });
    const seen = reports.runs.length;
    await until(() => reports.runs.length > seen);
    await reader.release();
    const writer = await locks.acquire('catalog', { mode: 'write', wait: '3s' });
    const skipped = new Promise<void>((resolve) => {
      const off = locks.on('skipped', ({ label }) => {
        if (label !== 'Reports.report') return;
        off();
        resolve();
      });
    });
    await skipped;
    await writer.release();
  });

  it('skips a call of a full semaphore with onContention: skip', async () => {
    const locks = app.get(LockService);
    const reports = app.get(Reports);
    const held = await locks.acquire('slots', { limit: 1 });
    await expect(reports.slot()).resolves.toBeUndefined();
    await held.release();
    await expect(reports.slot()).resolves.toBe('ran');
  });
});

@Injectable()
class Semaphored {
  @WithLock('export:<tenantId>', { limit: 3 })
  run(tenantId: string): string {
    return tenantId;
  }
}

describe('permits at bootstrap', () => {
  it('refuses a @WithLock with a limit on a RedlockStore at module init, naming the option', async () => {
    const clients = await Promise.all(
      [0, 1, 2].map(async () => new Redis({ port: await freePort(), lazyConnect: true })),
    );
    const store = new RedlockStore({ nodes: clients });
    const ref = await Test.createTestingModule({
      imports: [LockModule.forRoot({ store, verifyOnStartup: false })],
      providers: [Semaphored],
    }).compile();
    const app = ref.createNestApplication({ logger: false });
    try {
      const error = await app.init().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(LockConfigurationError);
      expect((error as LockConfigurationError).option).toBe('@WithLock(Semaphored.run).limit');
      expect((error as Error).message).toContain('RedlockStore cannot keep N-holder or readers-writer locks');
    } finally {
      await app.close().catch(() => undefined);
      await store.close();
      clients.forEach((client) => client.disconnect());
    }
  });
});
