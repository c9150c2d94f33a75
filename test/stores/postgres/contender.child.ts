// One of the processes of processes.spec.ts: takes KEY SECTIONS times through a PostgresLockStore at
// POSTGRES_URL (KEY_PREFIX), holds it HOLD ms each time, and prints `enter <time> <fence>` and `exit <time>`
// with times in ms of the machine's monotonic clock, comparable across its processes. Inside each
// section it writes its fence to the row RESOURCE of the table `fenced_resource` (the spec makes it), which refuses a fence not
// above the last one written (a stale writer), and prints `stale <fence>` when refused. Prints `ready` once
// its store is checked (and listening), then starts on `go`; at the end `asks <n>`, the acquire statements it
// sent, and `done`. RETRY_MIN_DELAY (ms), when set, lengthens the waiters' backoff so that notices, not
// timers, wake them.
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { LockManager } from '../../../lib/core/lock-manager.js';
import { PostgresLockStore } from '../../../lib/stores/postgres/postgres-lock-store.js';

const { POSTGRES_URL, KEY_PREFIX, KEY, SECTIONS, HOLD, RESOURCE, RETRY_MIN_DELAY } = process.env as Record<
  string,
  string
>;
const minDelay = RETRY_MIN_DELAY ? Number(RETRY_MIN_DELAY) : undefined;
// CLOCK_MONOTONIC, in ms: one clock for every process of the machine, which a step of the wall clock does not
// move (performance.timeOrigin is the wall clock when each process started: a step of it between two
// processes' starts sets their times apart by the step, and sections look overlapped or spaced that were not)
const now = (): number => Number(process.hrtime.bigint()) / 1e6;

const store = new PostgresLockStore({ connectionString: POSTGRES_URL, keyPrefix: KEY_PREFIX });
// each acquire is one statement: counted here, as the server would count them
let asks = 0;
const acquire = store.acquire.bind(store);
store.acquire = (request) => {
  asks++;
  return acquire(request);
};
await store.verify();
const resource = new pg.Client({ connectionString: POSTGRES_URL });
await resource.connect();
const locks = new LockManager({ store });
console.log('ready');
const lines = createInterface({ input: process.stdin });
await new Promise<void>((resolve) => lines.once('line', () => resolve()));
for (let i = 0; i < Number(SECTIONS); i++) {
  await locks.using(
    KEY,
    async (lock) => {
      console.log(`enter ${now()} ${lock.fence}`);
      const { rowCount } = await resource.query(
        `INSERT INTO fenced_resource AS r (id, fence) VALUES ($1, $2)
         ON CONFLICT (id) DO UPDATE SET fence = excluded.fence WHERE r.fence < excluded.fence`,
        [RESOURCE ?? KEY, lock.fence],
      );
      if (rowCount !== 1) console.log(`stale ${lock.fence}`);
      await sleep(Number(HOLD));
      console.log(`exit ${now()}`);
    },
    {
      wait: 30_000,
      fencing: true,
      ttl: 5000,
      ...(minDelay === undefined ? {} : { retry: { minDelay, maxDelay: 2 * minDelay } }),
    },
  );
}
await locks.close();
await resource.end();
console.log(`asks ${asks}`);
console.log('done');
process.exit(0);
