import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { permitKeys } from '../../lib/stores/redis/permits/permit-keys.js';
import { channelListeners } from '../support/channel-listeners.js';
import { storedPermitState } from '../support/permit-state.js';
import { startChild } from '../support/child-process.js';
import { useProcessRoom } from '../support/process-room.js';
import { testRedisUrl } from '../support/stores.js';

const waitingProcess = fileURLToPath(new URL('./waiting-process.ts', import.meta.url));
const KEY = 'exports';
/** The waiters of the process that crashes: each has a place of its own in the key's line. */
const DEAD_WAITERS = 300;

describe('permit waiters of a process that was SIGKILLed while they waited', () => {
  const room = useProcessRoom();
  const { children } = room;

  /** Resolves once `check` holds, asking every few ms (for what only Redis shows). */
  async function until(check: () => Promise<boolean>, timeout = 20_000): Promise<void> {
    const deadline = performance.now() + timeout;
    while (!(await check())) {
      if (performance.now() > deadline) throw new Error(`condition not met within ${timeout} ms`);
      await sleep(5);
    }
  }

  const placesInLine = async () => (await storedPermitState(room.admin, room.prefix, KEY))?.places.length ?? 0;
  const listeners = () => channelListeners(room.admin, permitKeys(room.prefix, KEY).channel);

  it.each([
    ['a semaphore of limit 1', { limit: 1 }],
    ['a readers-writer key, all writers', { mode: 'write' }],
  ] as const)(
    'cost a live waiter on %s one hand-off window, not one per dead place: granted within 1 s of the release',
    async (_name, shape) => {
      const holder = await room.manager().acquire(KEY, { ...shape, ttl: '30s' });
      const crashing = startChild(waitingProcess, {
        REDIS_URL: testRedisUrl(),
        KEY_PREFIX: room.prefix,
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

      const live = room.manager();
      const asked = live.acquire(KEY, { ...shape, wait: '20s' });
      await until(async () => (await placesInLine()) === DEAD_WAITERS + 1 && (await listeners()) > 0);
      await holder.release();
      const released = performance.now();
      const lock = await asked;
      const served = performance.now() - released;

      // one hand-off window (20 ms) for the first dead place, the live process's look after it, and one request
      // whose script walks the 301 places: 20-60 ms, 138 ms on a machine with both cores busy; skipping the dead
      // places one window each would take 300 windows (6 s), so 1 s still tells the two apart
      expect(served).toBeLessThan(1000);
      expect(lock.isHeld).toBe(true);
      await lock.release();
    },
    60_000,
  );
});
