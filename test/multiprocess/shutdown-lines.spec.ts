import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockStoreError } from '../../lib/errors/lock-store.error.js';
import type { Lock } from '../../lib/core/lock.js';
import type { PermitShape } from '../../lib/interfaces/permit-store.interface.js';
import { permitKeys } from '../../lib/stores/redis/permits/permit-keys.js';
import { startChild } from '../support/child-process.js';
import { storedPermitState } from '../support/permit-state.js';
import { useProcessRoom } from '../support/process-room.js';
import { testRedisUrl } from '../support/stores.js';

const waitingApp = fileURLToPath(new URL('./waiting-app.ts', import.meta.url));
/** Local waiters for one key in the instance that shuts down. */
const WAITERS = 5;

/**
 * An instance that shuts down while several of its callers wait for one key held by another instance: its
 * place in the key's line and its request beside it (a mutex), or its waiters' places (permits), go with it.
 */
describe('a shutdown with several local waiters for one key held elsewhere', () => {
  const room = useProcessRoom();
  const { children } = room;

  /** Every key under the prefix, by SCAN, without the prefix. */
  async function keysLeft(): Promise<string[]> {
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await room.admin.scan(cursor, 'MATCH', `${room.prefix}*`, 'COUNT', 1000);
      keys.push(...batch.map((key) => key.slice(room.prefix.length)));
      cursor = next;
    } while (cursor !== '0');
    return keys.sort();
  }

  /** What the holder's own lease or permit keeps of `key` in Redis, and nothing of any waiter. */
  async function expectOnlyTheHolder(key: string, shape: PermitShape | undefined): Promise<void> {
    const names = permitKeys(room.prefix, key);
    const own = shape ? [names.lock, names.state] : [names.lock];
    expect(await keysLeft()).toEqual(own.map((name) => name.slice(room.prefix.length)).sort());
    if (shape) expect((await storedPermitState(room.admin, room.prefix, key))?.places).toEqual([]);
  }

  /** Resolves once `check` holds, asking every few ms (for what only Redis shows). */
  async function until(check: () => Promise<boolean>, timeout = 20_000): Promise<void> {
    const deadline = performance.now() + timeout;
    while (!(await check())) {
      if (performance.now() > deadline) throw new Error(`condition not met within ${timeout} ms`);
      await sleep(5);
    }
  }

  const shapes = [
    ['a mutex', undefined],
    ['a semaphore of limit 1', { limit: 1 }],
    ['a readers-writer key (writers)', { mode: 'write' }],
  ] as const;

  it.each(shapes)(
    `close() with ${WAITERS} local waiters for %s leaves no key of the instance`,
    async (_name, shape) => {
      const key = 'stock:s1';
      const holder: Lock = await room.manager().acquire(key, { ...shape, ttl: '30s' });
      const closing = room.manager();
      let contended = 0;
      closing.on('contended', () => contended++);
      const waiters = Array.from({ length: WAITERS }, () =>
        closing.acquire(key, { ...shape, wait: '20s' }).then(
          () => 'acquired',
          (error: unknown) => error,
        ),
      );
      await until(async () => contended === WAITERS);

      await closing.close();

      for (const outcome of await Promise.all(waiters)) expect(outcome).toBeInstanceOf(LockStoreError);
      await expectOnlyTheHolder(key, shape);
      await holder.release();
      expect(await keysLeft()).toEqual([]);
    },
  );

  it.each([
    ['a mutex', 'count', undefined],
    ['a semaphore permit', 'read', { limit: 1 }],
  ] as const)(
    `SIGTERM of a Nest app with ${WAITERS} requests waiting for %s leaves no key of the app`,
    async (_name, route, shape) => {
      const key = 'stock:s1';
      const holder: Lock = await room.manager().acquire(key, { ...shape, ttl: '30s' });
      const app = startChild(waitingApp, { REDIS_URL: testRedisUrl(), KEY_PREFIX: room.prefix });
      children.push(app);
      await app.waitFor('listening', 30_000);
      const url = /listening (\S+)/.exec(app.output())![1];
      const requests = Array.from({ length: WAITERS }, () =>
        fetch(`${url}/stock/s1/${route}`, { method: 'POST' }).then(
          (response) => response.status,
          // the server closed the connection before it answered
          () => 0,
        ),
      );
      const refusals = () =>
        app
          .output()
          .split('\n')
          .filter((line) => line === 'contended').length;
      await until(async () => refusals() === WAITERS);

      const exited = new Promise((resolve) => app.process.once('exit', resolve));
      app.process.kill('SIGTERM');
      await exited;

      for (const status of await Promise.all(requests)) expect([0, 503]).toContain(status);
      await expectOnlyTheHolder(key, shape);
      await holder.release();
      expect(await keysLeft()).toEqual([]);
    },
    60_000,
  );
});
