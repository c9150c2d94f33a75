import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Cron, Interval, ScheduleModule } from '@nestjs/schedule';
import { Redis } from 'ioredis';
import { LockModule, LockService, LockStoreError, WithLock, type LockLogger } from '../../lib/index.js';
import { tickClaimKey } from '../../lib/schedule/tick-claim.js';
import { startRedisServer } from '../support/redis-server.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';

// `disabled`: the scheduler keeps the job without starting it, so only the calls of the tests run it
/** The date of `Reports.launch`: soon after the class is made, so the test reaches it. */
const LAUNCH = Date.now() + 2000;

@Injectable()
class Reports {
  @Cron('* * * * * *', { disabled: true })
  @WithLock('report:daily')
  async daily(): Promise<string> {
    return 'ran';
  }

  @WithLock('report:below')
  @Cron('* * * * * *', { disabled: true })
  async below(): Promise<string> {
    return 'ran';
  }

  @Interval(60_000)
  @WithLock('report:minutely')
  async minutely(): Promise<string> {
    return 'ran';
  }

  @Cron('* * * * * *', { disabled: true })
  @WithLock('report:shared')
  async first(): Promise<string> {
    return 'ran';
  }

  @Cron('* * * * * *', { disabled: true })
  @WithLock('report:shared')
  async second(): Promise<string> {
    return 'ran';
  }

  /** A launch every instance runs at one date, as quick as it is. */
  @Cron(new Date(LAUNCH), { disabled: true })
  @WithLock('report:launch')
  async launch(): Promise<string> {
    return 'ran';
  }

  @Cron('* * * * * *', { disabled: true })
  @WithLock('report:contended')
  async contended(): Promise<string> {
    return 'ran';
  }

  @Cron('* * * * * *', { disabled: true })
  @WithLock('report:held', { holdAtLeast: '1500ms' })
  async held(): Promise<string> {
    return 'ran';
  }

  @Cron('* * * * * *', { disabled: true })
  @WithLock('report:unclaimed', { holdAtLeast: 0 })
  async unclaimed(): Promise<string> {
    return 'ran';
  }
}

/** Resolves at `time` (ms since the epoch) on the wall clock, where the ticks of a schedule are. */
async function until(time: number): Promise<void> {
  while (Date.now() < time) await new Promise((resolve) => setTimeout(resolve, Math.max(1, time - Date.now())));
}

/** The start of the next whole second. */
const nextSecond = (): number => (Math.floor(Date.now() / 1000) + 1) * 1000;

describe('@WithLock on a scheduled method, without holdAtLeast', () => {
  let app: INestApplicationContext;
  let locks: LockService;
  let admin: Redis;
  let keyPrefix: string;
  const debug: string[] = [];
  const logger: LockLogger = { log: () => undefined, warn: () => undefined, error: () => undefined };

  beforeAll(async () => {
    keyPrefix = uniquePrefix();
    admin = new Redis(testRedisUrl());
    const ref = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        LockModule.forRoot({
          redis: testRedisUrl(),
          keyPrefix,
          logger: { ...logger, debug: (message: string) => debug.push(message) },
        }),
      ],
      providers: [Reports],
    }).compile();
    app = await ref.createNestApplication({ logger: false }).init();
    locks = app.get(LockService);
  });

  afterAll(async () => {
    await app.close();
    await admin.quit();
  });

  /**
   * A run early enough in its second that it and the calls that follow it (well under the 450 ms left before
   * its claim ends, 50 ms before the next second, even with both cores busy) see the claim held.
   */
  async function inEarlyPartOfSecond(): Promise<void> {
    if (Date.now() % 1000 > 500) await until(nextSecond());
  }

  it('runs a @Cron job once per tick: a second call before the next tick is skipped, and its key is free at once', async () => {
    const reports = app.get(Reports);
    // the claim ends 50 ms before the next tick: on a machine so busy that the run and the looks at its key and
    // claim outlast the rest of the second, the claim has ended by design, and the check goes again next second
    for (let attempt = 1; ; attempt++) {
      await inEarlyPartOfSecond();
      const next = nextSecond();
      expect(await reports.daily()).toBe('ran');
      expect(await locks.isLocked('report:daily')).toBe(false);
      const asked = Date.now();
      const claim = await locks.inspect(tickClaimKey('Reports.daily', ['report:daily']));
      if (Date.now() >= next - 100 && attempt < 5) {
        await until(next);
        continue;
      }
      // claimed until just before the next tick, never into it
      expect(claim.held).toBe(true);
      expect(claim.remainingTtl).toBeLessThan(next - asked);
      expect(await reports.daily()).toBeUndefined();
      await until(next);
      expect(await reports.daily()).toBe('ran');
      return;
    }
  });

  it('runs a @Cron on a date once: a call soon after it, as another instance makes, is skipped', async () => {
    const reports = app.get(Reports);
    await until(LAUNCH);
    expect(await reports.launch()).toBe('ran');
    expect(await locks.isLocked('report:launch')).toBe(false);
    expect(await reports.launch()).toBeUndefined();
    const claim = await locks.inspect(tickClaimKey('Reports.launch', ['report:launch']));
    expect(claim.held).toBe(true);
  });

  it('reads the schedule of @Cron below the decorator and of @Interval above it', async () => {
    const reports = app.get(Reports);
    await inEarlyPartOfSecond();
    // a run in the last second of a minute would count for the next minute's window
    if (Date.now() % 60_000 > 58_000) await until((Math.floor(Date.now() / 60_000) + 1) * 60_000);
    expect([await reports.below(), await reports.below()]).toEqual(['ran', undefined]);
    expect([await reports.minutely(), await reports.minutely()]).toEqual(['ran', undefined]);
    // @Interval(60_000): the window ends 1 s before the next whole minute of the wall clock
    const asked = Date.now();
    const claim = await locks.inspect(tickClaimKey('Reports.minutely', ['report:minutely']));
    expect(claim.remainingTtl).toBeLessThan(60_000 - (asked % 60_000) - 900);
  });

  it('gives each of two jobs that share a key its own tick', async () => {
    const reports = app.get(Reports);
    await inEarlyPartOfSecond();
    expect([await reports.first(), await reports.second()]).toEqual(['ran', 'ran']);
    expect([await reports.first(), await reports.second()]).toEqual([undefined, undefined]);
  });

  it('skips a call while its key is held, logged at debug, and gives the tick back for a later call', async () => {
    const reports = app.get(Reports);
    await inEarlyPartOfSecond();
    const holder = await locks.acquire('report:contended');
    expect(await reports.contended()).toBeUndefined();
    expect(debug.some((message) => message.startsWith('Skipped Reports.contended'))).toBe(true);
    expect((await locks.inspect(tickClaimKey('Reports.contended', ['report:contended']))).held).toBe(false);
    await holder.release();
    expect(await reports.contended()).toBe('ran');
  });

  it('keeps the key itself for an explicit holdAtLeast, and claims no tick with holdAtLeast 0', async () => {
    const reports = app.get(Reports);
    expect(await reports.held()).toBe('ran');
    const ttl = await admin.pttl(`${keyPrefix}{report:held}`);
    expect(ttl).toBeGreaterThan(1000);
    expect(ttl).toBeLessThanOrEqual(1500);
    expect(await locks.isLocked(tickClaimKey('Reports.held', ['report:held']))).toBe(false);
    expect([await reports.unclaimed(), await reports.unclaimed()]).toEqual(['ran', 'ran']);
  });
});

describe('@WithLock on a scheduled method whose lock cannot be had', () => {
  @Injectable()
  class Jobs {
    @Cron('* * * * * *', { disabled: true })
    @WithLock('job:skipped')
    async skipped(): Promise<string> {
      return 'ran';
    }

    @Cron('* * * * * *', { disabled: true })
    @WithLock('job:strict', { onContention: 'throw' })
    async strict(): Promise<string> {
      return 'ran';
    }

    /** A store call of its own fails after it began: that is the job's failure, not a skipped tick. */
    @Cron('* * * * * *', { disabled: true })
    @WithLock('job:inner')
    async inner(): Promise<string> {
      throw new LockStoreError('acquire', 'job:inner:nested', new Error('connection lost'));
    }
  }

  async function boot(redis: string, errors: string[]): Promise<INestApplicationContext> {
    const ref = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        LockModule.forRoot({
          redis,
          keyPrefix: uniquePrefix(),
          logger: { log: () => undefined, warn: () => undefined, error: (message: string) => errors.push(message) },
        }),
      ],
      providers: [Jobs],
    }).compile();
    return ref.createNestApplication({ logger: false }).init();
  }

  it('skips a tick while the store is down (the store error logged once), unless it throws on contention', async () => {
    const server = await startRedisServer();
    const errors: string[] = [];
    const app = await boot(server.url, errors);
    try {
      const jobs = app.get(Jobs);
      expect(await jobs.skipped()).toBe('ran');
      await server.stop();
      // its scheduler would log each one as a failed job, with its stack, every tick of an outage
      expect(await jobs.skipped()).toBeUndefined();
      expect(await jobs.skipped()).toBeUndefined();
      expect(
        errors.filter((message) => message.includes('job:skipped') || message.includes('Jobs.skipped')),
      ).toHaveLength(1);
      await expect(jobs.strict()).rejects.toBeInstanceOf(LockStoreError);
    } finally {
      await app.close();
      await server.stop();
    }
  }, 30_000);

  it("rethrows a store error of the job's own, and skips the ticks that come while the application shuts down", async () => {
    const errors: string[] = [];
    const app = await boot(testRedisUrl(), errors);
    const jobs = app.get(Jobs);
    await expect(jobs.inner()).rejects.toBeInstanceOf(LockStoreError);
    await app.close();
    expect(await jobs.skipped()).toBeUndefined();
    await expect(jobs.strict()).rejects.toThrow(/shutting down/);
  });
});
