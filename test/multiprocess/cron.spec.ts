import { Redis } from 'ioredis';
import { fileURLToPath } from 'node:url';
import { startChild, type ChildHandle } from '../support/child-process.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';
import { startEtcdCluster, type EtcdClusterHandle } from '../support/etcd-cluster.js';
import { tickTolerance } from '../../lib/schedule/tick-schedule.js';

const app = fileURLToPath(new URL('./cron-app.ts', import.meta.url));

/** What the instances ran: runs per tick, and each run as `ms since the first tick:instance` (for a failure). */
interface TickRuns {
  readonly perTick: number[];
  readonly runs: string[];
  /**
   * The fewest firings any instance's scheduler skipped: `cron` skips one that comes over its threshold (250 ms)
   * late, with a warning. A tick can run nowhere only when every instance skipped it.
   */
  readonly leastSkipped: number;
}

/** How often the scheduler of a child said it skipped a firing that came too late. */
function skippedFirings(child: ChildHandle): number {
  return child.errorOutput().split('Skipping execution').length - 1;
}

/**
 * What the lock promises a cron job: no tick runs twice, and every tick runs once unless every instance's
 * scheduler skipped it (a starved machine; no lock can run what the scheduler never fired).
 */
function expectOncePerTick({ perTick, runs, leastSkipped }: TickRuns): void {
  const ranNowhere = perTick.filter((count) => count === 0).length;
  expect({ twice: perTick.filter((count) => count > 1), runs }).toEqual({ twice: [], runs });
  expect({ ranNowhere, runs }).toEqual({ ranNowhere: Math.min(ranNowhere, leastSkipped), runs });
}

/**
 * Runs three instances of the cron app until `ticks` of its ticks (every `every` s) were recorded; returns runs
 * per tick. With `etcdHosts`, the instances lock in etcd. A run counts for the tick whose window it began in, as
 * the module claims it: from its slack before that tick (a run the scheduler fires a few ms early, or that
 * begins just before the tick, is that tick's).
 */
async function runInstances(locked: boolean, ticks: number, etcdHosts?: string[], every = 1): Promise<TickRuns> {
  const tolerance = tickTolerance(every * 1000);
  const prefix = uniquePrefix();
  const runsKey = `${prefix}runs`;
  const admin = new Redis(testRedisUrl());
  const children: ChildHandle[] = [];
  try {
    for (let i = 0; i < 3; i++) {
      children.push(
        startChild(app, {
          REDIS_URL: testRedisUrl(),
          KEY_PREFIX: prefix,
          RUNS_KEY: runsKey,
          INSTANCE: `i${i}`,
          LOCKED: locked ? '1' : '0',
          ...(etcdHosts ? { ETCD_HOSTS: etcdHosts.join(',') } : {}),
        }),
      );
    }
    await Promise.all(children.map((child) => child.waitFor('ready', 30_000)));
    // count only ticks that started after every instance was up, and wait one spare tick for the last
    const firstTick = (Math.floor(Date.now() / 1000 / every) + 1) * every;
    const lastTick = firstTick + (ticks - 1) * every;
    while (Math.floor(Date.now() / 1000) <= lastTick + 1) await new Promise((resolve) => setTimeout(resolve, 100));
    const runs = await admin.lrange(runsKey, 0, -1);
    const leastSkipped = Math.min(...children.map(skippedFirings));
    const perTick = new Map<number, number>();
    for (const run of runs) {
      const tick = Math.floor((Number(run.split(':')[0]) + tolerance) / 1000);
      perTick.set(tick, (perTick.get(tick) ?? 0) + 1);
    }
    return {
      perTick: Array.from({ length: ticks }, (_, i) => perTick.get(firstTick + i * every) ?? 0),
      runs: runs.map((run) => `${Number(run.split(':')[0]) - firstTick * 1000}:${run.split(':')[1]}`),
      leastSkipped,
    };
  } finally {
    await Promise.all(children.map((child) => child.kill('SIGTERM')));
    await admin.quit();
  }
}

describe('@Cron guarded by @WithLock across processes', () => {
  it('runs each tick exactly once across three instances sharing one Redis, over 10 ticks', async () => {
    expectOncePerTick(await runInstances(true, 10));
  }, 60_000);

  it('runs each tick on every instance without the lock (so the check above can fail)', async () => {
    const unlocked = await runInstances(false, 3);
    expect(unlocked.perTick).toEqual(Array(3).fill(3));
    expect(() => expectOncePerTick(unlocked)).toThrow();
  }, 60_000);
});

describe('@Cron guarded by @WithLock across processes, with locks in etcd', () => {
  let cluster: EtcdClusterHandle;

  beforeAll(async () => {
    cluster = await startEtcdCluster(3);
  }, 60_000);

  afterAll(() => cluster.stop());

  it('runs each tick exactly once across three instances sharing a 3-member etcd cluster, over 5 ticks', async () => {
    expectOncePerTick(await runInstances(true, 5, cluster.hosts, 4));
  }, 60_000);

  it('runs each tick on every instance without the lock (so the check above can fail)', async () => {
    const unlocked = await runInstances(false, 2, cluster.hosts, 4);
    expect(unlocked.perTick).toEqual(Array(2).fill(3));
    expect(() => expectOncePerTick(unlocked)).toThrow();
  }, 60_000);
});
