import { Redis } from 'ioredis';
import { Mutex, TimeoutError } from 'redis-semaphore';
import { ALL_ROLES, retryingSession, type Library } from './contender.js';

/** redis-semaphore's Mutex with its defaults (lockTimeout 10 s, polls SET NX every 10 ms, refresh at 8 s). */
export const redisSemaphore: Library = {
  name: 'redis-semaphore',
  shared: false,
  roles: ALL_ROLES,
  kind: 'peer',
  waiting: 'defaults: polls SET NX every 10 ms (retryInterval), acquireTimeout 10 s',
  async open(url) {
    const client = new Redis(url);
    return retryingSession(
      (error) => error instanceof TimeoutError,
      async (key) => {
        const mutex = new Mutex(client, key);
        await mutex.acquire();
        return { release: () => mutex.release() };
      },
      async () => void (await client.quit()),
    );
  },
};
