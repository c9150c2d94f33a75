// One of the processes of processes.spec.ts: takes KEY SECTIONS times through a PostgresLockStore at
// POSTGRES_URL (KEY_PREFIX), holds it HOLD ms each time, and prints `enter <time> <fence>` and `exit <time>`
// with times in epoch ms to the microsecond, comparable across the processes of one machine. Prints `ready`
// once its store is checked (and listening), then starts on `go`.
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockManager } from '../../../lib/core/lock-manager.js';
import { PostgresLockStore } from '../../../lib/stores/postgres/postgres-lock-store.js';

const { POSTGRES_URL, KEY_PREFIX, KEY, SECTIONS, HOLD } = process.env as Record<string, string>;
const now = (): number => performance.timeOrigin + performance.now();

const store = new PostgresLockStore({ connectionString: POSTGRES_URL, keyPrefix: KEY_PREFIX });
await store.verify();
const locks = new LockManager({ store });
console.log('ready');
const lines = createInterface({ input: process.stdin });
await new Promise<void>((resolve) => lines.once('line', () => resolve()));
for (let i = 0; i < Number(SECTIONS); i++) {
  await locks.using(
    KEY,
    async (lock) => {
      console.log(`enter ${now()} ${lock.fence}`);
      await sleep(Number(HOLD));
      console.log(`exit ${now()}`);
    },
    { wait: 30_000, fencing: true, ttl: 5000 },
  );
}
await locks.close();
console.log('done');
process.exit(0);
