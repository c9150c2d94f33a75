import { Injectable, Module, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  LockModule,
  LockService,
  MemoryLockStore,
  WithLock,
  type LockInfo,
  type LockModuleOptions,
} from '../../lib/index.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';

@Injectable()
class ReportJob {
  constructor(private readonly locks: LockService) {}

  /** What inspect() shows, from inside the locked method, and the token it must not show. */
  @WithLock('report:<day>', { fencing: true })
  async run(day: string): Promise<{ info: LockInfo; token: string }> {
    return { info: await this.locks.inspect(`report:${day}`), token: this.locks.current()!.token };
  }
}

const stores: Array<[string, () => LockModuleOptions]> = [
  ['MemoryLockStore', () => ({ store: new MemoryLockStore() })],
  ['RedisLockStore', () => ({ redis: testRedisUrl(), keyPrefix: uniquePrefix() })],
];

describe.each(stores)('inspect() on %s', (_name, options) => {
  let app: INestApplication;
  let locks: LockService;

  beforeEach(async () => {
    @Module({ imports: [LockModule.forRoot(options())], providers: [ReportJob] })
    class AppModule {}
    const ref = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = ref.createNestApplication({ logger: false });
    await app.init();
    locks = app.get(LockService);
  });

  afterEach(() => app.close());

  it("shows a @WithLock method's Class.method as the holder's label, with its fence, never the token", async () => {
    const { info, token } = await app.get(ReportJob).run('2024-05-01');
    expect(info).toEqual({
      held: true,
      remainingTtl: expect.any(Number),
      fence: expect.any(Number),
      holder: { host: expect.any(String), pid: process.pid, label: 'ReportJob.run', acquiredAt: expect.any(Date) },
    });
    expect(JSON.stringify(info)).not.toContain(token);
    expect(await locks.inspect('report:2024-05-01')).toEqual({ held: false, fence: info.fence });
  });

  it('shows the label option of using() and acquire(), and no label when none was given', async () => {
    const seen = await locks.using('export', () => locks.inspect('export'), { label: 'nightly-export' });
    expect(seen.holder?.label).toBe('nightly-export');
    const lock = await locks.acquire('plain');
    const plain = await locks.inspect('plain');
    expect(plain.holder).toEqual({ host: expect.any(String), pid: process.pid, acquiredAt: expect.any(Date) });
    expect(JSON.stringify(plain)).not.toContain(lock.token);
    await lock.release();
  });
});
