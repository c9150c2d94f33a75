// A process of processes.spec.ts that waits in KEY's line: a PostgresLockStore at POSTGRES_URL (KEY_PREFIX)
// prints `ready` once checked and listening; on `go` it acquires KEY (waiting up to 30 s, its backoff never
// shorter than 2 s, so that only a notice wakes it sooner) and prints `acquired <ms>`; on `release` it
// releases and prints `released <ms>` (ms of the machine's monotonic clock).
import { createInterface } from 'node:readline';
import { LockManager } from '../../../lib/core/lock-manager.js';
import { PostgresLockStore } from '../../../lib/stores/postgres/postgres-lock-store.js';

const { POSTGRES_URL, KEY_PREFIX, KEY } = process.env as Record<string, string>;
// CLOCK_MONOTONIC, in ms: one clock for every process of the machine, which a step of the wall clock does not
// move (performance.timeOrigin is the wall clock when each process started: a step of it between two
// processes' starts sets their times apart by the step, and sections look overlapped or spaced that were not)
const now = (): number => Number(process.hrtime.bigint()) / 1e6;

const store = new PostgresLockStore({ connectionString: POSTGRES_URL, keyPrefix: KEY_PREFIX });
await store.verify();
const locks = new LockManager({ store });
console.log('ready');
const lines = createInterface({ input: process.stdin });
const commands = lines[Symbol.asyncIterator]();
await commands.next();
const lock = await locks.acquire(KEY, {
  wait: 30_000,
  ttl: 20_000,
  retry: { minDelay: 4000, maxDelay: 8000 },
});
console.log(`acquired ${now()}`);
await commands.next();
await lock.release();
console.log(`released ${now()}`);
await locks.close();
process.exit(0);
