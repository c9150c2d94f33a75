import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { LockManager } from '../../lib/core/lock-manager.js';
import { permitKeys } from '../../lib/stores/redis/permits/permit-keys.js';
import { RedisLockStore } from '../../lib/stores/redis/redis.store.js';
import { channelListeners } from '../support/channel-listeners.js';
import { startChild, type ChildHandle } from '../support/child-process.js';
import { testRedisUrl, uniquePrefix } from '../support/stores.js';

const waitingProcess = fileURLToPath(new URL('./waiting-process.ts', import.meta.url));
const KEY = 'exports';
/** The waiters of the process that crashes: each has a place of its own in the key's line. */
const DEAD_WAITERS = 300;

describe('permit waiters of a process that was SIGKILLed while they waited', () => {
  let prefix: string;
  let admin: Redis;
  const managers: LockManager[] = [];
  const children: ChildHandle[] = [];

  beforeEach(() => {
    prefix = uniquePrefix();
    admin = new Redis(testRedisUrl());
  });

  afterEach(async () => {
    await Promise.all(children.splice(0).map((child) => child.kill()));
    await Promise.all(managers.splice(0).map((manager) => manager.close()));
    await admin.quit();
  });

  /** A manager on a store of its own: another process as far as the key's line can tell. */
  function manager(): LockManager {
    const store = new RedisLockStore({ client: new Redis(testRedisUrl()), keyPrefix: prefix, ownsClient: true });
    const created = new LockManager({ store });
    managers.push(created);
    return created;
  }

  /** Resolves once `check` holds, asking every few ms (for what only Redis shows). */
  async function until(check: () => Promise<boolean>, timeout = 20_000): Promise<void> {
    const deadline = performance.now() + timeout;
    while (!(await check())) {
      if (performance.now() > deadline) throw new Error(`condition not met within ${timeout} ms`);
      await sleep(5);
    }
  }

  const placesInLine = () => admin.zcard(permitKeys(prefix, KEY).line);
  const listeners = () => channelListeners(admin, permitKeys(prefix, KEY).channel);

  it.each([
    ['a semaphore of limit 1', { limit: 1 }],
    ['a readers-writer key, all writers', { mode: 'write' }],
  ] as const)(
    'cost a live waiter on %s one hand-off window: it is granted within 100 ms of the release',
    async (_name, shape) => {
      const holder = await manager().acquire(KEY, { ...shape, ttl: '30s' });
      const crashing = startChild(waitingProcess, {
        REDIS_URL: testRedisUrl(),
        KEY_PREFIX: prefix,
        KEY,
        SHAPE: JSON.stringify(shape),
        COUNT: String(DEAD_WAITERS),
        WAIT: '60000',
      });
      children.push(crashing);
      await crashing.waitFor('asked', 30_000);
      await until(async () => (await placesInLine()) === DEAD_WAITERS);
      await crashing.kill('SIGKILL');
      // its places stay in the line: nobody told Redis it died
      await until(async () => (await listeners()) === 0);

      const live = manager();
      const asked = live.acquire(KEY, { ...shape, wait: '20s' });
      await until(async () => (await placesInLine()) === DEAD_WAITERS + 1 && (await listeners()) > 0);
      await holder.release();
      const released = performance.now();
      const lock = await asked;
      const served = performance.now() - released;

      // the 100 ms cover one hand-off window (20 ms) for the first dead place, the live process's look after
      // it, and one request whose script walks the 301 places; skipping the dead places one window each
      // would take 300 windows
      expect(served).toBeLessThan(100);
      expect(lock.isHeld).toBe(true);
      await lock.release();
    },
    60_000,
  );
});
