import { LockService } from '../../lib/index.js';
import { tickClaimKey } from '../../lib/schedule/tick-claim.js';
import { REPORT_RUNS } from '../../sample/report/report-runs.js';
import { STORAGE, type Storage } from '../../sample/storage/storage.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';
import { startSample, until, type RunningSample } from './start-sample.js';

describe('the @Cron report job guarded by @WithLock on three instances', () => {
  let instances: RunningSample[] = [];
  let storage: Storage;

  beforeAll(async () => {
    const keyPrefix = uniquePrefix();
    instances = await Promise.all(
      ['a', 'b', 'c'].map((instanceId) => startSample({ redisUrl: testRedisUrl(), keyPrefix, instanceId })),
    );
    storage = instances[0].app.get<Storage>(STORAGE);
  });

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.close()));
  });

  const runs = async (): Promise<Array<{ tick: number; instance: string }>> =>
    (await storage.list(REPORT_RUNS)).map((entry) => {
      const [tick, instance] = entry.split(':');
      return { tick: Number(tick), instance };
    });

  it('runs the report at most once per tick, on one of the three instances', async () => {
    const first = Math.floor(Date.now() / 1000) + 1;
    // three ticks are complete once the fourth has a run: cron drops a run that would start > 250 ms late
    await until(async () => (await runs()).some((run) => run.tick >= first + 3), 8000);
    const recorded = await runs();
    const perTick = [first, first + 1, first + 2].map((tick) => recorded.filter((run) => run.tick === tick).length);
    // a tick every instance fired over 250 ms late (a busy machine) is skipped by cron itself: none ran it
    expect(perTick.every((count) => count <= 1)).toBe(true);
    expect(perTick).toContain(1);
  });

  it('claims the tick after a run that took a millisecond until just before the next one, and frees the key', async () => {
    const claimKey = tickClaimKey('ReportJob.run', ['report']);
    // the next run's claim, as its instance keeps it after the run
    const keptFor = await new Promise<number>((resolve) => {
      const offs = instances.map(({ app }) =>
        app.get(LockService).on('released', (event) => {
          if (event.key !== claimKey || event.keptFor === undefined) return;
          for (const off of offs) off();
          resolve(event.keptFor);
        }),
      );
    });
    // a run starts at its tick, or late by less than cron's 250 ms threshold plus its two acquisitions: its claim
    // stands past any instance that fires late in the tick, and ends 50 ms before the next tick
    expect(keptFor).toBeGreaterThan(500);
    expect(keptFor).toBeLessThanOrEqual(950);
    expect((await instances[0].app.get(LockService).inspect('report')).held).toBe(false);
  });
});
