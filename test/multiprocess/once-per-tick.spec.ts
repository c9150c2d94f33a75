import { Redis } from 'ioredis';
import { fileURLToPath } from 'node:url';
import { tickTolerance } from '../../lib/schedule/tick-schedule.js';
import { startChild, type ChildHandle } from '../support/child-process.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';

const app = fileURLToPath(new URL('./tick-app.ts', import.meta.url));

/** How one instance's timers fire: late by a delay in front of the lock, or by a blocked event loop. */
interface Instance {
  readonly delayMs?: number;
  readonly busyMs?: number;
}

/**
 * Four instances: one on time, one whose event loop is blocked for 150 ms just before each second (its timers
 * fire that late), and two with 350 ms and 650 ms of delay in front of the locked call.
 */
const INSTANCES: readonly Instance[] = [{}, { busyMs: 150 }, { delayMs: 350 }, { delayMs: 650 }];

/** One recorded run: when the method started, when its timer fired. */
interface Run {
  readonly startedAt: number;
  readonly firedAt: number;
}

/** The runs of each job of the app, the `@Cron` one and the `@Interval` one. */
interface Runs {
  readonly cron: Run[];
  readonly interval: Run[];
  /** The first whole second after every instance was up. */
  readonly first: number;
}

/**
 * Starts the instances on one Redis, lets them run until `seconds` whole seconds after all of them are up have
 * passed (and one more, for the runs of the last to land), stops them, and returns the runs of each job.
 */
async function runInstances(seconds: number): Promise<Runs> {
  const prefix = uniquePrefix();
  const runsKey = `${prefix}runs`;
  const admin = new Redis(testRedisUrl());
  const children: ChildHandle[] = [];
  try {
    INSTANCES.forEach((instance, index) => {
      children.push(
        startChild(app, {
          REDIS_URL: testRedisUrl(),
          KEY_PREFIX: prefix,
          RUNS_KEY: runsKey,
          INSTANCE: `i${index}`,
          DELAY_MS: String(instance.delayMs ?? 0),
          BUSY_MS: String(instance.busyMs ?? 0),
          // their intervals start at different moments of the second
          START_AFTER_MS: String(index * 230),
        }),
      );
    });
    await Promise.all(children.map((child) => child.waitFor('ready', 40_000)));
    const first = Math.floor(Date.now() / 1000) + 1;
    while (Date.now() < (first + seconds + 1) * 1000) await new Promise((resolve) => setTimeout(resolve, 100));
    const runsOf = async (job: string): Promise<Run[]> =>
      (await admin.lrange(`${runsKey}:${job}`, 0, -1)).map((entry) => {
        const [startedAt, firedAt] = entry.split(':').map(Number);
        return { startedAt, firedAt };
      });
    return { cron: await runsOf('cron'), interval: await runsOf('interval'), first };
  } finally {
    await Promise.all(children.map((child) => child.kill('SIGTERM')));
    await admin.quit();
  }
}

/** How many of `runs` each of `seconds` seconds from `first` has, each run counted in the second `secondOf` gives. */
function perSecond(runs: readonly Run[], first: number, seconds: number, secondOf: (run: Run) => number): number[] {
  const counts = new Map<number, number>();
  for (const run of runs) counts.set(secondOf(run), (counts.get(secondOf(run)) ?? 0) + 1);
  return Array.from({ length: seconds }, (_, i) => counts.get(first + i) ?? 0);
}

// a cron run belongs to the second its timer fired in (every instance fires in it, some late)
const cronTick = (run: Run): number => Math.floor(run.firedAt / 1000);
// an interval run belongs to the window of a whole second it started in, which begins `tolerance` ms early
const intervalWindow = (run: Run): number => Math.floor((run.startedAt + tickTolerance(1000)) / 1000);

describe('@Cron and @Interval jobs guarded by @WithLock without holdAtLeast, on four instances of one Redis', () => {
  it.each([1, 2])(
    'runs each 1 ms job once per second over 10 seconds, however late the instances fire (round %i)',
    async () => {
      const { cron, interval, first } = await runInstances(10);
      expect({
        cron: perSecond(cron, first, 10, cronTick),
        interval: perSecond(interval, first, 10, intervalWindow),
      }).toEqual({ cron: Array(10).fill(1), interval: Array(10).fill(1) });
    },
    90_000,
  );
});
