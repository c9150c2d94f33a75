import { Redis } from 'ioredis';
import { fileURLToPath } from 'node:url';
import { tickTolerance } from '../../lib/schedule/tick-schedule.js';
import { startChild, type ChildHandle } from '../support/child-process.js';
import { startEtcdCluster, type EtcdClusterHandle } from '../support/etcd-cluster.js';
import { startPostgresServer, type PostgresServerHandle } from '../support/postgres-server.js';
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

/** One recorded run: when the method started. */
interface Run {
  readonly startedAt: number;
}

/** The runs of each job of the app, the `@Cron` one and the `@Interval` one. */
interface Runs {
  readonly cron: Run[];
  readonly interval: Run[];
  /** The first tick after every instance was up, in seconds since the epoch. */
  readonly first: number;
}

/** Where the instances lock, and what they run. */
interface Setup {
  /** Lock in etcd instead of Redis. */
  readonly etcdHosts?: readonly string[];
  /** Lock in PostgreSQL instead of Redis. */
  readonly postgresUrl?: string;
  /** The jobs' period, in seconds. @default 1 */
  readonly every?: number;
  /** @default 'cron,interval' */
  readonly jobs?: string;
}

/**
 * Starts the instances, lets them run `ticks` ticks of their schedule after all of them are up (and one second
 * more, for the runs of the last to land), stops them, and returns the runs of each job.
 */
async function runInstances(ticks: number, setup: Setup = {}): Promise<Runs> {
  const every = setup.every ?? 1;
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
          EVERY: String(every),
          ...(setup.jobs ? { JOBS: setup.jobs } : {}),
          ...(setup.etcdHosts ? { ETCD_HOSTS: setup.etcdHosts.join(',') } : {}),
          ...(setup.postgresUrl ? { POSTGRES_URL: setup.postgresUrl } : {}),
        }),
      );
    });
    await Promise.all(children.map((child) => child.waitFor('ready', 40_000)));
    const first = (Math.floor(Date.now() / 1000 / every) + 1) * every;
    while (Date.now() < (first + ticks * every + 1) * 1000) await new Promise((resolve) => setTimeout(resolve, 100));
    const runsOf = async (job: string): Promise<Run[]> =>
      (await admin.lrange(`${runsKey}:${job}`, 0, -1)).map((entry) => {
        const [startedAt] = entry.split(':').map(Number);
        return { startedAt };
      });
    return { cron: await runsOf('cron'), interval: await runsOf('interval'), first };
  } finally {
    await Promise.all(children.map((child) => child.kill('SIGTERM')));
    await admin.quit();
  }
}

/**
 * How many of `runs` each of `ticks` ticks `every` seconds apart from `first` has, each run counted in the tick
 * `tickOf` gives it.
 */
function perTick(
  runs: readonly Run[],
  first: number,
  ticks: number,
  tickOf: (run: Run) => number,
  every = 1,
): number[] {
  const counts = new Map<number, number>();
  for (const run of runs) counts.set(tickOf(run), (counts.get(tickOf(run)) ?? 0) + 1);
  return Array.from({ length: ticks }, (_, i) => counts.get(first + i * every) ?? 0);
}

/**
 * Never two runs in a tick (the lock's promise, on any machine), and a run in every tick but at most one: a tick
 * passes without a run only when all four instances stall through its whole window together, which a CI
 * machine loaded on both cores can do once (seen: one tick of ten, both jobs); a late instance that loses its
 * ticks again and again still fails here.
 */
function expectOncePerTick(counts: readonly number[]): void {
  expect(counts.filter((count) => count > 1)).toEqual([]);
  expect(counts.filter((count) => count === 0).length).toBeLessThanOrEqual(1);
}

/**
 * The tick a run counts for: the window it started in, which begins `tolerance` ms before its tick (see
 * tick-schedule.ts). Not the tick its timer fired for: an instance that fires more than a period late (a loaded
 * machine on top of its delay) starts in the next window, and the claims, which can only see when a run
 * starts, rightly count it there, where it takes that tick's run.
 */
const startWindow =
  (every = 1) =>
  (run: Run): number =>
    Math.floor((run.startedAt + tickTolerance(every * 1000)) / 1000 / every) * every;

describe('@Cron and @Interval jobs guarded by @WithLock without holdAtLeast, on four instances of one Redis', () => {
  it.each([1, 2])(
    'runs each 1 ms job once per second over 10 seconds, however late the instances fire (round %i)',
    async () => {
      const { cron, interval, first } = await runInstances(10);
      expectOncePerTick(perTick(cron, first, 10, startWindow()));
      expectOncePerTick(perTick(interval, first, 10, startWindow()));
    },
    90_000,
  );
});

describe('a @Cron job guarded by @WithLock without holdAtLeast, on four instances of a 3-member etcd cluster', () => {
  let cluster: EtcdClusterHandle;

  beforeAll(async () => {
    cluster = await startEtcdCluster(3);
  }, 60_000);

  afterAll(() => cluster.stop());

  // etcd keeps a claim in whole seconds that surely end before the next tick: 2 s of a 4 s period
  it('runs each 4 s tick once over 5 ticks, however late the instances fire', async () => {
    const { cron, first } = await runInstances(5, { etcdHosts: cluster.hosts, every: 4, jobs: 'cron' });
    expectOncePerTick(perTick(cron, first, 5, startWindow(4), 4));
  }, 90_000);
});

describe('@Cron and @Interval jobs guarded by @WithLock without holdAtLeast, on four instances of one PostgreSQL', () => {
  let server: PostgresServerHandle;

  beforeAll(async () => {
    server = await startPostgresServer();
  }, 60_000);

  afterAll(() => server.destroy());

  it('runs each 1 ms job once per second over 10 seconds, however late the instances fire', async () => {
    const { cron, interval, first } = await runInstances(10, { postgresUrl: server.url });
    expectOncePerTick(perTick(cron, first, 10, startWindow()));
    expectOncePerTick(perTick(interval, first, 10, startWindow()));
  }, 90_000);
});
