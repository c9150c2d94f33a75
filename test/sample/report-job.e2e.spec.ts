import { LockService } from '../../lib/index.js';
import { REPORT_RUNS } from '../../sample/report/report-runs.js';
import { STORAGE, type Storage } from '../../sample/storage/storage.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';
import { startSample, until, type RunningSample } from './start-sample.js';

describe('the @Cron report job guarded by @WithLock (skip, holdAtLeast) on three instances', () => {
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

  it('runs the report once per tick, on one of the three instances', async () => {
    const first = Math.floor(Date.now() / 1000) + 1;
    // three ticks are complete once the fourth has a run: cron drops a run that would start > 250 ms late
    await until(async () => (await runs()).some((run) => run.tick >= first + 3), 8000);
    const recorded = await runs();
    for (const tick of [first, first + 1, first + 2]) {
      expect(recorded.filter((run) => run.tick === tick)).toHaveLength(1);
    }
  });

  it('keeps the lock after a run that took a millisecond, for the rest of its 500 ms (holdAtLeast)', async () => {
    const seen = (await runs()).length;
    await until(async () => (await runs()).length > seen, 3000);
    const state = await instances[0].app.get(LockService).inspect('report');
    expect(state.held).toBe(true);
    expect(state.remainingTtl).toBeLessThanOrEqual(500);
  });
});
